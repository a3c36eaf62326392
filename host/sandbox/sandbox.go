// Package sandbox runs WebAssembly tool modules in wazero under limits: one
// fresh instance per run, nothing granted but arguments, stdio, clocks and
// randomness, and every way a run can go wrong reported as a Failure.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// pageSize is the size of a Wasm memory page.
const pageSize = 64 << 10

// Limits bound one run.
type Limits struct {
	Timeout time.Duration
	Memory  int64 // bytes of linear memory
	Output  int64 // bytes of stdout, and separately of stderr
}

// Config configures an Engine.
type Config struct {
	// CacheDir, when set, keeps compiled native code on disk so that a
	// restart does not recompile. It holds executable code: it must be
	// writable only by the server's user.
	CacheDir string
}

// Engine compiles and runs modules. One Engine serves every module: memory
// limits are enforced per instance (see meter), so modules with different
// limits share the runtime and its compiled WASI host module.
type Engine struct {
	rt       wazero.Runtime
	cache    wazero.CompilationCache
	provided map[string]map[string]bool // import module → function names

	// mu keeps Close from closing the runtime under a compile in progress,
	// which makes wazero panic: Compile holds it for reading.
	mu     sync.RWMutex
	closed bool
}

// NewEngine starts a wazero runtime with WASI preview 1.
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	rc := wazero.NewRuntimeConfig().
		// Interrupts a run when its context ends; without it a guest's loop
		// would ignore the time limit.
		WithCloseOnContextDone(true)
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		if err := os.MkdirAll(cfg.CacheDir, 0o700); err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
		cache = c
		rc = rc.WithCompilationCache(c)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	wasi, err := wasi_snapshot_preview1.NewBuilder(rt).Compile(ctx)
	if err != nil {
		return nil, fmt.Errorf("compiling WASI: %w", err)
	}
	names := map[string]bool{}
	for name := range wasi.ExportedFunctions() {
		names[name] = true
	}
	if _, err := rt.InstantiateModule(ctx, wasi, wazero.NewModuleConfig()); err != nil {
		return nil, fmt.Errorf("instantiating WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		return nil, fmt.Errorf("instantiating the %s host module: %w", abi.HostModule, err)
	}
	return &Engine{
		rt:    rt,
		cache: cache,
		provided: map[string]map[string]bool{
			wasi_snapshot_preview1.ModuleName: names,
			abi.HostModule:                    hostFunctionNames(),
		},
	}, nil
}

// Close releases the runtime and the compilation cache.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	err := e.rt.Close(ctx)
	if e.cache != nil {
		err = errors.Join(err, e.cache.Close(ctx))
	}
	return err
}

// CheckModule reports why a parsed module could never run here: it imports
// something the engine does not provide, or it is not a WASI command.
func (e *Engine) CheckModule(m *wasmbin.Module) error {
	for _, imp := range m.Imports {
		funcs, ok := e.provided[imp.Module]
		if !ok {
			return fmt.Errorf("imports %s.%s, but wasmcp provides no module %q (tools may import only %s and %s)", imp.Module, imp.Name, imp.Module, wasi_snapshot_preview1.ModuleName, abi.HostModule)
		}
		if imp.Kind != wasmbin.KindFunc || !funcs[imp.Name] {
			return fmt.Errorf("imports %s.%s, which wasmcp does not provide", imp.Module, imp.Name)
		}
	}
	if !m.HasExport("_start", wasmbin.KindFunc) {
		return errors.New(`exports no "_start" function: a tool must be a WASI command module (for Go: GOOS=wasip1 GOARCH=wasm go build)`)
	}
	if len(m.Memories) > 1 {
		return errors.New("defines more than one memory; multi-memory modules are not supported")
	}
	return nil
}

// Compiled is a module ready to run.
type Compiled struct {
	cm       wazero.CompiledModule
	minPages uint64
}

// Compile compiles a module. It may take seconds for large modules; callers
// run it off the request path. The module must have passed CheckModule.
func (e *Engine) Compile(ctx context.Context, wasm []byte) (*Compiled, error) {
	parsed, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, err
	}
	if err := e.CheckModule(parsed); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, errors.New("the engine is closed")
	}
	cm, err := e.rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("compiling: %w", err)
	}
	c := &Compiled{cm: cm}
	if len(parsed.Memories) == 1 {
		c.minPages = parsed.Memories[0].MinPages
	}
	return c, nil
}

