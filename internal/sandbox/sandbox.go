// Package sandbox runs WebAssembly tool modules under limits: one fresh
// instance per run, nothing granted but arguments, stdio, clocks and
// randomness, and every way a run can go wrong reported as a Failure.
//
// Two engines run modules: wazero (pure Go, the default) and, in builds
// tagged wasmtime, wasmtime through cgo. Each is a backend; the limits,
// the host functions' rules and the classification of failures are
// shared, so both behave alike.
package sandbox

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// pageSize is the size of a Wasm memory page.
const pageSize = 64 << 10

// Limits bound one run.
type Limits struct {
	Timeout time.Duration
	Memory  int64 // bytes of linear memory
	Output  int64 // bytes of stdout, and separately of stderr (dispatch bounds the answer by it too)
}

// Config configures an Engine.
type Config struct {
	// Engine names the WebAssembly runtime: "wazero" (the default, pure
	// Go) or "wasmtime" (cgo; only in builds tagged wasmtime). Both give
	// the same ABI, limits and failures; Engines lists what a build has.
	Engine string
	// CacheDir, when set, keeps compiled native code on disk so that a
	// restart does not recompile, with a mark of each module compiled so
	// that a restart loads it without waiting for other compilations,
	// and records the modules that passed a compile limit so that a
	// restart refuses them at once. It holds executable code: it must be
	// writable only by the server's user.
	CacheDir string
	// Compile bounds each compilation.
	Compile CompileLimits
	// Logger receives what the operator should know and a model should
	// not (why a worker could not start); nil discards it.
	Logger *slog.Logger
	// Worker, when set, compiles each module in a process of its own,
	// which is what makes CompileLimits.Memory hold, and a compiler crash
	// harmless. Without a CacheDir, the engine keeps a private one for
	// the worker to hand the code over in, removed on Close. Without a
	// Worker, modules compile in this process, bounded by ModuleLimits
	// and by Timeout where the engine can stop (wazero, between
	// functions).
	Worker *Worker
	// SnapshotMemory bounds the memory every snapshot kept holds together
	// (its pages that are not all zeroes): a reactor whose snapshot would
	// pass it runs its whole start-up in every call instead. Zero means
	// DefaultSnapshotMemory.
	SnapshotMemory int64
}

// DefaultSnapshotMemory is what Config.SnapshotMemory's zero stands for.
const DefaultSnapshotMemory = 1 << 30

// DefaultEngine is the engine used when Config.Engine is empty.
const DefaultEngine = "wazero"

// Engines lists the engines this build can run, default first.
func Engines() []string {
	if wasmtimeBuilt {
		return []string{DefaultEngine, "wasmtime"}
	}
	return []string{DefaultEngine}
}

// backend is what an engine implements: compiling, and starting one fresh
// instance per run. Everything an engine need not decide (limits,
// classification of failures, the host functions' rules) is shared.
type backend interface {
	compile(ctx context.Context, wasm []byte) (program, error)
	// provides is what modules may import: every function of WASI and of
	// the wasmcp host module, with the type the engine defined it with.
	provides() provided
	// mapsData says whether the engine maps a module's data segments into
	// each instance copy-on-write itself (wasmtime's memory_init_cow);
	// if not, the sandbox does, for modules with many (dataImage).
	mapsData() bool
	close(ctx context.Context) error
}

// provided are the functions an engine defines for modules to import, by
// module and name, with their types.
type provided map[string]map[string]wasmbin.FuncType

// providers name who defines each module's functions, for the error that
// says a module imports one with the wrong type.
var providers = map[string]string{
	wasiModule:     "WASI preview 1 defines it",
	abi.HostModule: "wasmcp defines it (docs/abi.md)",
}

// valTypes are value types by their binary encoding, as abi and wazero
// give them.
func valTypes[T ~byte](types []T) []wasmbin.ValType {
	out := make([]wasmbin.ValType, len(types))
	for i, t := range types {
		out[i] = wasmbin.ValType(t)
	}
	return out
}

