package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// wazeroBackend runs modules in wazero, compiled to native code.
type wazeroBackend struct {
	rt      wazero.Runtime
	cache   wazero.CompilationCache
	defined provided
	pool    *memPool
}

func newWazero(ctx context.Context, cfg Config) (*wazeroBackend, error) {
	// Runs are stopped through the global wasmbin.StopChecks adds, not by
	// wazero's closing a module when its context ends: that leaves native
	// code for Go at every loop iteration to ask whether to stop.
	rc := wazero.NewRuntimeConfig()
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
		cache = c
		rc = rc.WithCompilationCache(c)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if err := instantiateWASI(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("instantiating WASI: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("instantiating the %s host module: %w", abi.HostModule, err)
	}
	defined, err := wazeroProvided(rt)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &wazeroBackend{rt: rt, cache: cache, defined: defined, pool: newMemPool(pooledBuffers())}, nil
}

func (w *wazeroBackend) close(ctx context.Context) error {
	err := w.rt.Close(ctx)
	if w.cache != nil {
		err = errors.Join(err, w.cache.Close(ctx))
	}
	return err
}

func (w *wazeroBackend) compile(ctx context.Context, wasm []byte) (program, error) {
	// With more than one worker, wazero checks ctx between functions, so
	// that a compilation can be stopped.
	ctx = experimental.WithCompilationWorkers(ctx, max(2, runtime.GOMAXPROCS(0)/2))
	wasm, err := wasmbin.StopChecks(wasm)
	if err != nil {
		return nil, fmt.Errorf("adding stop checks: %w", err)
	}
	cm, err := w.rt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	return &wazeroProgram{rt: w.rt, cm: cm, pool: w.pool}, nil
}

// mapsData is false: wazero copies data segments into every instance.
func (w *wazeroBackend) mapsData() bool { return false }

type wazeroProgram struct {
	rt   wazero.Runtime
	cm   wazero.CompiledModule
	pool *memPool
}

func (p *wazeroProgram) close(ctx context.Context) error { return p.cm.Close(ctx) }

func (p *wazeroProgram) prepares(Run) bool { return true }

func (p *wazeroProgram) snapshots() bool { return true }

func (p *wazeroProgram) images() bool { return false }

func (p *wazeroProgram) start(in *instance, r Run, stdin io.Reader) *Failure {
	mem := &meter{limit: uint64(r.Limits.Memory), pool: p.pool}
	image := in.plan.memory
	if s := in.plan.from; s != nil {
		image = s.memory
	}
	if image != nil {
		buf, err := image.mapping(mem.limit)
		if err != nil {
			return &Failure{Kind: Internal, Detail: "the module could not be run: its initial memory could not be mapped", Cause: err}
		}
		mem.buf, mem.image = buf[:0], image
	}
	in.mem = mem
	runCtx := experimental.WithMemoryAllocator(in.ctx, mem)
	runCtx = context.WithValue(runCtx, runStateKey{}, in.state)

	// Arguments, environment and stdio are the state's (args_get and
	// environ_get are shadowed), which a reactor's start-up sees apart
	// from its call.
	st := in.state
	cfg := wazero.NewModuleConfig().
		WithName(""). // anonymous, so instances of one module can run at once
		WithStdin(readerFunc(func(b []byte) (int, error) { return st.io.stdin.Read(b) })).
		WithStdout(writerFunc(func(b []byte) (int, error) { return st.io.stdout.Write(b) })).
		WithStderr(writerFunc(func(b []byte) (int, error) { return st.io.stderr.Write(b) })).
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader).
		// Nothing runs inside instantiation (a start section is an export
		// now): until it returns, the run cannot be stopped.
		WithStartFunctions()
	var roots []*confinedFS
	if len(r.Mounts) > 0 {
		fsc := wazero.NewFSConfig().(sysfs.FSConfig)
		for _, m := range r.Mounts {
			cfs, err := newConfinedFS(m)
			if err != nil {
				for _, r := range roots {
					r.root.Close()
				}
				return mountFailure(m.Guest, err)
			}
			roots = append(roots, cfs)
			fsc = fsc.WithSysFSMount(cfs, m.Guest).(sysfs.FSConfig)
		}
		cfg = cfg.WithFSConfig(fsc.(wazero.FSConfig))
	}

	go in.guard(func() (ending, func()) {
		mod, err := p.rt.InstantiateModule(runCtx, p.cm, cfg)
		teardown := func() {
			if mod != nil {
				_ = mod.Close(context.Background()) // frees mem
			} else {
				mem.Free() // a snapshot's mapping wazero may never have taken
			}
			for _, r := range roots {
				r.root.Close()
			}
		}
		if err != nil {
			return wazeroEnding(err), teardown
		}
		stop, ok := mod.ExportedGlobal(wasmbin.StopExport).(api.MutableGlobal)
		if !ok {
			return ending{err: errors.New("the module was not compiled with its stop checks")}, teardown
		}
		// Clearing the global, from the goroutine that ends the context,
		// is a store the guest's next stop point loads.
		unwatch := context.AfterFunc(in.ctx, func() { stop.Set(0) })
		defer unwatch()
		if in.plan.run == "_start" {
			return runCommand(runCtx, mod), teardown
		}
		return runPlan(runCtx, in, mod), teardown
	})
	return nil
}

