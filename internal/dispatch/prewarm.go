package dispatch

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// prewarm keeps one instance started ahead of its call for each recently
// called tool, and, after a start or a reload, for the largest tools no
// call has reached yet (ahead). Every call still gets a fresh instance; it
// just finds it already past its start-up, which for a Go guest is most of
// a call's cost. The next instance is prepared while the call that used
// the last one still holds its run slot, so preparing never exceeds the
// concurrency bound, and a tool whose guest never waits for stdin (it
// ignores its arguments) is not prepared again.
type prewarm struct {
	h     *Host
	max   int
	mu    sync.Mutex
	ready map[*registry.Tool]*sandbox.Prepared
	order []*registry.Tool // least recently prepared first
	cold  map[*registry.Tool]bool

	closed bool
	busy   sync.WaitGroup // refills and discards under way
}

func newPrewarm(h *Host, max int) *prewarm {
	return &prewarm{h: h, max: max, ready: map[*registry.Tool]*sandbox.Prepared{}, cold: map[*registry.Tool]bool{}}
}

// take returns t's prepared instance, if there is one. It is the caller's,
// with the hold on t's module that came with it: Release it after the run.
func (p *prewarm) take(t *registry.Tool) *sandbox.Prepared {
	p.mu.Lock()
	defer p.mu.Unlock()
	inst := p.ready[t]
	if inst != nil {
		delete(p.ready, t)
		p.order = slices.DeleteFunc(p.order, func(x *registry.Tool) bool { return x == t })
	}
	return inst
}

// wanted reports whether refill would prepare an instance for t.
func (p *prewarm) wanted(t *registry.Tool) bool {
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
func (p *prewarm) refill(t *registry.Tool, prog *sandbox.Compiled, r sandbox.Run) {
	p.prepare(t, prog, r, true)
}

// prepare starts an instance of t and keeps it for t's next call. With
// evict, a full budget makes room by discarding the instance prepared
// longest ago; without, the new instance is the one discarded. It reports
// whether the instance was kept.
func (p *prewarm) prepare(t *registry.Tool, prog *sandbox.Compiled, r sandbox.Run, evict bool) bool {
	if p.max <= 0 {
		return false
	}
	p.mu.Lock()
	skip := p.closed || p.cold[t] || p.ready[t] != nil
	if !skip {
		p.busy.Add(1)
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
		p.h.log.Debug("tool not prepared ahead: its guest does not wait for stdin, or the engine cannot start it before its arguments", "tool", t.Spec.Name)
		p.cold[t] = true
		t.Module.Release()
		return false
	}
	// Kept only for a tool still served: a reload may have replaced it
	// while it was prepared, and forget has then come and gone.
	served, _ := p.h.catalog.Load().Lookup(t.Spec.Name)
	if p.closed || served != t || p.ready[t] != nil || !evict && len(p.order) >= p.max {
		p.discardLocked(t, inst)
		return false
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
	return true
}

// ahead prepares instances for tools that no call has prepared yet, once
// the warm-up has compiled cat: so that the first call after a start or a
// reload finds one too. It tries at most as many tools as the budget
// holds, fills only the room left in it, and never takes an instance from
// a tool a call has prepared. Its order is the largest module first,
// because a module's size is a fair guide to what its start-up costs: a
// Go guest, which starts a runtime in every instance, is megabytes; a C,
// Rust or WAT guest, which starts in microseconds, is kilobytes. Ties go
// by file, then tool name.
//
// Calls come first. Each preparation holds a run slot, taken only while
// one is free and no call waits for one; otherwise the pass ends, and the
// calls that run prepare their own next instances. So a call waits for
// the warm-up at most one guest's start-up, as it may for a refill. A
// tool granted a writable directory is left for its first call:
// preparing runs the guest's start-up, and until a call comes no one has
// asked for anything to be written. (Nothing else a prepared guest does
// reaches outside it: its output is discarded and it has no HTTP client
// until its call.)
func (p *prewarm) ahead(ctx context.Context, cat *registry.Catalog) int {
	if p.max <= 0 {
		return 0
	}
	tools := slices.Clone(cat.Tools) // sorted by name
	slices.SortStableFunc(tools, func(a, b *registry.Tool) int {
		return cmp.Or(cmp.Compare(b.Module.Size, a.Module.Size), strings.Compare(a.Module.Path, b.Module.Path))
	})
	prepared, tried := 0, 0
	for _, t := range tools {
		if ctx.Err() != nil || !p.room() || tried == p.max {
			break
		}
		if !p.wanted(t) {
			continue
		}
		prog, err := t.Module.Compiled(ctx)
		if err != nil {
			continue
		}
		r, _ := p.h.runFor(t)
		if slices.ContainsFunc(r.Mounts, func(m sandbox.Mount) bool { return m.Write }) {
			continue
		}
		release, ok := p.h.tryAcquire()
		if !ok {
			break
		}
		if p.h.waiting.Load() > 0 {
			release()
			break
		}
		tried++
		p.h.log.Debug("preparing an instance ahead", "tool", t.Spec.Name)
		if p.prepare(t, prog, r, false) {
			prepared++
		}
		release()
	}
	return prepared
}

// room reports whether the budget has room for another instance.
func (p *prewarm) room() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed && len(p.order) < p.max
}

// forget discards the instances of modules a reload retired, so that their
// code can be freed.
func (p *prewarm) forget(modules []*registry.Module) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, inst := range p.ready {
		if slices.Contains(modules, t.Module) {
			p.discardLocked(t, inst)
			delete(p.ready, t)
			p.order = slices.DeleteFunc(p.order, func(x *registry.Tool) bool { return x == t })
		}
	}
	for t := range p.cold {
		if slices.Contains(modules, t.Module) {
			delete(p.cold, t)
		}
	}
}

// discardLocked ends an instance in the background; p.mu is held.
func (p *prewarm) discardLocked(t *registry.Tool, inst *sandbox.Prepared) {
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
	p.ready, p.order = map[*registry.Tool]*sandbox.Prepared{}, nil
	p.mu.Unlock()
	p.busy.Wait()
}
