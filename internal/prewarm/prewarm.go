// Package prewarm keeps instances started ahead of their calls: at most one
// per tool, at most a budget in all. Every call still gets a fresh
// instance; it just finds it already past its start-up, which for a Go
// guest is most of a call's cost. Which tools to prepare, and when, is the
// caller's decision; the pool only keeps what it is given, discards what it
// must, and remembers the tools whose guests cannot be prepared (they do
// not wait for stdin) so that they are not tried again.
//
// A prepared instance holds the memory its guest's start-up took, up to
// its memory limit, for as long as it waits. So the budget bounds that
// memory as well as the instances, and an instance waits at most Idle: one
// no call took by then is discarded and its memory given back to the
// system, so that a server between bursts of calls holds none.
package prewarm

import (
	"context"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// Idle is how long a prepared instance waits for its call before it is
// discarded. An agent calls a tool in bursts, seconds apart; a tool not
// called for a minute starts cold on its next call, and is prepared again
// after it.
const Idle = time.Minute

// giveBackDelay is how long after an instance expires the memory it held
// is given back to the system, with that of every instance that expires
// meanwhile: instances prepared together expire together, and each
// give-back is a full garbage collection, so there is at most one per
// giveBackDelay, whatever the tools do.
const giveBackDelay = 5 * time.Second

// Pool holds prepared instances.
type Pool struct {
	max    int
	memory int64 // what the instances may hold in all, in bytes
	log    *slog.Logger
	served func(*registry.Tool) bool
	// after runs f once d has passed, unless stop is called first:
	// time.AfterFunc, which tests replace.
	after func(d time.Duration, f func()) (stop func() bool)
	// prepare starts an instance: Compiled.Prepare, which tests replace.
	prepare func(*sandbox.Compiled, sandbox.Run) *sandbox.Prepared
	// awaiting, if set, is called as Await begins to wait (for tests).
	awaiting func()
	// giveBack returns freed memory to the system: debug.FreeOSMemory,
	// which tests replace. On wazero a guest's memory is Go's heap, which
	// Go collects only once the heap has grown by as much again as it
	// held, or two minutes on, and then returns to the system slowly.
	giveBack func()

	mu    sync.Mutex
	ready map[*registry.Tool]*prepared
	order []*registry.Tool // least recently prepared first
	held  int64            // what the instances in ready hold
	cold  map[*registry.Tool]bool
	// preparing holds, for each tool whose instance is being prepared, a
	// channel closed when the preparation ends; warm, the tools whose
	// guests have been prepared, whose preparations are worth waiting for.
	preparing map[*registry.Tool]chan struct{}
	warm      map[*registry.Tool]bool
	// giving is set while a give-back is due, and stopGiving cancels it.
	giving     bool
	stopGiving func() bool

	closed bool
	busy   sync.WaitGroup // preparations and discards under way
}

// prepared is an instance the pool keeps, and the timer that discards it
// once it has waited Idle.
type prepared struct {
	inst *sandbox.Prepared
	stop func() bool
}

// New returns a pool of at most max instances (0: the pool prepares
// nothing) holding at most memory bytes in all (sandbox.Prepared.Memory).
// served says whether a tool is still in service: an instance prepared for
// one a reload replaced meanwhile is not kept.
func New(max int, memory int64, log *slog.Logger, served func(*registry.Tool) bool) *Pool {
	return &Pool{max: max, memory: memory, log: log, served: served,
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop },
		prepare: func(prog *sandbox.Compiled, r sandbox.Run) *sandbox.Prepared {
			return prog.Prepare(context.Background(), r)
		},
		giveBack:  debug.FreeOSMemory,
		ready:     map[*registry.Tool]*prepared{},
		cold:      map[*registry.Tool]bool{},
		preparing: map[*registry.Tool]chan struct{}{},
		warm:      map[*registry.Tool]bool{}}
}

// Take returns t's prepared instance, if there is one, and forgets it. It
// is the caller's to Start or Discard, with the hold on t's module that
// came with it: release that once the run ends.
func (p *Pool) Take(t *registry.Tool) *sandbox.Prepared {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.removeLocked(t)
	if e == nil {
		return nil
	}
	return e.inst
}

// Await is Take, except that when t's next instance is being prepared (as
// a call's refill prepares it) and t's guest has been prepared before, it
// waits for that preparation, until ctx ends. The preparation started
// before the call came, so it is ahead of the cold start the call would
// make instead: waiting is never the slower way, and back-to-back calls
// of one tool each find an instance. A guest never prepared before might
// not wait for stdin and run whole while it is prepared, so it is not
// waited for.
func (p *Pool) Await(ctx context.Context, t *registry.Tool) *sandbox.Prepared {
	p.mu.Lock()
	ch := p.preparing[t]
	if p.ready[t] != nil || ch == nil || !p.warm[t] {
		p.mu.Unlock()
		return p.Take(t)
	}
	p.mu.Unlock()
	if p.awaiting != nil {
		p.awaiting()
	}
	select {
	case <-ch:
		return p.Take(t)
	case <-ctx.Done():
		return nil
	}
}