// Close frees the compiled code.
func (c *Compiled) Close(ctx context.Context) error { return c.cm.Close(ctx) }

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
	Denials []string
}

var (
	errTimeLimit   = errors.New("time limit")
	errStdoutLimit = errors.New("stdout limit")
	errStderrLimit = errors.New("stderr limit")
	errCancelled   = errors.New("cancelled by the caller")
	errDiscarded   = errors.New("prepared instance discarded")
)

// sleeper is WASI's nanosleep for one run: real time, cut short when the
// run ends, so a sleeping guest cannot outlive its time limit.
func sleeper(ctx context.Context) sys.Nanosleep {
	return func(ns int64) {
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// classify turns how a run ended into a Failure, or nil for success. The
// cause of a cancelled run is checked first: when the server stops a guest
// (time, output), the guest's own exit code says nothing.
func classify(runCtx context.Context, lim Limits, mem *meter, err error) *Failure {
	switch context.Cause(runCtx) {
	case errTimeLimit:
		return &Failure{Kind: TimeLimit, Detail: fmt.Sprintf("the tool ran longer than its %s time limit and was stopped", lim.Timeout)}
	case errStdoutLimit:
		return &Failure{Kind: OutputLimit, Detail: fmt.Sprintf("the tool wrote more than %s to stdout and was stopped", bytesText(uint64(lim.Output)))}
	case errStderrLimit:
		return &Failure{Kind: OutputLimit, Detail: fmt.Sprintf("the tool wrote more than %s to stderr and was stopped", bytesText(uint64(lim.Output)))}
	case errCancelled, errDiscarded:
		return &Failure{Kind: Cancelled, Detail: "the call was cancelled by the client"}
	}
	if err == nil {
		return nil
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == 0 {
			return nil
		}
		if f := memoryOrNil(mem); f != nil {
			return f
		}
		return &Failure{Kind: Exit, ExitCode: exit.ExitCode(), Detail: fmt.Sprintf("the tool exited with status %d", exit.ExitCode())}
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	if strings.HasSuffix(first, "stack overflow") {
		return &Failure{Kind: StackOverflow, Detail: "the tool overflowed its call stack (unbounded recursion?)"}
	}
	if reason, ok := trapReason(first); ok {
		if f := memoryOrNil(mem); f != nil {
			return f
		}
		return &Failure{Kind: Trap, Detail: "the tool trapped: " + reason}
	}
	return memoryOrInternal(mem, err)
}

func memoryOrNil(mem *meter) *Failure {
	if mem.denied == 0 {
		return nil
	}
	return &Failure{Kind: MemoryLimit, Detail: fmt.Sprintf("the tool tried to grow its memory to %s; the limit is %s", bytesText(mem.denied), bytesText(mem.limit))}
}

func memoryOrInternal(mem *meter, err error) *Failure {
	if f := memoryOrNil(mem); f != nil {
		return f
	}
	return &Failure{Kind: Internal, Detail: "the module could not be run: " + err.Error()}
}

// trapReason extracts the reason from the first line of a wazero runtime
// error, which reads "... wasm error: <reason>". wazero exports no error
// values for traps or stack overflow, so the text is the interface.
func trapReason(first string) (string, bool) {
	const prefix = "wasm error: "
	i := strings.Index(first, prefix)
	if i < 0 {
		return "", false
	}
	return first[i+len(prefix):], true
}

// meter backs one instance's linear memory and enforces its limit. It sees
// every grow request, so unlike the runtime-wide page limit (which fails a
// grow silently) it can tell that the limit, not the guest, ended a run.
type meter struct {
	limit  uint64
	peak   uint64
	denied uint64 // the largest size refused, 0 if none
	buf    []byte
}

// Allocate implements experimental.MemoryAllocator. Multi-memory is refused
// at load, so each instance asks once.
func (m *meter) Allocate(_, _ uint64) experimental.LinearMemory { return m }

// Reallocate implements experimental.LinearMemory.
func (m *meter) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.denied = max(m.denied, size)
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		// Bytes between len and cap were zeroed by make and never exposed.
		m.buf = m.buf[:size]
	} else {
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.limit))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.peak = max(m.peak, size)
	return m.buf
}

// Free implements experimental.LinearMemory.
func (m *meter) Free() { m.buf = nil }

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
