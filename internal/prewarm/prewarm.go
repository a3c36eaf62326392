// Package prewarm keeps instances started ahead of their calls: at most one
// per tool, at most a budget in all. Every call still gets a fresh
// instance; it just finds it already past its start-up, which for a Go
// guest is most of a call's cost. Which tools to prepare, and when, is the
// caller's decision; the pool only keeps what it is given, discards what it
// must, and remembers the tools whose guests cannot be prepared (they do
// not wait for stdin) so that they are not tried again.
package prewarm

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// Pool holds prepared instances.
type Pool struct {
	max    int
	log    *slog.Logger
	served func(*registry.Tool) bool

	mu    sync.Mutex
	ready map[*registry.Tool]*sandbox.Prepared
	order []*registry.Tool // least recently prepared first
	cold  map[*registry.Tool]bool

	closed bool
	busy   sync.WaitGroup // preparations and discards under way
}

// New returns a pool of at most max instances (0: the pool prepares
// nothing). served says whether a tool is still in service: an instance
// prepared for one a reload replaced meanwhile is not kept.
func New(max int, log *slog.Logger, served func(*registry.Tool) bool) *Pool {
	return &Pool{max: max, log: log, served: served, ready: map[*registry.Tool]*sandbox.Prepared{}, cold: map[*registry.Tool]bool{}}
}

// Take returns t's prepared instance, if there is one, and forgets it. It
// is the caller's to Start or Discard, with the hold on t's module that
// came with it: release that once the run ends.
func (p *Pool) Take(t *registry.Tool) *sandbox.Prepared {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst := p.ready[t]
	if inst != nil {
		delete(p.ready, t)
		p.order = slices.DeleteFunc(p.order, func(x *registry.Tool) bool { return x == t })
	}
	return inst
}

// Wanted reports whether Prepare would start an instance for t: the pool
// prepares at all, is open, has none for t, and t's guest can be prepared.
func (p *Pool) Wanted(t *registry.Tool) bool {
	if p.max <= 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && !p.cold[t] && p.ready[t] == nil
}

// Room reports whether the budget has room for another instance.
func (p *Pool) Room() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && len(p.order) < p.max
}

// Prepare starts an instance of t with prog and r and keeps it for t's
// next call; it returns once the guest waits for its arguments, or gives
// up. The caller holds a run slot meanwhile (preparing runs the guest's
// start-up), and releases it after. With evict, a full budget makes room
// by discarding the instance prepared longest ago; without, the new one is
// discarded instead. It reports whether the instance was kept.
func (p *Pool) Prepare(t *registry.Tool, prog *sandbox.Compiled, r sandbox.Run, evict bool) bool {
	if p.max <= 0 {
		return false
	}
	p.mu.Lock()
	skip := p.closed || p.cold[t] || p.ready[t] != nil
	if !skip {
		p.busy.Add(1) // under the lock, so that Close waits for it
	}
	p.mu.Unlock()
	if skip {
		return false
	}
	defer p.busy.Done()
	if !t.Module.Acquire() {
		return false
	}
	inst := prog.Prepare(context.Background(), r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if inst == nil {
		p.log.Debug("tool not prepared ahead: its guest does not wait for stdin, or the engine cannot start it before its arguments", "tool", t.Spec.Name)
		p.cold[t] = true
		t.Module.Release()
		return false
	}
	if p.closed || !p.served(t) || p.ready[t] != nil || !evict && len(p.order) >= p.max {
		p.discardLocked(t, inst)
		return false
	}
	p.ready[t] = inst
	p.order = append(p.order, t)
	p.log.Debug("instance prepared", "tool", t.Spec.Name)
	for len(p.order) > p.max {
		old := p.order[0]
		p.order = p.order[1:]
		p.discardLocked(old, p.ready[old])
		delete(p.ready, old)
	}
	return true
}

// Forget discards the instances of the given modules, which a reload
// retired, so that their code can be freed, and forgets that their tools
// could not be prepared.
func (p *Pool) Forget(modules []*registry.Module) {
	p.forget(func(t *registry.Tool) bool { return slices.Contains(modules, t.Module) })
}

// ForgetAll discards every instance: what they were prepared with (the
// policy's mounts and environment) no longer holds.
func (p *Pool) ForgetAll() { p.forget(func(*registry.Tool) bool { return true }) }

func (p *Pool) forget(gone func(*registry.Tool) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, inst := range p.ready {
		if gone(t) {
			p.discardLocked(t, inst)
			delete(p.ready, t)
			p.order = slices.DeleteFunc(p.order, func(x *registry.Tool) bool { return x == t })
		}
	}
	for t := range p.cold {
		if gone(t) {
			delete(p.cold, t)
		}
	}
}

// discardLocked ends an instance in the background; p.mu is held.
func (p *Pool) discardLocked(t *registry.Tool, inst *sandbox.Prepared) {
	p.busy.Add(1)
	go func() {
		defer p.busy.Done()
		inst.Discard()
		t.Module.Release()
	}()
}

// Close discards every instance and waits until none is left starting or
// ending, so that the engine can then be closed under none.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	for t, inst := range p.ready {
		p.discardLocked(t, inst)
	}
	p.ready, p.order = map[*registry.Tool]*sandbox.Prepared{}, nil
	p.mu.Unlock()
	p.busy.Wait()
}

// Ready reports whether an instance is prepared for t.
func (p *Pool) Ready(t *registry.Tool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready[t] != nil
}