// program is a module compiled by a backend.
type program interface {
	// start instantiates the module for in and runs in.plan (a command's
	// _start, or a reactor's exports) on a goroutine of its own, which
	// sends how the guest ended to in.done. It returns a Failure if the
	// instance could not be set up.
	start(in *instance, r Run, stdin io.Reader) *Failure
	// prepares says whether an instance for r can be started before its
	// stdin is known.
	prepares(r Run) bool
	// snapshots says whether the backend runs plans with capture and
	// from.
	snapshots() bool
	// images says whether the backend makes each snapshot a module of its
	// own (snapshotImage), whose instances start as the snapshot, rather
	// than giving instances of this one the snapshot's memory itself.
	images() bool
	close(ctx context.Context) error
}

// Engine compiles and runs modules. One Engine serves every module: memory
// limits are enforced per instance, so modules with different limits share
// the runtime and its compiled host modules.
type Engine struct {
	name     string
	b        backend
	provided provided
	log      *slog.Logger
	limits   CompileLimits
	worker   *Worker
	cacheDir string
	tempDir  string // a private cache for the worker, removed on Close

	// compiling and loading hand out the compile slots (compileQueue):
	// Concurrency of them to modules that compile afresh, and one to
	// modules whose code is in the cache (Cached), so that loading a
	// module never waits for another's compilation.
	compiling, loading *compileQueue
	// stopping ends when Close begins: compilations stop (workers are
	// killed), and no new one starts.
	stopping context.Context
	stop     context.CancelFunc

	// mu keeps Close from closing the runtime under a compile in progress,
	// which makes wazero panic: Compile holds it for reading, and launch
	// while it counts an instance in.
	mu     sync.RWMutex
	closed bool
	// instances counts the guests running: Close stops them and waits for
	// them before the runtime goes (on wasmtime, a guest outliving the
	// epoch ticker would never be interrupted).
	instances sync.WaitGroup

	// snapshotMemory is Config.SnapshotMemory; snapshotHeld, what the
	// snapshots kept hold of it.
	snapshotMemory int64
	snapshotHeld   atomic.Int64
}

// NewEngine starts the runtime cfg names, with WASI preview 1 and the
// wasmcp host module.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	e := &Engine{name: cmp.Or(cfg.Engine, DefaultEngine), limits: cfg.Compile.withDefaults(), worker: cfg.Worker, log: cfg.Logger,
		snapshotMemory: cmp.Or(cfg.SnapshotMemory, DefaultSnapshotMemory)}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Worker != nil && cfg.CacheDir == "" {
		dir, err := os.MkdirTemp("", "wasmcp-compiled-")
		if err != nil {
			return nil, fmt.Errorf("compilation cache for the compile worker: %w", err)
		}
		cfg.CacheDir, e.tempDir = dir, dir
	}
	b, err := newBackend(ctx, cfg)
	if err != nil {
		if e.tempDir != "" {
			os.RemoveAll(e.tempDir)
		}
		return nil, err
	}
	e.b, e.provided, e.cacheDir = b, b.provides(), cfg.CacheDir
	e.compiling, e.loading = newCompileQueue(e.limits.Concurrency), newCompileQueue(1)
	e.stopping, e.stop = context.WithCancel(context.Background())
	return e, nil
}

