package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"
)

// instance is one guest, started. Its run ends when _start returns, or when
// its context is cancelled with a cause that says why.
type instance struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	lim    Limits
	// reserve is the part of lim.Memory that the instance's tables and
	// globals take (Compiled.reserve).
	reserve uint64
	mem     memoryUse // set by the backend's start
	state   *runState
	stdout  *cappedBuffer
	stderr  *cappedBuffer
	done    chan ending // how _start ended
	// plan is what the backend runs; call is the guestIO of its call,
	// which the state holds from the start for a command, and from
	// beginCall for a reactor that starts up first.
	plan plan
	call guestIO
	// asker is the call's Asker, which the state has once the call
	// begins, as it has call.
	asker Asker
	// startup collects what a reactor's start-up writes to stderr, for
	// the operator's log.
	startup *cappedBuffer
	log     *slog.Logger
	// release lets the engine's Close go on once the guest has ended.
	release func()
	// For a plan that holds: reached is closed when the guest waits
	// before its call, and hold when the call is given.
	reached, hold chan struct{}
}

// launch sets up the instance's limits and output, and has the backend
// start the guest running pl (nil: planFor's). The time limit is not
// armed: Run arms it at once, Prepare when the call comes.
func (c *Compiled) launch(r Run, stdin io.Reader, pl *plan) (*instance, *Failure) {
	if need := c.minPages*pageSize + c.reserve; need > uint64(r.Limits.Memory) {
		detail := fmt.Sprintf("the module needs %s of memory to start; the limit is %s", bytesText(need), bytesText(uint64(r.Limits.Memory)))
		if c.reserve >= pageSize {
			detail = fmt.Sprintf("the module needs %s of memory to start (%s of it for its tables and globals); the limit is %s", bytesText(need), bytesText(c.reserve), bytesText(uint64(r.Limits.Memory)))
		}
		return nil, &Failure{Kind: MemoryLimit, Detail: detail}
	}
	if pl == nil {
		p, f := c.planFor(r)
		if f != nil {
			return nil, f
		}
		pl = &p
	}
	if pl.from != nil {
		// The backend has made what it needs of the snapshot by the time
		// start returns.
		defer pl.from.inUse.RUnlock()
	}
	release, f := c.engine.admit()
	if f != nil {
		return nil, f
	}
	lim := r.Limits
	// What the instance holds outside linear memory comes out of the
	// limit: linear memory may have the rest. Failures still quote the
	// whole limit, which is the one the operator set.
	r.Limits.Memory -= int64(c.reserve)
	ctx, cancel := context.WithCancelCause(context.Background())
	unwatch := context.AfterFunc(c.engine.stopping, func() { cancel(ErrEngineClosed) })
	in := &instance{
		ctx: ctx, cancel: cancel, lim: lim, reserve: c.reserve,
		state:   &runState{reporter: r.Reporter, lastProgress: math.Inf(-1), http: r.HTTP, maxAnswer: lim.Memory, cancel: cancel},
		asker:   r.Asker,
		done:    make(chan ending, 1),
		release: func() { unwatch(); release() },
	}
	in.stdout = &cappedBuffer{limit: lim.Output, onFull: func() { cancel(errStdoutLimit) }}
	in.stderr = &cappedBuffer{limit: lim.Output, onFull: func() { cancel(errStderrLimit) }}
	in.call = guestIO{args: r.Args, env: envList(r.Env), stdin: stdin, stdout: in.stdout, stderr: in.stderr}
	in.plan = *pl
	if pl.hold {
		in.reached, in.hold = make(chan struct{}), make(chan struct{})
	}
	in.state.io, in.state.ask = in.call, in.asker
	if len(pl.init) > 0 {
		// The start-up sees no more than argv[0], and the module's init
		// section on stdin; what it prints is not the call's.
		in.startup = &cappedBuffer{limit: lim.Output, onFull: func() { cancel(errStderrLimit) }}
		in.state.io = guestIO{args: r.Args[:min(len(r.Args), 1)], stdin: bytes.NewReader(c.reactor.init), stdout: io.Discard, stderr: in.startup}
		in.state.ask = nil
		in.log = c.log
	}
	if f := c.p.start(in, r, stdin); f != nil {
		cancel(nil)
		in.release()
		return nil, f
	}
	return in, nil
}

