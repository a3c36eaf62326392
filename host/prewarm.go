package host

import (
	"context"
	"slices"
	"sync"

	"github.com/wasmcp/wasmcp/host/catalog"
	"github.com/wasmcp/wasmcp/host/sandbox"
)

// prewarm keeps one instance started ahead of its call for each recently
// called tool. Every call still gets a fresh instance; it just finds it
// already past its start-up, which for a Go guest is most of a call's
// cost. The next instance is prepared while the call that used the last
// one still holds its run slot, so preparing never exceeds the
// concurrency bound, and a tool whose guest never waits for stdin (it
// ignores its arguments) is not prepared again.
type prewarm struct {
	h     *Host
	max   int
	mu    sync.Mutex
	ready map[*catalog.Tool]*sandbox.Prepared
	order []*catalog.Tool // least recently prepared first
	cold  map[*catalog.Tool]bool

	closed bool
	busy   sync.WaitGroup // refills and discards under way
}

func newPrewarm(h *Host, max int) *prewarm {
	return &prewarm{h: h, max: max, ready: map[*catalog.Tool]*sandbox.Prepared{}, cold: map[*catalog.Tool]bool{}}
}

// take returns t's prepared instance, if there is one. It is the caller's,
// with the hold on t's module that came with it: Release it after the run.
func (p *prewarm) take(t *catalog.Tool) *sandbox.Prepared {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst := p.ready[t]
	if inst != nil {
		delete(p.ready, t)
		p.order = slices.DeleteFunc(p.order, func(x *catalog.Tool) bool { return x == t })
	}
	return inst
}

// wanted reports whether refill would prepare an instance for t.
func (p *prewarm) wanted(t *catalog.Tool) bool {
	if p.max <= 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && !p.cold[t] && p.ready[t] == nil
}

// refill prepares t's next instance, unless prewarming is off, t's guest
// cannot be prepared, or one is ready. At the limit, the tool prepared
// longest ago gives up its instance.
func (p *prewarm) refill(t *catalog.Tool, prog *sandbox.Compiled, r sandbox.Run) {
	if p.max <= 0 {
		return
	}
	p.mu.Lock()
	skip := p.closed || p.cold[t] || p.ready[t] != nil
	if !skip {
		p.busy.Add(1)
	}
	p.mu.Unlock()
	if skip {
		return
	}
	defer p.busy.Done()
	if !t.Module.Acquire() {
		return
	}
	inst := prog.Prepare(context.Background(), r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if inst != nil && p.closed {
		p.discardLocked(t, inst)
		return
	}
	if inst == nil {
		p.h.log.Debug("tool not prepared ahead: its guest does not wait for stdin", "tool", t.Spec.Name)
		p.cold[t] = true
		t.Module.Release()
		return
	}
	if p.ready[t] != nil { // a concurrent call prepared one first
		p.discardLocked(t, inst)
		return
	}
	p.ready[t] = inst
	p.order = append(p.order, t)
	p.h.log.Debug("instance prepared", "tool", t.Spec.Name)
	for len(p.order) > p.max {
		old := p.order[0]
		p.order = p.order[1:]
		p.discardLocked(old, p.ready[old])
		delete(p.ready, old)
	}
}

// forget discards the instances of modules a reload retired, so that their
// code can be freed.
func (p *prewarm) forget(modules []*catalog.Module) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, inst := range p.ready {
		if slices.Contains(modules, t.Module) {
			p.discardLocked(t, inst)
			delete(p.ready, t)
			p.order = slices.DeleteFunc(p.order, func(x *catalog.Tool) bool { return x == t })
		}
	}
	for t := range p.cold {
		if slices.Contains(modules, t.Module) {
			delete(p.cold, t)
		}
	}
}

// discardLocked ends an instance in the background; p.mu is held.
func (p *prewarm) discardLocked(t *catalog.Tool, inst *sandbox.Prepared) {
	p.busy.Add(1)
	go func() {
		defer p.busy.Done()
		inst.Discard()
		t.Module.Release()
	}()
}

// close discards every prepared instance and waits until none is left
// starting or ending, so that the engine can then be closed under none.
func (p *prewarm) close() {
	p.mu.Lock()
	p.closed = true
	for t, inst := range p.ready {
		p.discardLocked(t, inst)
	}
	p.ready, p.order = map[*catalog.Tool]*sandbox.Prepared{}, nil
	p.mu.Unlock()
	p.busy.Wait()
}