// newBackend starts the runtime cfg names.
func newBackend(ctx context.Context, cfg Config) (backend, error) {
	if cfg.CacheDir != "" {
		if err := os.MkdirAll(cfg.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
		if err := checkCacheDir(cfg.CacheDir); err != nil {
			return nil, err
		}
	}
	name := cmp.Or(cfg.Engine, DefaultEngine)
	var b backend
	var err error
	switch name {
	case "wazero":
		b, err = newWazero(ctx, cfg)
	case "wasmtime":
		b, err = newWasmtime(cfg)
	default:
		return nil, fmt.Errorf("unknown engine %q (this build has: %s)", name, strings.Join(Engines(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return b, nil
}

// Name is the engine's name, as Config.Engine gives it.
func (e *Engine) Name() string { return e.name }

// admit counts an instance in, unless Close has begun: release counts it
// out once it has ended and been torn down.
func (e *Engine) admit() (release func(), f *Failure) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed || e.stopping.Err() != nil {
		return nil, &Failure{Kind: Cancelled, Detail: shuttingDown}
	}
	e.instances.Add(1)
	return e.instances.Done, nil
}

// shuttingDown is the detail of a run that the engine's Close stopped or
// refused.
const shuttingDown = "the server is shutting down: the call was stopped"

// Close stops the compilations in progress (killing their workers) and
// the guests running, then releases the runtime and the compilation cache.
// A compilation in this process that cannot stop (on wasmtime, or a wazero
// function still compiling) is waited for until ctx ends; past that, Close
// returns without releasing the runtime, which the compilation still uses,
// and leaves it to the process's exit. Runs after Close fail with
// ErrEngineClosed.
func (e *Engine) Close(ctx context.Context) error {
	e.stop()
	done := make(chan error, 1)
	go func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.closed {
			done <- nil
			return
		}
		e.closed = true
		e.instances.Wait()
		err := e.b.close(context.WithoutCancel(ctx))
		if e.tempDir != "" {
			err = errors.Join(err, removeCache(e.tempDir))
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("closing the engine: a compilation is still running: %w", ctx.Err())
	}
}

// CheckModule reports why a parsed module could never run here: it is over
// ModuleLimits, it imports something the engine does not provide or
// imports it with another type than the engine's, or it lacks the exports
// that start says it has (a WASI command's _start, or a reactor's).
func (e *Engine) CheckModule(m *wasmbin.Module, start abi.Start) error {
	if err := checkLimits(m); err != nil {
		return err
	}
	for _, imp := range m.Imports {
		funcs, ok := e.provided[imp.Module]
		if !ok {
			return fmt.Errorf("imports %s.%s, but wasmcp provides no module %q (tools may import only %s and %s)", imp.Module, imp.Name, imp.Module, wasiModule, abi.HostModule)
		}
		want, ok := funcs[imp.Name]
		switch {
		case imp.Kind != wasmbin.KindFunc || !ok:
			return fmt.Errorf("imports %s.%s, which wasmcp does not provide", imp.Module, imp.Name)
		case imp.Type == nil:
			return fmt.Errorf("imports %s.%s with a type index past the module's types", imp.Module, imp.Name)
		case !imp.Type.Equal(want):
			// An engine would link it only to fail every call.
			return fmt.Errorf("imports %s.%s as %v, but %s as %v: import it with that type", imp.Module, imp.Name, *imp.Type, providers[imp.Module], want)
		}
	}
	if err := checkEntry(m, start); err != nil {
		return err
	}
	if len(m.Memories) > 1 {
		return errors.New("defines more than one memory; multi-memory modules are not supported")
	}
	return checkMemoryExport(m)
}

// checkMemoryExport requires a module that has a memory and imports host
// functions to export the memory as "memory": WASI preview 1 and the
// wasmcp functions read and write it under that name (wasmtime finds it
// only so, and a reactor's data segments are written through it), and a
// module that calls them without it would fail in ways that blame
// something else.
func checkMemoryExport(m *wasmbin.Module) error {
	if len(m.Memories) == 0 || len(m.Imports) == 0 {
		return nil
	}
	var names []string
	for _, ex := range m.Exports {
		if ex.Kind == wasmbin.KindMemory {
			if ex.Name == "memory" {
				return nil
			}
			names = append(names, strconv.Quote(ex.Name))
		}
	}
	if len(names) == 0 {
		return errors.New(`does not export its memory; a module that calls WASI or wasmcp functions must export it as "memory"`)
	}
	return fmt.Errorf(`exports its memory as %s, not as "memory", which WASI and wasmcp functions need`, strings.Join(names, ", "))
}

// Compiled is a module ready to run.
type Compiled struct {
	p        program
	minPages uint64
	// reserve is what an instance holds outside linear memory at most,
	// counted against the memory limit.
	reserve uint64
	// reactor is set for a reactor module.
	reactor *reactor
	// data, when set, is a command's initial memory, which each instance
	// maps: its data segments were emptied (dataImage).
	data   *memImage
	engine *Engine // whose compile slots a snapshot takes
	log    *slog.Logger

	// snap is the reactor's snapshot, if it has one; snapFailure how its
	// start-up failed, if it did.
	snapMu      sync.RWMutex
	snap        *snapshot
	snapFailure *Failure
}

// CompileOptions say what Engine.CompileWith compiles and how it
// schedules the compilation.
type CompileOptions struct {
	// Start is how the module's manifest says it starts; the zero value
	// is a command.
	Start abi.Start
	Schedule
}

// Schedule says when a compilation, or a snapshot (Compiled.Snapshot),
// takes one of the engine's compile slots.
type Schedule struct {
	// Name is what the engine's log calls the module (its file).
	Name string
	// Needed, when not nil, makes the work one made ahead of need until
	// it is closed: it waits behind every compilation or snapshot someone
	// waits for, and gives its slot up to one when no other slot is free,
	// starting over later. Closing Needed says someone waits for it now.
	Needed <-chan struct{}
	// Stop, when not nil, stops the work once it is closed, whether it
	// waits for a slot or runs (its slot is then free at once), and
	// whether or not someone waits for it: it is never started over, and
	// it ends with ErrStopped. Closing Stop says no one will use the work.
	Stop <-chan struct{}
}

// Compile compiles a command module someone waits for, as CompileWith
// does with no options.
func (e *Engine) Compile(ctx context.Context, wasm []byte) (*Compiled, error) {
	return e.CompileWith(ctx, wasm, CompileOptions{})
}

// CompileWith compiles a module within the engine's CompileLimits; it may
// take seconds for large modules, so callers run it off the request path.
// ctx bounds the wait for a compile slot. The module is checked first
// (CheckModule), its custom sections are dropped (no engine needs them,
// and names and debug information cost memory to decode), and its tables
// are capped (wasmbin.CapTables). A reactor is rewritten so that its
// state can be captured (wasmbin.ExportState). A module that compiled
// before with this cache (Cached) loads in a slot of its own, so it never
// waits for the compilation of a module that is not, nor makes one wait.
// Errors for a compilation the limits stopped wrap ErrCompileTime or
// ErrCompileMemory; with a compilation cache, such a module is refused at
// once from then on, with the same error, until the module, the limits or
// the engine change. The compiler's refusal of an invalid module is a
// *RefusedError. No error names a path of the host: those are in the
// engine's log.
func (e *Engine) CompileWith(ctx context.Context, wasm []byte, opts CompileOptions) (*Compiled, error) {
	parsed, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, err
	}
	if err := e.CheckModule(parsed, opts.Start); err != nil {
		return nil, err
	}
	given := wasm
	cached := e.Cached(given)
	if wasm, err = wasmbin.StripCustom(wasm); err != nil {
		return nil, err
	}
	wasm, tableMax, err := wasmbin.CapTables(wasm, maxTableElements)
	if err != nil {
		return nil, err
	}
	var x *reactor
	var data *memImage
	switch {
	case opts.Start == abi.StartReactor:
		if wasm, x, err = newReactor(wasm, parsed); err != nil {
			return nil, err
		}
	case !e.b.mapsData():
		var imageErr error
		if wasm, data, imageErr = dataImage(wasm, parsed); imageErr != nil {
			e.log.Warn("the module's data segments are written into each instance: their image could not be made", "file", opts.Name, "err", imageErr)
		}
	}
	// Until c owns it, the image is closed with any failure below.
	ok := false
	defer func() {
		if data != nil && !ok {
			data.close()
		}
	}()
	if refused, record := e.recall(wasm); refused != nil {
		e.log.Info("module refused without compiling: it passed the same compile limit before (a new limit, or removing the record, tries again)", "file", opts.Name, "reason", refused, "record", record)
		return nil, refused
	}
	q := e.compiling
	if cached {
		q = e.loading
	}
	p, err := e.bounded(ctx, q, wasm, opts.Schedule)
	var limited *compileError
	switch {
	case errors.As(err, &limited):
		e.remember(wasm, limited)
		return nil, err
	case err != nil:
		return nil, err
	}
	if !cached {
		e.mark(given)
	}
	if x != nil && p.images() {
		x.wasm = wasm
	}
	c := &Compiled{p: p, reserve: reserve(parsed.Shape, tableMax), reactor: x, data: data, engine: e, log: e.log}
	if len(parsed.Memories) == 1 {
		c.minPages = parsed.Memories[0].MinPages
	}
	ok = true
	return c, nil
}

// Close frees the compiled code, the snapshot and the data image.
// Instances already made keep their own mappings of an image.
func (c *Compiled) Close(ctx context.Context) error {
	c.setSnapshot(nil, nil)
	err := c.p.close(ctx)
	if c.data != nil {
		err = errors.Join(err, c.data.close())
	}
	return err
}

// Run is one invocation of a compiled module.
type Run struct {
	Args   []string
	Stdin  []byte
	Limits Limits
	// Reporter receives the guest's log and progress calls; nil drops them.
	Reporter Reporter
	// Env is the guest's whole environment.
	Env map[string]string
	// Mounts are the only directories the guest sees.
	Mounts []Mount
	// HTTP makes the guest's wasmcp.http_request calls; nil refuses them.
	HTTP HTTPDoer
	// Asker sends the guest's asks of the client (wasmcp.elicit,
	// create_message, list_roots); nil refuses them.
	Asker Asker
}

// Outcome is what a run produced.
type Outcome struct {
	Stdout, Stderr []byte
	// Failure is nil when the module ran to completion and exited 0.
	Failure *Failure
	// PeakMemory is the largest linear memory the instance had, in bytes.
	PeakMemory int64
	Duration   time.Duration
	// Denials are the permissions the guest tried to use and lacked.
	Denials Denials
}

var (
	errTimeLimit   = errors.New("time limit")
	errStdoutLimit = errors.New("stdout limit")
	errStderrLimit = errors.New("stderr limit")
	errCancelled   = errors.New("cancelled by the caller")
	errDiscarded   = errors.New("prepared instance discarded")
)

// ending is how a guest's _start ended, in terms every backend can give.
type ending struct {
	startup  string // the reactor start-up export it ended in, if it did
	exited   bool   // the guest called proc_exit (or returned: status 0)
	status   uint32 // its exit status
	trap     string // why the guest trapped, if it did
	overflow bool   // the trap was a stack overflow
	err      error  // the engine's own words: what failed, if the engine did, or about the trap
}

// trapReasons are the traps a model is told of by name: WebAssembly's, in
// the words wazero uses and the wasmtime backend maps its trap codes to,
// and WASI's refusal of a call's arguments. Any other reason is an
// engine's own text, which stays in the server's log.
var trapReasons = map[string]bool{
	"unreachable": true, "integer divide by zero": true, "integer overflow": true,
	"invalid conversion to integer": true, "out of bounds memory access": true,
	"invalid table access": true, "indirect call type mismatch": true,
	"unaligned atomic": true, "null reference": true, "uncaught exception": true,
	trapWASIArguments: true,
}

// trapWASIArguments is how a run ends on wasmtime when a WASI function
// refuses its arguments, as WASI's legacy rules let it: behind the
// checks of the wasmtime backend's shadows, for a misaligned pointer.
const trapWASIArguments = "a WASI call was given an argument it cannot use (a pointer outside the tool's memory, a misaligned pointer, or a value out of range)"

// memoryUse is what a backend knows of an instance's linear memory.
type memoryUse interface {
	// peak is the largest size the memory had, in bytes.
	peak() uint64
	// held is what the engine holds for the memory now, in bytes: at
	// least its size, at most the limit.
	held() uint64
	// refused is the largest size refused to the guest, 0 if none. A
	// backend that cannot see refusals says so (exact false) and guesses
	// from how close to the limit the memory ended.
	refused() (size uint64, exact bool)
}

// classify turns how a run ended into a Failure, or nil for success. A
// reactor's start-up that ended the run failed, even with status 0: its
// call never ran.
func classify(runCtx context.Context, lim Limits, mem memoryUse, end ending) *Failure {
	f := classifyEnd(runCtx, lim, mem, end)
	switch {
	case end.startup == "":
		return f
	case f == nil:
		return &Failure{Kind: Exit, Detail: fmt.Sprintf("the tool exited during its start-up (%s), before its call ran; a reactor's start-up must return", end.startup)}
	case f.Kind != Cancelled:
		f.Detail = fmt.Sprintf("the tool's start-up (%s) failed: %s", end.startup, f.Detail)
	}
	return f
}

// classifyEnd is classify for any end. The cause of a cancelled run is
// checked first: when the server stops a guest (time, output), the guest's
// own exit code says nothing.
func classifyEnd(runCtx context.Context, lim Limits, mem memoryUse, end ending) *Failure {
	switch context.Cause(runCtx) {
	case errTimeLimit:
		return &Failure{Kind: TimeLimit, Detail: fmt.Sprintf("the tool ran longer than its %s time limit and was stopped", lim.Timeout)}
	case errStdoutLimit:
		return &Failure{Kind: OutputLimit, Detail: fmt.Sprintf("the tool wrote more than %s to stdout and was stopped", bytesText(uint64(lim.Output)))}
	case errStderrLimit:
		return &Failure{Kind: OutputLimit, Detail: fmt.Sprintf("the tool wrote more than %s to stderr and was stopped", bytesText(uint64(lim.Output)))}
	case errCancelled, errDiscarded:
		return &Failure{Kind: Cancelled, Detail: "the call was cancelled by the client"}
	case ErrEngineClosed:
		return &Failure{Kind: Cancelled, Detail: shuttingDown}
	case errInputRequired:
		return &Failure{Kind: InputRequired, Detail: ErrInputRequired.Error()}
	case errAskLimit:
		return &Failure{Kind: AskLimit, Detail: fmt.Sprintf("the tool asked the client more than %d times in one call and was stopped: a call may ask at most %d times (does the tool ask in a loop?)", abi.MaxAsks, abi.MaxAsks)}
	}
	switch {
	case end.exited && end.status == 0:
		return nil
	case end.exited:
		if f := memoryFailure(mem, lim); f != nil {
			return f
		}
		return &Failure{Kind: Exit, ExitCode: end.status, Detail: fmt.Sprintf("the tool exited with status %d", end.status)}
	case end.overflow:
		return &Failure{Kind: StackOverflow, Detail: "the tool overflowed its call stack (unbounded recursion?)"}
	case end.trap != "":
		if f := memoryFailure(mem, lim); f != nil {
			return f
		}
		if trapReasons[end.trap] {
			return &Failure{Kind: Trap, Detail: "the tool trapped: " + end.trap, Cause: end.err}
		}
		cause := end.err
		if cause == nil {
			cause = errors.New(end.trap)
		}
		return &Failure{Kind: Trap, Detail: "the tool trapped", Cause: cause}
	case end.err != nil:
		if f := memoryFailure(mem, lim); f != nil {
			return f
		}
		return &Failure{Kind: Internal, Detail: "the module could not be run: the engine failed (its error is for the server's operator)", Cause: end.err}
	}
	return nil
}

// memoryFailure blames the memory limit for a failed run, if the guest
// was refused memory.
func memoryFailure(mem memoryUse, lim Limits) *Failure {
	denied, exact := mem.refused()
	if denied == 0 {
		return nil
	}
	if !exact {
		return &Failure{Kind: MemoryLimit, Detail: fmt.Sprintf("the tool ran out of memory: it had %s when it failed, close to its limit; the limit is %s", bytesText(mem.peak()), bytesText(uint64(lim.Memory)))}
	}
	return &Failure{Kind: MemoryLimit, Detail: fmt.Sprintf("the tool tried to grow its memory to %s; the limit is %s", bytesText(denied), bytesText(uint64(lim.Memory)))}
}

// cappedBuffer collects a guest's output up to a limit. Past it, the write
// fails and onFull stops the run: a guest that ignores write errors (most C
// programs do) would otherwise keep the CPU busy until its time limit.
type cappedBuffer struct {
	buf    bytes.Buffer
	limit  int64
	onFull func()
	full   bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.full {
		return 0, errOutputFull
	}
	room := c.limit - int64(c.buf.Len())
	if int64(len(p)) <= room {
		return c.buf.Write(p)
	}
	c.buf.Write(p[:max(room, 0)])
	c.full = true
	c.onFull()
	return int(max(room, 0)), errOutputFull
}

var errOutputFull = errors.New("output limit reached")

func bytesText(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.4g MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.4g KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// removeCache removes a private compilation cache. wasmtime updates the
// cache's usage statistics from a thread of its own, which closing the
// engine does not wait for, so a file may appear while the directory is
// removed: a few more passes take it too.
func removeCache(dir string) error {
	err := os.RemoveAll(dir)
	for i := 0; err != nil && i < 10; i++ {
		err = os.RemoveAll(dir)
	}
	return err
}