// Wanted reports whether Prepare would start an instance for t, or wait
// for the one being prepared: the pool prepares at all, is open, has none
// for t, and t's guest can be prepared.
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
	return !p.closed && len(p.order) < p.max && p.held < p.memory
}

// Prepare starts an instance of t with prog and r and keeps it for t's
// next call; it returns once the guest waits for its arguments, or gives
// up. The caller holds a run slot meanwhile (preparing runs the guest's
// start-up), and releases it after. With evict, a full budget makes room
// by discarding the instances prepared longest ago; without, the new one
// is discarded instead. It reports whether the instance was kept. While
// t's instance is being prepared already, it waits for that preparation
// instead, and reports whether it kept one.
func (p *Pool) Prepare(t *registry.Tool, prog *sandbox.Compiled, r sandbox.Run, evict bool) bool {
	if p.max <= 0 {
		return false
	}
	p.mu.Lock()
	if ch := p.preparing[t]; ch != nil {
		// One instance of a tool is prepared at a time: this one is
		// that one's outcome.
		p.mu.Unlock()
		<-ch
		return p.Ready(t)
	}
	skip := p.closed || p.cold[t] || p.ready[t] != nil
	ch := make(chan struct{})
	if !skip {
		p.busy.Add(1) // under the lock, so that Close waits for it
		p.preparing[t] = ch
	}
	p.mu.Unlock()
	if skip {
		return false
	}
	defer p.busy.Done()
	var inst *sandbox.Prepared
	acquired := t.Module.Acquire()
	if acquired {
		inst = p.prepare(prog, r)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// After the instance is kept or not, while p.mu is still held.
	defer func() {
		delete(p.preparing, t)
		close(ch)
	}()
	if !acquired {
		return false // the module was freed meanwhile
	}
	if inst == nil {
		p.log.Debug("tool not prepared ahead: its guest does not wait for stdin, or the engine cannot start it before its arguments", "tool", t.Spec.Name)
		p.cold[t] = true
		t.Module.Release()
		return false
	}
	size := inst.Memory()
	if size > p.memory {
		// Its start-up is what it is: it will not fit next time either.
		p.log.Debug("tool not prepared ahead: its instance holds more memory than all prepared instances may", "tool", t.Spec.Name, "holds", size, "budget", p.memory)
		p.cold[t] = true
		p.discardLocked(t, inst)
		return false
	}
	if p.closed || !p.served(t) || p.ready[t] != nil || !evict && (len(p.order) >= p.max || p.held+size > p.memory) {
		p.discardLocked(t, inst)
		return false
	}
	p.warm[t] = true
	e := &prepared{inst: inst}
	e.stop = p.after(Idle, func() { p.expire(t, e) })
	p.ready[t] = e
	p.order = append(p.order, t)
	p.held += size
	p.log.Debug("instance prepared", "tool", t.Spec.Name, "holds", size)
	for len(p.order) > p.max || p.held > p.memory {
		p.dropLocked(p.order[0])
	}
	return true
}

// expire discards e, t's instance, if no call has taken it meanwhile, and
// has the memory it held given back to the system.
func (p *Pool) expire(t *registry.Tool, e *prepared) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ready[t] != e {
		return
	}
	p.log.Debug("prepared instance discarded: no call took it", "tool", t.Spec.Name, "idle", Idle)
	p.dropLocked(t)
	if !p.giving && !p.closed {
		p.giving = true
		p.stopGiving = p.after(giveBackDelay, p.giveBackNow)
	}
}

// giveBackNow gives the memory freed since the last give-back to the
// system. An expiry while it runs has the next one due giveBackDelay on.
func (p *Pool) giveBackNow() {
	p.mu.Lock()
	p.giving = false
	p.mu.Unlock()
	p.giveBack()
}

// removeLocked forgets t's instance, which the caller takes or discards,
// and stops its timer; it returns nil if there is none. p.mu is held.
func (p *Pool) removeLocked(t *registry.Tool) *prepared {
	e := p.ready[t]
	if e == nil {
		return nil
	}
	e.stop()
	delete(p.ready, t)
	p.order = slices.DeleteFunc(p.order, func(x *registry.Tool) bool { return x == t })
	p.held -= e.inst.Memory()
	return e
}

// dropLocked discards t's instance and forgets it; p.mu is held.
func (p *Pool) dropLocked(t *registry.Tool) {
	p.discardLocked(t, p.removeLocked(t).inst)
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
	for t := range p.ready {
		if gone(t) {
			p.dropLocked(t)
		}
	}
	for t := range p.cold {
		if gone(t) {
			delete(p.cold, t)
		}
	}
	for t := range p.warm {
		if gone(t) {
			delete(p.warm, t)
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
	for t := range p.ready {
		p.dropLocked(t)
	}
	if p.giving {
		p.stopGiving()
		p.giving = false
	}
	p.mu.Unlock()
	p.busy.Wait()
}

// Ready reports whether an instance is prepared for t.
func (p *Pool) Ready(t *registry.Tool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready[t] != nil
}