// beginCall ends a reactor's start-up: from now on the guest sees its
// call's arguments, environment and stdio. The backend calls it on the
// guest's goroutine, between two of its exports.
func (in *instance) beginCall() {
	in.logStartup()
	if in.hold != nil {
		close(in.reached)
		select {
		case <-in.hold:
		case <-in.ctx.Done(): // discarded: the run stops at once
		}
	}
	in.state.io, in.state.ask = in.call, in.asker
}

// logStartup gives the operator what a reactor's start-up wrote to
// stderr, once.
func (in *instance) logStartup() {
	if in.startup != nil && in.startup.buf.Len() > 0 {
		in.log.Debug("tool start-up wrote to stderr", "argv", in.call.args[:min(len(in.call.args), 1)], "stderr", in.startup.buf.String())
		in.startup.buf.Reset()
	}
}

// guard runs a backend's instantiate-and-run on the current goroutine and
// sends how it ended to in.done, turning a panic inside the engine into an
// ending, so that one guest cannot take the server down. run may return a
// teardown, which runs after the ending is sent: freeing an instance is
// not part of its call's latency.
func (in *instance) guard(run func() (ending, func())) {
	end, teardown := ending{}, func() {}
	defer func() {
		if p := recover(); p != nil {
			end = ending{err: fmt.Errorf("engine panic: %v", p)}
		}
		// No yield to the caller here, though it waits behind the
		// teardown on this processor: under load, a yielded teardown
		// waits behind every runnable goroutine, holding its memory out
		// of the pool (at 256 HTTP clients: 5,088 → 4,119 calls/s, and
		// RSS 54 → 100 MiB).
		in.done <- end
		teardown()
		in.release()
	}()
	end, teardown = run()
}