// runCommand runs a command as instantiation would have, had StopChecks
// not moved its start section: the start function, then _start.
func runCommand(ctx context.Context, mod api.Module) ending {
	for _, name := range []string{wasmbin.StartExport, "_start"} {
		if f := mod.ExportedFunction(name); f != nil {
			if _, err := f.Call(ctx); err != nil {
				return wazeroEnding(err)
			}
		}
	}
	return ending{exited: true}
}

// runPlan runs a reactor's plan in its instance.
func runPlan(ctx context.Context, in *instance, mod api.Module) ending {
	if s := in.plan.from; s != nil {
		// The memory is the snapshot's already (the meter maps it): it
		// needs only its size.
		if mem := mod.Memory(); mem != nil && uint64(mem.Size()) < s.size {
			if _, ok := mem.Grow(uint32((s.size - uint64(mem.Size())) / pageSize)); !ok {
				return ending{err: errors.New("the snapshot's memory could not be restored")}
			}
		}
		for i, g := range in.plan.globals {
			mg, ok := mod.ExportedGlobal(g.Export).(api.MutableGlobal)
			if !ok {
				return ending{err: fmt.Errorf("the snapshot's global %s could not be restored", g.Export)}
			}
			mg.Set(s.globals[i])
		}
	}
	if len(in.plan.data) > 0 {
		if end := writeData(memoryOf(mod), in.plan.data); end.startup != "" {
			return end
		}
	}
	for _, name := range in.plan.init {
		if _, err := mod.ExportedFunction(name).Call(ctx); err != nil {
			end := wazeroEnding(err)
			end.startup = name
			return end
		}
	}
	if in.plan.capture != nil {
		var memory []byte
		if mem := mod.Memory(); mem != nil {
			b, _ := mem.Read(0, mem.Size())
			memory = bytes.Clone(b)
		}
		globals := make([]uint64, len(in.plan.globals))
		for i, g := range in.plan.globals {
			globals[i] = mod.ExportedGlobal(g.Export).Get()
		}
		in.plan.capture(memory, globals)
		return ending{exited: true}
	}
	in.beginCall()
	_, err := mod.ExportedFunction(in.plan.run).Call(ctx)
	return wazeroEnding(err)
}

// readerFunc and writerFunc are functions as an io.Reader and an
// io.Writer.
type (
	readerFunc func([]byte) (int, error)
	writerFunc func([]byte) (int, error)
)

func (f readerFunc) Read(b []byte) (int, error)  { return f(b) }
func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// wazeroEnding reads how a run ended from wazero's error. wazero exports
// no error values for traps or stack overflow, so their text is the
// interface.
func wazeroEnding(err error) ending {
	if err == nil {
		return ending{exited: true}
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return ending{exited: true, status: exit.ExitCode()}
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	if strings.HasSuffix(first, "stack overflow") {
		return ending{overflow: true}
	}
	// A trap reads "... wasm error: <reason>".
	const prefix = "wasm error: "
	if i := strings.Index(first, prefix); i >= 0 {
		return ending{trap: first[i+len(prefix):]}
	}
	return ending{err: err}
}

// meter backs one instance's linear memory and enforces its limit. It sees
// every grow request, so unlike the runtime-wide page limit (which fails a
// grow silently) it can tell that the limit, not the guest, ended a run.
type meter struct {
	limit  uint64
	max    uint64
	denied uint64 // the largest size refused, 0 if none
	buf    []byte
	// image, when set, is the memory image that buf maps, whose capacity
	// is the limit: it never moves.
	image *memImage
	// pool gives a memory that starts within pooledMemory its buffer;
	// pooled is that buffer, given back cleared when the instance is
	// freed. While buf is in it, onPool is set; once the memory outgrows
	// it, pooled's length is what the guest could have written of it.
	pool   *memPool
	pooled []byte
	onPool bool
}

func (m *meter) peak() uint64 { return m.max }

// held is what the memory holds: its buffer's capacity, which grows ahead
// of the guest, up to the limit, so that growing a page at a time does
// not copy every time. A mapped image has the whole limit as its
// capacity, but only address space: what it holds is its pages up to the
// memory's size (copied as they are written, or shared with the image).
// A pooled buffer is the pool's whether or not it is in use: an instance
// holds what it may have written of it.
func (m *meter) held() uint64 {
	switch {
	case m.image != nil || m.onPool:
		return uint64(len(m.buf))
	default:
		return uint64(cap(m.buf)) + uint64(len(m.pooled))
	}
}

func (m *meter) refused() (uint64, bool) { return m.denied, true }

// Allocate implements experimental.MemoryAllocator. Multi-memory is refused
// at load, so each instance asks once.
func (m *meter) Allocate(_, _ uint64) experimental.LinearMemory { return m }

// Reallocate implements experimental.LinearMemory.
func (m *meter) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.denied = max(m.denied, size)
		return nil
	}
	if m.buf == nil && m.pool != nil && size <= pooledMemory {
		m.pooled = m.pool.get()
		m.buf, m.onPool = m.pooled, true
	}
	if size <= uint64(cap(m.buf)) {
		// Bytes between len and cap were zeroed, by make or by the pool,
		// and never exposed.
		m.buf = m.buf[:size]
	} else {
		if m.onPool {
			m.pooled, m.onPool = m.buf, false
		}
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.limit))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.max = max(m.max, size)
	return m.buf
}

