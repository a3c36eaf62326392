package sandbox

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CompileLimits bound the compilation of one module. A zero field takes its
// value from DefaultCompileLimits.
type CompileLimits struct {
	// Timeout bounds how long one module may take to compile. A module
	// that takes longer is refused.
	Timeout time.Duration
	// Memory bounds what compiling one module may hold, beyond the
	// compile worker's own start-up, with MemoryPerByte bytes more for
	// every byte of the module. A module that needs more is refused.
	// It is enforced only when modules compile in a worker (Config.Worker)
	// on Linux.
	Memory int64
	// Concurrency bounds how many modules compile afresh at once, each
	// within Memory, so it multiplies what compiling may hold; it is 1 by
	// default on any machine (docs/design.md, "Compilation"). A module
	// whose code is in the cache (Engine.Cached) loads in one more slot,
	// its own. Neither is a run slot: a compilation never holds one.
	Concurrency int
}

// MemoryPerByte is what CompileLimits.Memory grows by for every byte of the
// module being compiled. Compiling a Go guest held 12 to 23 times its size
// at its peak (docs/design.md, "Resource promise").
const MemoryPerByte = 32

// DefaultCompileLimits are the limits a zero CompileLimits field stands for.
func DefaultCompileLimits() CompileLimits {
	return CompileLimits{Timeout: time.Minute, Memory: 256 << 20, Concurrency: 1}
}

func (l CompileLimits) withDefaults() CompileLimits {
	d := DefaultCompileLimits()
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.Concurrency <= 0 {
		l.Concurrency = d.Concurrency
	}
	return l
}

// memoryFor is the memory bound for compiling a module of size bytes.
func (l CompileLimits) memoryFor(size int) int64 { return l.Memory + MemoryPerByte*int64(size) }

// Worker is how to start a compile worker: a process that calls RunWorker
// with the arguments the engine appends to Args. A worker compiles one
// module and exits. Its own memory is bounded, it is killed when it runs
// out of time or the engine closes, and if the compiler crashes on a
// hostile module only the worker dies. The compiled code reaches the
// engine through the compilation cache.
type Worker struct {
	Path string
	Args []string
}

// Errors of a bounded compilation, which callers tell apart with errors.Is.
var (
	// ErrCompileTime: the module took longer than CompileLimits.Timeout.
	ErrCompileTime = errors.New("compile time limit")
	// ErrCompileMemory: the module needed more than its memory bound.
	ErrCompileMemory = errors.New("compile memory limit")
	// ErrEngineClosed: the engine was closed, or is closing.
	ErrEngineClosed = errors.New("the engine is closed")
	// ErrStopped: the work's Schedule.Stop was closed. It wraps
	// context.Canceled.
	ErrStopped = fmt.Errorf("stopped, as its schedule asked: %w", context.Canceled)
)

// compileError is a compilation that the limits stopped.
type compileError struct {
	kind error
	msg  string
}

func (e *compileError) Error() string { return e.msg }
func (e *compileError) Unwrap() error { return e.kind }

// bounded compiles wasm with the engine's compile limits, in its turn in
// q (inTurn).
func (e *Engine) bounded(ctx context.Context, q *compileQueue, wasm []byte, s Schedule) (program, error) {
	var p program
	err := e.inTurn(ctx, q, "compilation", s, func(actx context.Context) error {
		var err error
		p, err = e.compileIn(actx, wasm)
		return err
	})
	return p, err
}

// compileIn compiles wasm in the compile slot that actx holds: within
// Timeout, and in a worker if the engine has one.
func (e *Engine) compileIn(actx context.Context, wasm []byte) (program, error) {
	cctx, cancel := context.WithTimeoutCause(actx, e.limits.Timeout, ErrCompileTime)
	defer cancel()
	var err error
	if e.worker != nil {
		err = e.inWorker(cctx, wasm)
	}
	var p program
	if err == nil {
		p, err = e.compileHere(cctx, wasm)
	}
	if err != nil && cctx.Err() != nil {
		return nil, e.stopped(cctx)
	}
	return p, err
}

