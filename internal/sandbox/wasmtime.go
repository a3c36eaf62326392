//go:build wasmtime && cgo

package sandbox

/*
#include <stddef.h>
#include <stdint.h>

// Declared here rather than included: the headers live in the wasmtime-go
// module, whose library (linked through that package) defines them.
typedef struct wasmtime_store wasmtime_store_t;
typedef struct wasmtime_context wasmtime_context_t;
typedef struct wasmtime_error wasmtime_error_t;
extern wasmtime_error_t *wasmtime_error_new(const char *);
extern void wasmtime_store_epoch_deadline_callback(wasmtime_store_t *,
	wasmtime_error_t *(*)(wasmtime_context_t *, void *, uint64_t *, uint8_t *),
	void *, void (*)(void *));

// wasmcp_on_epoch runs at every epoch tick a guest sees: it stops the guest
// once Go has set its stop flag, and otherwise lets it run one more tick.
static wasmtime_error_t *wasmcp_on_epoch(wasmtime_context_t *ctx, void *stop, uint64_t *delta, uint8_t *kind) {
	if (__atomic_load_n((int32_t *)stop, __ATOMIC_ACQUIRE)) {
		return wasmtime_error_new("wasmcp: the run was stopped");
	}
	*delta = 1;
	*kind = 0; // WASMTIME_UPDATE_DEADLINE_CONTINUE
	return 0;
}

static void wasmcp_watch_epochs(void *store, void *stop) {
	wasmtime_store_epoch_deadline_callback((wasmtime_store_t *)store, wasmcp_on_epoch, stop, 0);
}

// WASI stdio from memory, for runs with mounts (see wasmtimeBackend).
typedef struct { size_t size; char *data; } wasmcp_byte_vec;
typedef ptrdiff_t (*wasmcp_writer)(void *, const unsigned char *, size_t);
extern void wasm_byte_vec_new(wasmcp_byte_vec *, size_t, const char *);
extern void wasi_config_set_stdin_bytes(void *, wasmcp_byte_vec *);
extern void wasi_config_set_stdout_custom(void *, wasmcp_writer, void *, void (*)(void *));
extern void wasi_config_set_stderr_custom(void *, wasmcp_writer, void *, void (*)(void *));
extern ptrdiff_t wasmcpWrite(void *, unsigned char *, size_t);

static void wasmcp_stdio(void *config, const char *in, size_t n, uintptr_t out, uintptr_t err) {
	wasmcp_byte_vec v;
	wasm_byte_vec_new(&v, n, in);
	wasi_config_set_stdin_bytes(config, &v);
	wasi_config_set_stdout_custom(config, (wasmcp_writer)wasmcpWrite, (void *)out, 0);
	wasi_config_set_stderr_custom(config, (wasmcp_writer)wasmcpWrite, (void *)err, 0);
}
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/cgo"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	wt "github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

const wasmtimeBuilt = true

// loadCacheConfig points wasmtime's compilation cache at dir. The binding
// takes the setting only as a file, which is read at once: each process
// writes one of its own and removes it, since servers and their compile
// workers sharing a cache directory would otherwise read one another's
// half-written file.
func loadCacheConfig(c *wt.Config, cacheDir, dir string) error {
	f, err := os.CreateTemp(cacheDir, "wasmtime-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	// strconv.Quote's escapes are TOML's for any path.
	_, err = f.WriteString("[cache]\ndirectory = " + strconv.Quote(dir) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return c.CacheConfigLoad(f.Name())
}

// epochTick is how often the engine's epoch advances. A guest is stopped
// at the first tick after its run's context ends, so this bounds how far a
// run can outlive its time limit or a cancellation.
const epochTick = 10 * time.Millisecond

// wasmtimeBackend runs modules in wasmtime, through wasmtime-go.
//
// Four things wasmtime-go does not offer are added around it:
//   - In-memory stdio. The binding can connect stdio only to files. A run
//     without mounts has no fds but 0 to 2, so fd_read and fd_write are
//     shadowed by host functions that serve them from the run's buffers,
//     and a prepared instance can block reading its arguments. A run with
//     mounts needs WASI's own fd_read and fd_write for its files, which
//     the shadows pass every other descriptor on to; any write WASI's own
//     make to stdout or stderr goes through the C API's custom writers,
//     which the binding does not wrap. Such a run is not prepared.
//   - Interruptible sleep. WASI's poll_oneoff sleeps in the host, deaf to
//     epochs, so it is shadowed by one that wakes when the run ends.
//   - Arguments checked before any work. WASI's own functions end the run
//     on arguments they cannot use, and some allocate what they are asked
//     for first; their shadows check (see wasmtime_wasi.go).
//   - Stopping one guest. Epoch interruption stops every guest at a shared
//     deadline; the C API's per-store epoch callback, which the binding
//     does not wrap either, checks the run's own stop flag at each tick.
type wasmtimeBackend struct {
	engine  *wt.Engine
	shadowd *wt.Linker    // for runs without mounts: stdio shadowed
	mounted *wt.Linker    // for runs with mounts: WASI's own stdio
	wasi    *wt.Linker    // WASI's own functions, for passOn and fdOpen
	through *wt.Module    // see throughModule
	probe   *wt.Module    // see probeModule
	defined provided      // what shadowd defines, which mounted defines too
	stop    chan struct{} // closed to stop the ticker
	stopped chan struct{} // closed by the ticker as it returns
}

// cPointer reads the C object out of a wasmtime-go Store or WasiConfig,
// whose first field it is; newWasmtime checks the layout.
func cPointer[T wt.Store | wt.WasiConfig](v *T) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(v))
}

func startsWithPointer(t reflect.Type) bool {
	f := t.Field(0)
	return f.Name == "_ptr" && f.Type.Kind() == reflect.Pointer && f.Offset == 0
}

func newWasmtime(cfg Config) (backend, error) {
	if !startsWithPointer(reflect.TypeFor[wt.Store]()) || !startsWithPointer(reflect.TypeFor[wt.WasiConfig]()) {
		return nil, errors.New("wasmtime-go's Store or WasiConfig no longer starts with its C pointer; wasmcp was written for the version in go.mod")
	}
	c := wt.NewConfig()
	c.SetEpochInterruption(true)
	// WebAssembly 2.0, as on wazero: wasmbin refuses the instructions of
	// later proposals at load, and the engine refuses them too.
	c.SetWasmThreads(false)
	c.SetWasmTailCall(false)
	c.SetWasmMultiMemory(false)
	c.SetWasmMemory64(false)
	c.SetWasmRelaxedSIMD(false)
	c.SetWasmFunctionReferences(false)
	c.SetWasmGC(false)
	if cfg.CacheDir != "" {
		dir := filepath.Join(cfg.CacheDir, "wasmtime")
		if err := loadCacheConfig(c, cfg.CacheDir, dir); err != nil {
			return nil, fmt.Errorf("compilation cache: %w", err)
		}
	}
	b := &wasmtimeBackend{engine: wt.NewEngineWithConfig(c), stop: make(chan struct{}), stopped: make(chan struct{})}
	b.shadowd, b.mounted, b.wasi = wt.NewLinker(b.engine), wt.NewLinker(b.engine), wt.NewLinker(b.engine)
	err := b.define(b.shadowd, false)
	if err == nil {
		err = b.define(b.mounted, true)
	}
	if err == nil {
		err = b.wasi.DefineWasi()
	}
	if err == nil {
		b.through, err = throughModule(b.engine)
	}
	if err == nil {
		b.probe, err = probeModule(b.engine)
	}
	if err == nil {
		b.defined, err = linked(b.engine, b.shadowd)
	}
	if err != nil {
		b.engine.Close()
		return nil, err
	}
	go b.tick()
	return b, nil
}

func (b *wasmtimeBackend) tick() {
	defer close(b.stopped)
	t := time.NewTicker(epochTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.engine.IncrementEpoch()
		case <-b.stop:
			return
		}
	}
}

func (b *wasmtimeBackend) define(l *wt.Linker, mounted bool) error {
	if err := l.DefineWasi(); err != nil {
		return fmt.Errorf("defining WASI: %w", err)
	}
	l.AllowShadowing(true)
	for _, f := range passedOn {
		if f.name == "fd_write" || f.name == "fd_read" {
			continue // served from the run's buffers below
		}
		if err := defineChecked(l, f.name, f.args); err != nil {
			return fmt.Errorf("defining %s.%s: %w", wasiModule, f.name, err)
		}
	}
	type def struct {
		module, name string
		f            any
	}
	defs := []def{
		{wasiModule, "args_get", argsGet},
		{wasiModule, "args_sizes_get", argsSizesGet},
		{wasiModule, "environ_get", environGet},
		{wasiModule, "environ_sizes_get", environSizesGet},
		{wasiModule, "fd_write", fdWrite},
		{wasiModule, "clock_res_get", clockResGet},
		{wasiModule, "clock_time_get", clockTimeGet},
		{wasiModule, "path_link", pathLink},
		{wasiModule, "path_symlink", pathSymlink},
		{wasiModule, "poll_oneoff", pollOneoffShadow},
		{wasiModule, "proc_exit", procExit},
		{wasiModule, "proc_raise", procRaise},
		{wasiModule, "random_get", randomGet},
		{wasiModule, "sock_accept", sockAccept},
		{wasiModule, "sock_recv", sockRecv},
		{wasiModule, "sock_send", sockSend},
		{wasiModule, "sock_shutdown", sockShutdown},
		{wasiModule, "fd_read", fdRead},
	}
	for _, d := range defs {
		if err := l.FuncWrap(d.module, d.name, d.f); err != nil {
			return fmt.Errorf("defining %s.%s: %w", d.module, d.name, err)
		}
	}
	return defineHost(map[string]func(*wt.Caller, []wt.Val) int32{
		"log":            wtLog,
		"progress":       wtProgress,
		"http_request":   wtHTTPRequest,
		"http_response":  wtHTTPResponse,
		"elicit":         wtAsk("elicit"),
		"create_message": wtAsk("create_message"),
		"list_roots":     wtAsk("list_roots"),
		"ask_all":        wtAsk(abi.AskAll),
		"ask_response":   wtAskResponse,
	}, func(f abi.HostFunction, impl func(*wt.Caller, []wt.Val) int32) error {
		params := make([]*wt.ValType, len(f.Params))
		for i, p := range f.Params {
			params[i] = wt.NewValType(wtKinds[wasmbin.ValType(p.Type)])
		}
		ty := wt.NewFuncType(params, []*wt.ValType{wt.NewValType(wt.KindI32)})
		return l.FuncNew(abi.HostModule, f.Name, ty, func(c *wt.Caller, args []wt.Val) ([]wt.Val, *wt.Trap) {
			code := impl(c, args)
			if st := runOf(c).in.state; st != nil && st.halt != nil {
				// The run's context holds why: classify reports it.
				return nil, errStopped()
			}
			return []wt.Val{wt.ValI32(code)}, nil
		})
	})
}

// wtKinds are wasmtime's kinds of the value types a host function may
// take or return.
var wtKinds = map[wasmbin.ValType]wt.ValKind{
	wasmbin.I32: wt.KindI32, wasmbin.I64: wt.KindI64, wasmbin.F32: wt.KindF32, wasmbin.F64: wt.KindF64,
	wasmbin.FuncRef: wt.KindFuncref, wasmbin.ExternRef: wt.KindExternref,
}

// linked reads the types of the functions a module may import from what
// the linker defines: WASI's own functions, their shadows, and the wasmcp
// host module. The binding lists nothing a linker holds, so each is
// looked up by name, in a store of its own.
func linked(engine *wt.Engine, l *wt.Linker) (provided, error) {
	store := wt.NewStore(engine)
	defer store.Close()
	kinds := map[wt.ValKind]wasmbin.ValType{}
	for t, k := range wtKinds {
		kinds[k] = t
	}
	types := func(vs []*wt.ValType) []wasmbin.ValType {
		out := make([]wasmbin.ValType, len(vs))
		for i, v := range vs {
			out[i] = kinds[v.Kind()]
		}
		return out
	}
	return readProvided(func(module, name string) (wasmbin.FuncType, bool) {
		ext := l.Get(store, module, name)
		if ext == nil || ext.Func() == nil {
			return wasmbin.FuncType{}, false
		}
		ft := ext.Type(store).FuncType()
		return wasmbin.FuncType{Params: types(ft.Params()), Results: types(ft.Results())}, true
	})
}

func (b *wasmtimeBackend) provides() provided { return b.defined }

// mapsData is true: memory_init_cow, on by default, maps a module's data
// segments into each instance copy-on-write.
func (b *wasmtimeBackend) mapsData() bool { return true }

func (b *wasmtimeBackend) close(context.Context) error {
	// The ticker must be done with the engine before it is closed.
	close(b.stop)
	<-b.stopped
	b.shadowd.Close()
	b.mounted.Close()
	b.wasi.Close()
	b.through.Close()
	b.probe.Close()
	b.engine.Close()
	return nil
}

func (b *wasmtimeBackend) compile(_ context.Context, wasm []byte) (program, error) {
	m, err := wt.NewModule(b.engine, wasm)
	if err != nil {
		return nil, err
	}
	return &wasmtimeProgram{b: b, module: m}, nil
}

type wasmtimeProgram struct {
	b      *wasmtimeBackend
	module *wt.Module
}

func (p *wasmtimeProgram) close(context.Context) error {
	p.module.Close()
	return nil
}

// wtRun is a store's data: what the shadowed and wasmcp host functions
// need of their run, and what they learn of how it ended.
type wtRun struct {
	b       *wasmtimeBackend
	in      *instance
	mem     *wtMemory
	mounted bool // WASI's own serve descriptors but stdin, stdout and stderr
	exited  bool // the guest called proc_exit
	status  uint32

	through map[string]*wt.Func // for passOn, made at its first call
	probe   *wt.Func            // for fdOpen, made at its first call
	wasiErr error               // how WASI failed a call passed on
}

// wtMemory is what wasmtime knows of an instance's memory: its size at
// the end (and, for a prepared instance, when it first waits for stdin),
// and its limit. It cannot see a refused grow, so a run that failed with
// its memory within an eighth of its limit is put down to the limit.
type wtMemory struct{ size, limit uint64 }

func (m *wtMemory) peak() uint64 { return m.size }

func (m *wtMemory) held() uint64 { return m.size }

func (m *wtMemory) refused() (uint64, bool) {
	if m.size+max(m.limit/8, pageSize) > m.limit {
		return m.limit, false
	}
	return 0, false
}

func (p *wasmtimeProgram) prepares(r Run) bool { return len(r.Mounts) == 0 }

func (p *wasmtimeProgram) snapshots() bool { return true }

// images is true: wasmtime offers no hook into how an instance's memory is
// made, but maps a module's own data segments into each instance
// copy-on-write (memory_init_cow, on by default), which a snapshot's image
// turns into the snapshot's memory.
func (p *wasmtimeProgram) images() bool { return true }

func (p *wasmtimeProgram) start(in *instance, r Run, _ io.Reader) *Failure {
	mem := &wtMemory{limit: uint64(r.Limits.Memory)}
	in.mem = mem
	run := &wtRun{b: p.b, in: in, mem: mem, mounted: len(r.Mounts) > 0}
	wasi := wt.NewWasiConfig()
	for _, m := range r.Mounts {
		dirPerms, filePerms := wt.DIR_READ, wt.FILE_READ
		if m.Write {
			dirPerms, filePerms = dirPerms|wt.DIR_WRITE, filePerms|wt.FILE_WRITE
		}
		if err := wasi.PreopenDir(m.Host, m.Guest, dirPerms, filePerms); err != nil {
			wasi.Close()
			return mountFailure(m.Guest, err)
		}
	}

	linker := p.b.shadowd
	var handles []cgo.Handle
	if len(r.Mounts) > 0 {
		linker = p.b.mounted
		// fd_read serves stdin from the run's (fdRead): WASI's own has
		// none.
		handles = []cgo.Handle{cgo.NewHandle(in.stdout), cgo.NewHandle(in.stderr)}
		C.wasmcp_stdio(cPointer(wasi), nil, 0, C.uintptr_t(handles[0]), C.uintptr_t(handles[1]))
	}

	module := p.module
	instantiated := func() {}
	if s := in.plan.from; s != nil {
		// An instance of the snapshot's image starts as the snapshot:
		// only the call runs. The image must outlive launch's hold on
		// the snapshot until it is instantiated.
		module = s.image.(*wasmtimeProgram).module
		s.held.Add(1)
		instantiated = sync.OnceFunc(s.held.Done)
		// An instantiation refused for the limit then reads as one.
		mem.size = s.size
	}

	go in.guard(func() (ending, func()) {
		defer instantiated()
		// The store keeps a pointer to stop, so stop stays pinned until
		// the store is gone.
		var stop atomic.Int32
		var pin runtime.Pinner
		pin.Pin(&stop)
		// The teardown is deferred before the store is made: making it
		// panics on an engine closed meanwhile, and a Pinner the collector
		// finds still pinning ends the process.
		var store *wt.Store
		teardown := func() {
			if store != nil {
				store.Close()
			}
			pin.Unpin()
			for _, h := range handles {
				h.Delete()
			}
		}
		handedOff := false
		defer func() {
			if !handedOff { // a panic: guard sends the ending
				teardown()
			}
		}()
		store = wt.NewStoreWithData(p.b.engine, run)
		finish := func(end ending) (ending, func()) {
			handedOff = true
			return end, teardown
		}
		store.SetWasi(wasi)
		store.Limiter(r.Limits.Memory, maxTableElements, -1, -1, -1)
		C.wasmcp_watch_epochs(cPointer(store), unsafe.Pointer(&stop))
		store.SetEpochDeadline(1)
		unwatch := context.AfterFunc(in.ctx, func() { stop.Store(1) })
		defer unwatch()

		inst, err := linker.Instantiate(store, module)
		instantiated()
		if err != nil {
			return finish(run.ending(wasmtimeEnding(err)))
		}
		if m := inst.GetExport(store, "memory"); m != nil && m.Memory() != nil {
			defer func() { mem.size = uint64(m.Memory().DataSize(store)) }()
		}
		call := func(name string) error {
			f := inst.GetFunc(store, name)
			if f == nil {
				return fmt.Errorf("the module exports no %q function", name)
			}
			_, err := f.Call(store)
			return err
		}
		var memory *wt.Memory
		if m := inst.GetExport(store, "memory"); m != nil {
			memory = m.Memory()
		}
		if len(in.plan.data) > 0 {
			var mem guestMemory
			if memory != nil {
				mem = byteMemory(memory.UnsafeData(store))
			}
			if end := writeData(mem, in.plan.data); end.startup != "" {
				return finish(end)
			}
		}
		for _, name := range in.plan.init {
			if err := call(name); err != nil || run.exited {
				end := run.ending(guestEnding(err))
				end.startup = name
				return finish(end)
			}
		}
		if in.plan.capture != nil {
			var data []byte
			if memory != nil {
				data = bytes.Clone(memory.UnsafeData(store))
			}
			globals := make([]uint64, len(in.plan.globals))
			for i, g := range in.plan.globals {
				globals[i] = rawValue(inst.GetExport(store, g.Export).Global().Get(store))
			}
			in.plan.capture(data, globals)
			return finish(ending{exited: true})
		}
		in.beginCall()
		return finish(run.ending(guestEnding(call(in.plan.run))))
	})
	return nil
}

// rawValue is a number global's value as its bits, as wazero gives it.
func rawValue(v wt.Val) uint64 {
	switch v.Kind() {
	case wt.KindI32:
		return uint64(uint32(v.I32()))
	case wt.KindI64:
		return uint64(v.I64())
	case wt.KindF32:
		return uint64(math.Float32bits(v.F32()))
	case wt.KindF64:
		return math.Float64bits(v.F64())
	}
	return 0 // ExportState captures only the four number types
}

// ending is how the run ended: by the guest's proc_exit, or a call passed
// on to WASI, whose traps say nothing, or as end says.
func (r *wtRun) ending(end ending) ending {
	switch {
	case r.exited:
		return ending{exited: true, status: r.status}
	case r.wasiErr != nil:
		return guestEnding(r.wasiErr)
	}
	return end
}

// guestEnding is wasmtimeEnding for what the guest's _start, or a call it
// made to WASI's own functions, returned. An error there that is neither a
// trap nor an exit is WASI's refusal of a call's arguments, which ends the
// run: behind the shadows' checks, a misaligned pointer.
func guestEnding(err error) ending {
	end := wasmtimeEnding(err)
	if end.err != nil {
		return ending{trap: trapWASIArguments, err: err}
	}
	return end
}

// wasmtimeEnding reads how a run ended from wasmtime's error, in the words
// wazero uses for the same traps.
func wasmtimeEnding(err error) ending {
	if err == nil {
		return ending{exited: true}
	}
	var werr *wt.Error
	if errors.As(err, &werr) {
		if status, ok := werr.ExitStatus(); ok {
			return ending{exited: true, status: uint32(status)}
		}
	}
	var trap *wt.Trap
	if !errors.As(err, &trap) {
		return ending{err: err}
	}
	code := trap.Code()
	if code == nil {
		return ending{trap: trap.Message(), err: trap}
	}
	switch *code {
	case wt.StackOverflow:
		return ending{overflow: true}
	case wt.MemoryOutOfBounds:
		return ending{trap: "out of bounds memory access"}
	case wt.HeapMisaligned:
		return ending{trap: "unaligned atomic"}
	case wt.TableOutOfBounds, wt.IndirectCallToNull:
		return ending{trap: "invalid table access"}
	case wt.BadSignature:
		return ending{trap: "indirect call type mismatch"}
	case wt.IntegerOverflow:
		return ending{trap: "integer overflow"}
	case wt.IntegerDivisionByZero:
		return ending{trap: "integer divide by zero"}
	case wt.BadConversionToInteger:
		return ending{trap: "invalid conversion to integer"}
	case wt.UnreachableCodeReached:
		return ending{trap: "unreachable"}
	}
	return ending{trap: trap.Message(), err: trap}
}

// errStopped is the trap a shadow returns to end its run: the run's
// context, or the run itself (exited, wasiErr), holds the reason.
func errStopped() *wt.Trap { return wt.NewTrap("wasmcp: the run was stopped") }

func runOf(c *wt.Caller) *wtRun { return c.Data().(*wtRun) }

// callerBytes is the calling instance's memory, or nil if it exports
// none.
func callerBytes(c *wt.Caller) byteMemory {
	ext := c.GetExport("memory")
	if ext == nil || ext.Memory() == nil {
		return nil
	}
	return byteMemory(ext.Memory().UnsafeData(c))
}

// callerMemory is callerBytes for the shared host functions, which take a
// missing memory as nil.
func callerMemory(c *wt.Caller) guestMemory {
	if mem := callerBytes(c); mem != nil {
		return mem
	}
	return nil
}

// byteMemory is a view of guest memory, valid during one host call (the
// guest cannot grow it meanwhile).
type byteMemory []byte

func (m byteMemory) span(offset, n uint32) ([]byte, bool) {
	end := uint64(offset) + uint64(n)
	if end > uint64(len(m)) {
		return nil, false
	}
	return m[offset:end], true
}

func (m byteMemory) Read(offset, n uint32) ([]byte, bool) { return m.span(offset, n) }

func (m byteMemory) Write(offset uint32, b []byte) bool {
	if uint64(len(b)) > 1<<32-1 {
		return false
	}
	dst, ok := m.span(offset, uint32(len(b)))
	if ok {
		copy(dst, b)
	}
	return ok
}

func (m byteMemory) WriteUint32Le(offset, v uint32) bool {
	dst, ok := m.span(offset, 4)
	if ok {
		binary.LittleEndian.PutUint32(dst, v)
	}
	return ok
}

func (m byteMemory) WriteUint64Le(offset uint32, v uint64) bool {
	dst, ok := m.span(offset, 8)
	if ok {
		binary.LittleEndian.PutUint64(dst, v)
	}
	return ok
}

// fdRead is WASI's fd_read. stdin is the run's, even in a run with
// mounts, where a reactor's start-up reads another than its call; any
// other descriptor is WASI's own, in a run with mounts, or not open.
func fdRead(c *wt.Caller, fd, iovs, n, nreadPtr int32) (int32, *wt.Trap) {
	mem := callerBytes(c)
	table, errno := ioArgs(mem, uint32(iovs), uint32(n), uint32(nreadPtr))
	run := runOf(c)
	switch {
	case errno != 0:
		return int32(errno), nil
	case fd != 0 && run.mounted:
		return run.passOn(c, "fd_read", fd, iovs, n, nreadPtr)
	case fd != 0:
		return errnoBadf, nil
	}
	if run.in.ctx.Err() != nil {
		return 0, errStopped()
	}
	// A prepared instance holds this much while it waits here for its
	// call (Prepared.Memory); its memory cannot grow meanwhile.
	run.mem.size = uint64(len(mem))
	total := 0
	for i := range int(n) {
		buf, _ := mem.span(iovec(table, i))
		got, err := io.ReadFull(run.in.state.io.stdin, buf)
		total += got
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			// The pipe of a prepared instance closes with an error when
			// the instance is discarded.
			return 0, errStopped()
		}
	}
	mem.WriteUint32Le(uint32(nreadPtr), uint32(total))
	return 0, nil
}

// fdWrite is WASI's fd_write. stdout and stderr are the run's buffers,
// even in a run with mounts, where passing each write on to WASI's own
// and its writers would cost several times as much; any other descriptor
// is WASI's own, in a run with mounts, or not open.
func fdWrite(c *wt.Caller, fd, iovs, n, nwrittenPtr int32) (int32, *wt.Trap) {
	mem := callerBytes(c)
	table, errno := ioArgs(mem, uint32(iovs), uint32(n), uint32(nwrittenPtr))
	if errno != 0 {
		return int32(errno), nil
	}
	run := runOf(c)
	var out io.Writer
	switch {
	case fd == 1:
		out = run.in.state.io.stdout
	case fd == 2:
		out = run.in.state.io.stderr
	case run.mounted:
		return run.passOn(c, "fd_write", fd, iovs, n, nwrittenPtr)
	default:
		return errnoBadf, nil
	}
	total := 0
	for i := range int(n) {
		buf, _ := mem.span(iovec(table, i))
		w, err := out.Write(buf)
		total += w
		if err != nil {
			// The cap was reached and the run's context ended with the
			// reason: stop now rather than at the next tick.
			return 0, errStopped()
		}
	}
	mem.WriteUint32Le(uint32(nwrittenPtr), uint32(total))
	return 0, nil
}

// The wasmcp host module, with the rules every engine shares. Each takes
// its arguments as abi.HostFunctions lists them.

func wtLog(c *wt.Caller, args []wt.Val) int32 {
	msg, code := readMessage(callerMemory(c), uint32(args[1].I32()), uint32(args[2].I32()))
	return runOf(c).in.state.log(args[0].I32(), msg, code)
}

func wtProgress(c *wt.Caller, args []wt.Val) int32 {
	msg, code := readMessage(callerMemory(c), uint32(args[2].I32()), uint32(args[3].I32()))
	return runOf(c).in.state.reportProgress(args[0].F64(), args[1].F64(), msg, code)
}

func wtHTTPRequest(c *wt.Caller, args []wt.Val) int32 {
	run := runOf(c)
	return run.in.state.httpRequest(run.in.ctx, callerMemory(c), uint32(args[0].I32()), uint32(args[1].I32()), uint32(args[2].I32()))
}

func wtHTTPResponse(c *wt.Caller, args []wt.Val) int32 {
	return runOf(c).in.state.httpResponse(callerMemory(c), uint32(args[0].I32()), uint32(args[1].I32()))
}

// wtAsk is the function name of abi.AskFunctions, or ask_all.
func wtAsk(name string) func(*wt.Caller, []wt.Val) int32 {
	return func(c *wt.Caller, args []wt.Val) int32 {
		run := runOf(c)
		return run.in.state.askHost(run.in.ctx, name, callerMemory(c), uint32(args[0].I32()), uint32(args[1].I32()), uint32(args[2].I32()))
	}
}

func wtAskResponse(c *wt.Caller, args []wt.Val) int32 {
	return runOf(c).in.state.askResponse(callerMemory(c), uint32(args[0].I32()), uint32(args[1].I32()))
}