// Free implements experimental.LinearMemory. It may be called again, by
// the instance's teardown, for a mapping wazero never took.
func (m *meter) Free() {
	if m.image != nil {
		m.image.release(m.buf, m.max)
		m.image = nil
	}
	if m.pooled != nil {
		if m.onPool {
			m.pooled = m.buf
		}
		m.pool.put(m.pooled)
		m.pooled, m.onPool = nil, false
	}
	m.buf = nil
}

// instantiateWASI defines WASI preview 1 in the runtime: wazero's own
// functions, but for those whose arguments both engines check alike.
// poll_oneoff is shared (see pollOneoff), and the four that take iovecs
// check them with ioArgs before wazero's own serve them.
func instantiateWASI(ctx context.Context, rt wazero.Runtime) error {
	stock, err := stockWASI(ctx, rt)
	if err != nil {
		return err
	}
	b := rt.NewHostModuleBuilder(wasiModule)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	define := func(name string, f api.GoModuleFunc, params ...api.ValueType) {
		b.NewFunctionBuilder().WithGoModuleFunction(f, params, []api.ValueType{i32}).Export(name)
	}
	advise := stock["fd_advise"]
	define("poll_oneoff", func(ctx context.Context, m api.Module, stack []uint64) {
		// wazero keeps its descriptor table to itself, but its fd_advise,
		// with the advice "normal" for no bytes, answers EBADF exactly
		// when a descriptor is not open, and otherwise does nothing.
		open := func(fd uint32) bool {
			probe := []uint64{uint64(fd), 0, 0, 0}
			advise.Call(ctx, m, probe)
			return probe[0] != errnoBadf
		}
		// A run that ends meanwhile is stopped by wazero on return.
		errno, _ := pollOneoff(ctx, memoryOf(m), open, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
		stack[0] = uint64(errno)
	}, i32, i32, i32, i32)
	for _, name := range []string{"fd_read", "fd_write"} {
		define(name, checkIO(stock[name], 3), i32, i32, i32, i32)
	}
	strs := func(list func(*runState) []string, write func(guestMemory, []string, uint32, uint32) int32) api.GoModuleFunc {
		return func(ctx context.Context, m api.Module, stack []uint64) {
			var l []string
			if st := stateOf(ctx); st != nil {
				l = list(st)
			}
			stack[0] = uint64(uint32(write(memoryOf(m), l, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))))
		}
	}
	args := func(st *runState) []string { return st.io.args }
	env := func(st *runState) []string { return st.io.env }
	define("args_sizes_get", strs(args, stringsSizes), i32, i32)
	define("args_get", strs(args, writeStrings), i32, i32)
	define("environ_sizes_get", strs(env, stringsSizes), i32, i32)
	define("environ_get", strs(env, writeStrings), i32, i32)
	for _, name := range []string{"fd_pread", "fd_pwrite"} {
		define(name, checkIO(stock[name], 4), i32, i32, i32, i64, i32)
	}
	_, err = b.Instantiate(ctx)
	return err
}

// stockWASI is wazero's own WASI functions that instantiateWASI wraps or
// calls.
func stockWASI(ctx context.Context, rt wazero.Runtime) (map[string]api.GoModuleFunction, error) {
	cm, err := wasi_snapshot_preview1.NewBuilder(rt).Compile(ctx)
	if err != nil {
		return nil, err
	}
	defer cm.Close(ctx)
	funcs := map[string]api.GoModuleFunction{}
	for _, name := range []string{"fd_advise", "fd_read", "fd_write", "fd_pread", "fd_pwrite"} {
		f, ok := cm.ExportedFunctions()[name].GoFunction().(api.GoModuleFunction)
		if !ok {
			return nil, fmt.Errorf("wazero's %s is not a Go function", name)
		}
		funcs[name] = f
	}
	return funcs, nil
}