// compileHere compiles wasm in this process (after a worker did, from the
// cache it left).
func (e *Engine) compileHere(ctx context.Context, wasm []byte) (program, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrEngineClosed
	}
	p, err := e.b.compile(ctx, wasm)
	if err != nil {
		return nil, e.compiled(err)
	}
	return p, nil
}

// inTurn runs work, a compilation or a snapshot (what, for the log), in
// its turn in q (compileQueue). ctx bounds only the wait for a slot; once
// work starts, it ends on its own limits, when it gives its slot to one
// someone waits for (its context then ends, and it waits for a slot
// again), when s.Stop closes, or when the engine closes, so that the
// callers that wait for a module share its one compilation. Work stopped
// by s.Stop, waiting or running, ends with ErrStopped and is not started
// over.
func (e *Engine) inTurn(ctx context.Context, q *compileQueue, what string, s Schedule, work func(context.Context) error) error {
	needed := s.Needed
	wanted := needed == nil || closed(needed)
	j := q.join(wanted)
	defer q.end(j)
	if !wanted {
		watching := make(chan struct{})
		defer close(watching)
		go func() {
			select {
			case <-needed:
				e.log.Debug("a call waits for this "+what+" now", "file", s.Name)
				q.want(j)
			case <-watching:
			}
		}()
	}
	for {
		select {
		case <-j.turn:
		case <-ctx.Done():
			return ctx.Err()
		case <-e.stopping.Done():
			return ErrEngineClosed
		case <-s.Stop:
			return ErrStopped
		}
		if closed(s.Stop) {
			// Its turn came as it was stopped.
			return ErrStopped
		}
		e.log.Debug(what+" started", "file", s.Name, "cached", q == e.loading)
		err := e.attempt(q, j, s.Stop, work)
		if !errors.Is(err, errYielded) {
			return err
		}
		e.log.Debug(what+" stopped for one a call waits for; it starts over later", "file", s.Name)
		q.requeue(j)
	}
}

