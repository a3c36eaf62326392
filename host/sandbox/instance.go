package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// instance is one guest, started. Its run ends when _start returns, or when
// its context is cancelled with a cause that says why.
type instance struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	lim    Limits
	mem    *meter
	state  *runState
	stdout *cappedBuffer
	stderr *cappedBuffer
	done   chan error // _start's result, or a recovered panic
}

// launch instantiates the module and runs _start in its own goroutine. The
// time limit is not armed: Run arms it at once, Prepare when the call
// comes.
func (c *Compiled) launch(e *Engine, r Run, stdin io.Reader) (*instance, *Failure) {
	mem := &meter{limit: uint64(r.Limits.Memory)}
	if need := c.minPages * pageSize; need > mem.limit {
		return nil, &Failure{
			Kind:   MemoryLimit,
			Detail: fmt.Sprintf("the module needs %s of memory to start; the limit is %s", bytesText(need), bytesText(mem.limit)),
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	in := &instance{
		ctx: ctx, cancel: cancel, lim: r.Limits, mem: mem,
		state: &runState{reporter: r.Reporter, lastProgress: math.Inf(-1), http: r.HTTP},
		done:  make(chan error, 1),
	}
	in.stdout = &cappedBuffer{limit: r.Limits.Output, onFull: func() { cancel(errStdoutLimit) }}
	in.stderr = &cappedBuffer{limit: r.Limits.Output, onFull: func() { cancel(errStderrLimit) }}
	runCtx := experimental.WithMemoryAllocator(ctx, mem)
	runCtx = context.WithValue(runCtx, runStateKey{}, in.state)

	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous, so instances of one module can run at once
		WithArgs(r.Args...).
		WithStdin(stdin).
		WithStdout(in.stdout).
		WithStderr(in.stderr).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(sleeper(runCtx)).
		WithRandSource(rand.Reader).
		WithStartFunctions("_start")
	for k, v := range r.Env {
		cfg = cfg.WithEnv(k, v)
	}
	var roots []*confinedFS
	if len(r.Mounts) > 0 {
		fsc := wazero.NewFSConfig().(sysfs.FSConfig)
		for _, m := range r.Mounts {
			cfs, err := newConfinedFS(m)
			if err != nil {
				for _, r := range roots {
					r.root.Close()
				}
				cancel(nil)
				return nil, &Failure{Kind: Internal, Detail: fmt.Sprintf("the directory granted at %s cannot be opened: %v", m.Guest, err)}
			}
			roots = append(roots, cfs)
			fsc = fsc.WithSysFSMount(cfs, m.Guest).(sysfs.FSConfig)
		}
		cfg = cfg.WithFSConfig(fsc.(wazero.FSConfig))
	}

	go func() {
		var err error
		defer func() {
			if p := recover(); p != nil {
				err = enginePanic{p}
			}
			for _, r := range roots {
				r.root.Close()
			}
			in.done <- err
		}()
		mod, ierr := e.rt.InstantiateModule(runCtx, c.cm, cfg)
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		err = ierr
	}()
	return in, nil
}

// wait arms the time limit and the caller's cancellation, and returns the
// outcome once the guest ends.
func (in *instance) wait(ctx context.Context) Outcome {
	start := time.Now()
	timer := time.AfterFunc(in.lim.Timeout, func() { in.cancel(errTimeLimit) })
	defer timer.Stop()
	stop := context.AfterFunc(ctx, func() { in.cancel(errCancelled) })
	defer stop()
	err := <-in.done
	out := Outcome{
		Stdout:     in.stdout.buf.Bytes(),
		Stderr:     in.stderr.buf.Bytes(),
		PeakMemory: int64(in.mem.peak),
		Duration:   time.Since(start),
		Denials:    in.state.denials,
	}
	var panicked enginePanic
	if errors.As(err, &panicked) {
		out.Failure = memoryOrInternal(in.mem, err)
	} else {
		out.Failure = classify(in.ctx, in.lim, in.mem, err)
	}
	in.cancel(nil)
	return out
}

// enginePanic is a panic inside wazero, recovered so that one guest
// cannot take the server down.
type enginePanic struct{ v any }

func (p enginePanic) Error() string { return fmt.Sprintf("engine panic: %v", p.v) }

// Run instantiates a fresh instance, runs _start and tears the instance
// down. It never panics: a panic inside the engine becomes an internal
// Failure.
func (c *Compiled) Run(ctx context.Context, e *Engine, r Run) Outcome {
	in, f := c.launch(e, r, bytes.NewReader(r.Stdin))
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
	in    *instance
	stdin *io.PipeWriter
}

// readSignal tells when the guest first asks for stdin: its start-up is
// over.
type readSignal struct {
	r    io.Reader
	once sync.Once
	ch   chan struct{}
}

func (s *readSignal) Read(p []byte) (int, error) {
	s.once.Do(func() { close(s.ch) })
	return s.r.Read(p)
}

// PrepareBudget bounds how long Prepare waits for a guest to reach its
// stdin. Start-up takes milliseconds (a Go runtime's included); a guest
// that takes longer is run cold instead of holding a run slot.
const PrepareBudget = time.Second

// Prepare starts an instance for a later call, and returns once the guest
// waits for its stdin. It returns nil when the guest cannot be prepared: it
// ended, or failed, without reading stdin, or did not reach the read within
// PrepareBudget; such a guest is simply run cold. r.Stdin, r.Reporter and
// r.HTTP are ignored here: Start supplies them.
func (c *Compiled) Prepare(ctx context.Context, e *Engine, r Run) *Prepared {
	pr, pw := io.Pipe()
	sig := &readSignal{r: pr, ch: make(chan struct{})}
	r.Reporter, r.HTTP = nil, nil
	in, f := c.launch(e, r, sig)
	if f != nil {
		return nil
	}
	timer := time.NewTimer(min(r.Limits.Timeout, PrepareBudget))
	defer timer.Stop()
	select {
	case <-sig.ch:
		return &Prepared{in: in, stdin: pw}
	case <-in.done:
	case <-timer.C:
	case <-ctx.Done():
	}
	pw.CloseWithError(errDiscarded)
	in.cancel(errDiscarded)
	return nil
}

// Start gives the prepared guest its call: the reporter and HTTP client,
// then its arguments. The time limit starts now.
func (p *Prepared) Start(ctx context.Context, stdin []byte, rep Reporter, http HTTPDoer) Outcome {
	// The guest is blocked reading stdin, so it cannot be using the state.
	p.in.state.reporter, p.in.state.http = rep, http
	go func() {
		_, _ = p.stdin.Write(stdin)
		p.stdin.Close()
	}()
	return p.in.wait(ctx)
}

// Discard ends a prepared instance that will not be used.
func (p *Prepared) Discard() {
	p.stdin.CloseWithError(errDiscarded)
	p.in.cancel(errDiscarded)
	<-p.in.done
}