// checkIO is one of wazero's functions that take iovecs, behind ioArgs's
// checks. Its parameters are a descriptor, the iovecs and their count,
// and at countAt where the byte count goes.
func checkIO(stock api.GoModuleFunction, countAt int) api.GoModuleFunc {
	return func(ctx context.Context, m api.Module, stack []uint64) {
		if _, errno := ioArgs(memoryOf(m), api.DecodeU32(stack[1]), api.DecodeU32(stack[2]), api.DecodeU32(stack[countAt])); errno != 0 {
			stack[0] = uint64(errno)
			return
		}
		stock.Call(ctx, m, stack)
	}
}

// instantiateHostModule defines the wasmcp host module in the runtime, from
// abi.HostFunctions.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abi.HostModule)
	err := defineHost(map[string]api.GoModuleFunc{
		"log":            hostLog,
		"progress":       hostProgress,
		"http_request":   hostHTTPRequest,
		"http_response":  hostHTTPResponse,
		"elicit":         hostAsk("elicit"),
		"create_message": hostAsk("create_message"),
		"list_roots":     hostAsk("list_roots"),
		"ask_all":        hostAsk(abi.AskAll),
		"ask_response":   hostAskResponse,
	}, func(f abi.HostFunction, impl api.GoModuleFunc) error {
		names := make([]string, len(f.Params))
		for i, p := range f.Params {
			names[i] = p.Name
		}
		b.NewFunctionBuilder().
			WithGoModuleFunction(impl, hostParams(f), []api.ValueType{api.ValueTypeI32}).
			WithParameterNames(names...).
			Export(f.Name)
		return nil
	})
	if err != nil {
		return err
	}
	_, err = b.Instantiate(ctx)
	return err
}

// wazeroProvided reads the types of the functions a module may import
// from the runtime's own definitions of WASI and of the wasmcp host module.
func wazeroProvided(rt wazero.Runtime) (provided, error) {
	return readProvided(func(module, name string) (wasmbin.FuncType, bool) {
		def, ok := rt.Module(module).ExportedFunctionDefinitions()[name]
		if !ok {
			return wasmbin.FuncType{}, false
		}
		return wasmbin.FuncType{Params: valTypes(def.ParamTypes()), Results: valTypes(def.ResultTypes())}, true
	})
}

func (w *wazeroBackend) provides() provided { return w.defined }

// The wazero host functions take the run's state from the context
// start gave the instance, and its memory from the calling module.

type runStateKey struct{}

func stateOf(ctx context.Context) *runState {
	st, _ := ctx.Value(runStateKey{}).(*runState)
	return st
}

func memoryOf(m api.Module) guestMemory {
	if mem := m.Memory(); mem != nil {
		return mem
	}
	return nil
}

func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	level := api.DecodeI32(stack[0])
	msg, code := readMessage(memoryOf(m), api.DecodeU32(stack[1]), api.DecodeU32(stack[2]))
	stack[0] = api.EncodeI32(stateOf(ctx).log(level, msg, code))
}

func hostProgress(ctx context.Context, m api.Module, stack []uint64) {
	progress, total := api.DecodeF64(stack[0]), api.DecodeF64(stack[1])
	msg, code := readMessage(memoryOf(m), api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
	stack[0] = api.EncodeI32(stateOf(ctx).reportProgress(progress, total, msg, code))
}

func hostHTTPRequest(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n, lenPtr := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	stack[0] = api.EncodeI32(stateOf(ctx).httpRequest(ctx, memoryOf(m), ptr, n, lenPtr))
}

func hostHTTPResponse(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	stack[0] = api.EncodeI32(stateOf(ctx).httpResponse(memoryOf(m), ptr, n))
}

// hostAsk is the function name of abi.AskFunctions, or ask_all. A run it
// stops ends as proc_exit ends one, before the guest runs on: the cause,
// which the run's context holds, is what classify reports.
func hostAsk(name string) api.GoModuleFunc {
	return func(ctx context.Context, m api.Module, stack []uint64) {
		ptr, n, lenPtr := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
		st := stateOf(ctx)
		stack[0] = api.EncodeI32(st.askHost(ctx, name, memoryOf(m), ptr, n, lenPtr))
		if st != nil && st.halt != nil {
			_ = m.CloseWithExitCode(ctx, 1)
			panic(sys.NewExitError(1))
		}
	}
}

func hostAskResponse(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	stack[0] = api.EncodeI32(stateOf(ctx).askResponse(memoryOf(m), ptr, n))
}