// attempt runs work once, in the slot j was given in q, until it ends or
// until halt (a Schedule's Stop) closes.
func (e *Engine) attempt(q *compileQueue, j *compileJob, halt <-chan struct{}, work func(context.Context) error) error {
	actx, stop := context.WithCancelCause(e.stopping)
	defer stop(nil)
	if halt != nil {
		go func() {
			select {
			case <-halt:
				stop(ErrStopped)
			case <-actx.Done():
			}
		}()
	}
	q.begin(j, stop)
	err := work(actx)
	if err != nil && actx.Err() != nil {
		return e.stopped(actx)
	}
	return err
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stopped explains a compilation whose context ended.
func (e *Engine) stopped(cctx context.Context) error {
	switch cause := context.Cause(cctx); {
	case errors.Is(cause, ErrCompileTime):
		return e.limitError(ErrCompileTime, 0)
	case errors.Is(cause, errYielded):
		return errYielded
	case errors.Is(cause, ErrStopped):
		return ErrStopped
	}
	return ErrEngineClosed
}

// limitError is the error of a compilation that passed a limit (kind is
// ErrCompileTime or ErrCompileMemory) compiling a module of size bytes.
// A refusal remembered from an earlier try is worded the same way.
func (e *Engine) limitError(kind error, size int) *compileError {
	if kind == ErrCompileTime {
		return &compileError{ErrCompileTime, fmt.Sprintf("compiling took longer than the %s compile time limit", e.limits.Timeout)}
	}
	return &compileError{ErrCompileMemory, fmt.Sprintf("compiling needed more than its memory bound of %s (%s, and %d bytes more for every byte of the module)", bytesText(uint64(e.limits.memoryFor(size))), bytesText(uint64(e.limits.Memory)), MemoryPerByte)}
}

// inWorker compiles wasm in a worker process, which leaves the compiled
// code in the cache. Every compilation goes through a worker, even of a
// module compiled before: the engine then finds the code in the cache
// in the worker too, quickly, but whether it is there is the engine's to
// know, and a cache entry evicted or deleted behind the server's back
// would otherwise be compiled in the server, outside every bound.
func (e *Engine) inWorker(ctx context.Context, wasm []byte) error {
	budget := e.limits.memoryFor(len(wasm))
	args := append(append([]string(nil), e.worker.Args...),
		"-engine", e.name, "-cache-dir", e.cacheDir, "-memory", strconv.FormatInt(budget, 10))
	cmd := exec.CommandContext(ctx, e.worker.Path, args...)
	cmd.Stdin = bytes.NewReader(wasm)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: 8 << 10}
	cmd.SysProcAttr = workerAttr()
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return e.stopped(ctx)
	}
	var exec_ *exec.Error
	var path *fs.PathError
	if errors.As(err, &exec_) || errors.As(err, &path) {
		// The worker did not start: the server's own fault, and its
		// paths are the operator's business, not a model's.
		e.log.Error("the compile worker cannot be started", "path", e.worker.Path, "error", err)
		return errors.New("the server could not start its compile worker (its log says why)")
	}
	text := strings.TrimSpace(stderr.String())
	var exit *exec.ExitError
	errors.As(err, &exit)
	switch {
	case exit != nil && exit.ExitCode() == workerRefused:
		// The compiler's own verdict: the module is invalid.
		return refused(text)
	case exit != nil && exit.ExitCode() == workerOutOfMemory || outOfMemory(text):
		return e.limitError(ErrCompileMemory, len(wasm))
	case exit != nil && exit.ExitCode() == workerFailed:
		// The worker's own fault (a cache it cannot use, say), in words
		// that may name the server's paths.
		e.log.Error("the compile worker failed", "path", e.worker.Path, "stderr", text)
		return errors.New("the server's compile worker failed (its log says why)")
	}
	// A crash: a Go panic's trace or a Rust abort's, with source paths.
	e.log.Error("the compiler failed on a module", "status", err, "stderr", text)
	return fmt.Errorf("the compiler failed on this module (%v; the server's log has what it said)", err)
}

// compiled words an engine's failure to compile in this process: its
// verdict on the module, or, when the engine could not read or write a
// file (its cache), a sentence naming no path, with the error in the log.
func (e *Engine) compiled(err error) error {
	if environmental(err) {
		e.log.Error("the compilation cache failed", "error", err)
		return errors.New("the server could not use its compilation cache (its log says why)")
	}
	return refused(err.Error())
}

// environmental reports whether err is a file the engine could not use,
// rather than its verdict on a module.
func environmental(err error) bool {
	var path *fs.PathError
	var link *os.LinkError
	var sys *os.SyscallError
	return errors.As(err, &path) || errors.As(err, &link) || errors.As(err, &sys)
}

// A RefusedError is a module the compiler refused: it is invalid. Its text
// is one line, the gist of what the compiler said; Compiler is all of it
// (wasmtime's chain of causes and its backtrace), which is for the
// operator's debug log.
type RefusedError struct {
	Gist, Compiler string
}

func (e *RefusedError) Error() string { return "the compiler refused it: " + e.Gist }

// refused is the RefusedError for what a compiler said.
func refused(said string) *RefusedError {
	return &RefusedError{Gist: compilerText(said), Compiler: capText(said, 8<<10)}
}

// outOfMemory reads a worker's stderr for the marks of an allocation that
// failed before the watchdog saw it: the Go runtime's fatal error, or the
// Rust allocator's abort.
func outOfMemory(stderr string) bool {
	for _, mark := range []string{"out of memory", "cannot allocate memory", "memory allocation of"} {
		if strings.Contains(stderr, mark) {
			return true
		}
	}
	return false
}