// wait arms the time limit and the caller's cancellation, and returns the
// outcome once the guest ends.
func (in *instance) wait(ctx context.Context) Outcome {
	start := time.Now()
	timer := time.AfterFunc(in.lim.Timeout, func() { in.cancel(errTimeLimit) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { in.cancel(errCancelled) })
	defer stop()
	end := <-in.done
	out := Outcome{
		Stdout:     in.stdout.buf.Bytes(),
		Stderr:     in.stderr.buf.Bytes(),
		PeakMemory: int64(in.mem.peak()),
		Duration:   time.Since(start),
		Denials:    in.state.denials,
		Failure:    classify(in.ctx, in.lim, in.mem, end),
	}
	if f := out.Failure; f != nil && f.Kind == MemoryLimit && in.reserve >= pageSize {
		f.Detail += fmt.Sprintf(", of which its tables and globals take %s", bytesText(in.reserve))
	}
	if end.startup != "" && in.startup != nil {
		// The call never began: what the start-up said is why it failed.
		out.Stderr = in.startup.buf.Bytes()
		in.logStartup()
	}
	in.cancel(nil)
	return out
}

// Run instantiates a fresh instance, runs _start and tears the instance
// down. It never panics: a panic inside the engine becomes an internal
// Failure.
func (c *Compiled) Run(ctx context.Context, r Run) Outcome {
	in, f := c.launch(r, bytes.NewReader(r.Stdin), nil)
	if f != nil {
		return Outcome{Failure: f}
	}
	return in.wait(ctx)
}

// Prepared is an instance started before its call: the guest's start-up
// (for a Go guest, the runtime's initialisation, most of a call's cost)
// has run, and the guest now waits for its arguments on stdin. It is still
// a fresh instance, used for exactly one call.
type Prepared struct {
	in     *instance
	stdin  *stdinGate
	memory int64
}

// stdinGate is a prepared guest's stdin. Its first read tells that the
// start-up is over (reached) and waits for the call's stdin, which Start
// hands over through a buffered channel: the guest, blocked in that read,
// is then the next goroutine to run where Start waits, with no goroutine
// or pipe between them.
type stdinGate struct {
	reached chan struct{}
	once    sync.Once
	given   chan []byte // one call's stdin; closed, the instance is discarded
	opened  bool        // the guest's goroutine's alone, as r is
	r       bytes.Reader
}

func newStdinGate() *stdinGate {
	return &stdinGate{reached: make(chan struct{}), given: make(chan []byte, 1)}
}

func (g *stdinGate) Read(p []byte) (int, error) {
	g.once.Do(func() { close(g.reached) })
	if !g.opened {
		b, ok := <-g.given
		if !ok {
			return 0, errDiscarded
		}
		g.r.Reset(b)
		g.opened = true
	}
	return g.r.Read(p)
}

// open gives the guest its stdin; discard ends its wait for one. One of
// them is called, once.
func (g *stdinGate) open(stdin []byte) { g.given <- stdin }
func (g *stdinGate) discard()          { close(g.given) }

// PrepareBudget bounds how long Prepare waits for a guest to reach its
// stdin. Start-up takes milliseconds (a Go runtime's included); a guest
// that takes longer is run cold instead of holding a run slot.
const PrepareBudget = time.Second

// Prepare starts an instance for a later call, and returns once the guest
// waits for it: a command as it reads stdin, a reactor once its start-up
// is done (from the snapshot, or run whole), before wasmcp_run, which is
// all the call's. It returns nil when the guest cannot be prepared: it
// ended, or failed, before that, or did not get there within
// PrepareBudget; such a guest is simply run cold. r.Stdin, r.Reporter,
// r.HTTP and r.Asker are ignored here: Start supplies them.
func (c *Compiled) Prepare(ctx context.Context, r Run) *Prepared {
	if !c.p.prepares(r) {
		return nil
	}
	pl, f := c.planFor(r)
	if f != nil {
		return nil
	}
	// A reactor waits for its call before wasmcp_run, a command as it
	// reads stdin.
	pl.hold = c.reactor != nil
	gate := newStdinGate()
	r.Reporter, r.HTTP, r.Asker = nil, nil, nil
	in, f := c.launch(r, gate, &pl)
	if f != nil {
		return nil
	}
	timer := time.NewTimer(min(r.Limits.Timeout, PrepareBudget))
	defer timer.Stop()
	select {
	case <-in.reached:
		held := in.mem.held() + in.reserve + uint64(in.stdout.buf.Len()+in.stderr.buf.Len())
		return &Prepared{in: in, stdin: gate, memory: int64(held)}
	case <-gate.reached:
		// The guest is blocked reading: what it holds stays as it is
		// until Start.
		held := in.mem.held() + in.reserve + uint64(in.stdout.buf.Len()+in.stderr.buf.Len())
		return &Prepared{in: in, stdin: gate, memory: int64(held)}
	case <-in.done:
		in.cancel(nil)
		return nil
	case <-timer.C:
	case <-ctx.Done():
	}
	// Wait for the guest to end, as Discard does: the caller may release
	// the module, and the compiled code must outlive its instance.
	gate.discard()
	in.cancel(errDiscarded)
	<-in.done
	return nil
}

// Memory is what the instance holds as it waits for its call, in bytes:
// the memory the engine holds for it, tables and globals included, which
// is at most its memory limit, and the output its start-up wrote.
func (p *Prepared) Memory() int64 { return p.memory }

// Start gives the prepared guest its call: r's reporter, HTTP client and
// asker, then its stdin (the rest of r was Prepare's). The time limit
// starts now.
func (p *Prepared) Start(ctx context.Context, r Run) Outcome {
	// The guest is blocked reading stdin, or before its call, so it
	// cannot be using the state.
	p.in.state.reporter, p.in.state.http = r.Reporter, r.HTTP
	p.in.asker, p.in.state.ask = r.Asker, r.Asker
	p.stdin.open(r.Stdin)
	if p.in.hold != nil {
		close(p.in.hold)
	}
	return p.in.wait(ctx)
}

// Discard ends a prepared instance that will not be used.
func (p *Prepared) Discard() {
	p.stdin.discard()
	p.in.cancel(errDiscarded)
	<-p.in.done
}