// wasmtimeFunction is how wasmtime names a function in its errors:
// "wasm[0]::function[12]".
var wasmtimeFunction = regexp.MustCompile(`wasm\[\d+\]::function\[(\d+)\]`)

// causeNumber numbers each cause in a chain of several ("    1: ").
var causeNumber = regexp.MustCompile(`(?m)^\s*\d+: `)

// compilerText is the gist of what a compiler said of a module it
// refused, in one line for a model or a log. wasmtime says it as a chain
// ("failed to compile: wasm[0]::function[0]", then "Caused by:" and the
// causes, one per line, then a Rust backtrace): its gist is what failed
// and the last cause, the root one. wazero's text may span lines too.
func compilerText(s string) string {
	s, _, _ = strings.Cut(s, "Stack backtrace:")
	if head, chain, ok := strings.Cut(s, "Caused by:"); ok {
		causes := causeNumber.Split(strings.TrimSpace(chain), -1)
		head = strings.TrimPrefix(strings.TrimSpace(head), "failed to compile: ")
		s = head + ": " + causes[len(causes)-1]
	}
	s = wasmtimeFunction.ReplaceAllString(s, "function $1")
	return capText(strings.Join(strings.Fields(s), " "), 512)
}

// capText cuts s to at most n bytes, marking the cut.
func capText(s string, n int) string {
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// A worker's exit status, besides 0: the compiler refused the module (it
// is invalid, and stderr says why), the worker passed its memory bound, or
// the worker could not do its job for a reason of its own (its arguments,
// a cache it cannot use; stderr says why). Any other status is a crash.
const (
	workerRefused     = 10
	workerOutOfMemory = 11
	workerFailed      = 12
)

// RunWorker is the body of a compile worker: it reads one module from
// stdin, compiles it with the engine its arguments name into their
// compilation cache, and returns the process's exit status. The module is
// the one Engine.Compile prepared, so that the cache entry it leaves is
// the one Compile then finds. Before reading, it bounds its own memory (on
// Linux): past the bound, it exits with workerOutOfMemory.
func RunWorker(args []string, stdin io.Reader, stderr io.Writer) int {
	fs := flag.NewFlagSet("compile-worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engine := fs.String("engine", DefaultEngine, "")
	cacheDir := fs.String("cache-dir", "", "")
	memory := fs.Int64("memory", 0, "")
	if err := fs.Parse(args); err != nil {
		return workerFailed
	}
	if *cacheDir == "" {
		fmt.Fprintln(stderr, "compile worker: -cache-dir is required")
		return workerFailed
	}
	checkMemory := func() {}
	if *memory > 0 {
		var err error
		if checkMemory, err = limitMemory(*memory); err != nil {
			fmt.Fprintln(stderr, "compile worker:", err)
			return workerFailed
		}
	}
	wasm, err := io.ReadAll(io.LimitReader(stdin, maxWorkerInput+1))
	if err != nil || len(wasm) > maxWorkerInput {
		fmt.Fprintln(stderr, "compile worker: reading the module:", err)
		return workerFailed
	}
	ctx := context.Background()
	b, err := newBackend(ctx, Config{Engine: *engine, CacheDir: *cacheDir})
	if err != nil {
		fmt.Fprintln(stderr, "compile worker:", err)
		return workerFailed
	}
	_, err = b.compile(ctx, wasm)
	checkMemory()
	switch {
	case err != nil && environmental(err):
		fmt.Fprintln(stderr, "compile worker:", err)
		return workerFailed
	case err != nil:
		fmt.Fprintln(stderr, err)
		return workerRefused
	}
	// The cache now holds the code; freeing it is the process's exit.
	return 0
}

// maxWorkerInput bounds what a worker reads: no module the catalog loads is
// larger.
const maxWorkerInput = 256 << 20
