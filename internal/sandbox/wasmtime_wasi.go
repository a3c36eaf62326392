//go:build wasmtime && cgo

package sandbox

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
)

// The WASI functions shadowed on wasmtime, in every run. wasmtime's own
// end the run, with an error of several screens, given a pointer outside
// memory, a misaligned one or a value out of range (WASI's legacy rules
// let them trap), and random_get and fd_pread allocate the length they
// are given before checking it against memory. Every check comes before
// any work, with wazero's errnos. Functions that need nothing of WASI's
// descriptor table are answered here; the others are checked, then passed
// on to WASI's own (see passedOn).

// monotonicOrigin is where clock_time_get's monotonic clock starts.
var monotonicOrigin = time.Now()

// Clock resolutions, in nanoseconds, as wazero gives them.
const (
	realtimeResolution  = 1000
	monotonicResolution = 1
)

func argsSizesGet(c *wt.Caller, countPtr, sizePtr int32) int32 {
	return stringsSizes(callerMemory(c), runOf(c).in.state.io.args, uint32(countPtr), uint32(sizePtr))
}

func argsGet(c *wt.Caller, ptrs, buf int32) int32 {
	return writeStrings(callerMemory(c), runOf(c).in.state.io.args, uint32(ptrs), uint32(buf))
}

func environSizesGet(c *wt.Caller, countPtr, sizePtr int32) int32 {
	return stringsSizes(callerMemory(c), runOf(c).in.state.io.env, uint32(countPtr), uint32(sizePtr))
}

func environGet(c *wt.Caller, ptrs, buf int32) int32 {
	return writeStrings(callerMemory(c), runOf(c).in.state.io.env, uint32(ptrs), uint32(buf))
}

func clockResGet(c *wt.Caller, id, resPtr int32) int32 {
	var res uint64
	switch id {
	case 0:
		res = realtimeResolution
	case 1:
		res = monotonicResolution
	default:
		return errnoInval
	}
	if !callerBytes(c).WriteUint64Le(uint32(resPtr), res) {
		return errnoFault
	}
	return 0
}

func clockTimeGet(c *wt.Caller, id int32, _ int64, timePtr int32) int32 {
	var now int64
	switch id {
	case 0:
		now = time.Now().UnixNano()
	case 1:
		now = int64(time.Since(monotonicOrigin))
	default:
		return errnoInval
	}
	if !callerBytes(c).WriteUint64Le(uint32(timePtr), uint64(now)) {
		return errnoFault
	}
	return 0
}

func randomGet(c *wt.Caller, ptr, n int32) int32 {
	buf, ok := callerBytes(c).span(uint32(ptr), uint32(n))
	if !ok {
		return errnoFault
	}
	rand.Read(buf)
	return 0
}

// procExit ends the run with the guest's status, whatever it is: wasmtime
// takes one of 126 or more for an engine error. The status is kept in the
// run, and the trap unwinds the guest.
func procExit(c *wt.Caller, status int32) *wt.Trap {
	run := runOf(c)
	run.exited, run.status = true, uint32(status)
	return errStopped()
}

func procRaise(*wt.Caller, int32) int32 { return errnoNosys }

// No descriptor is a socket: every socket call fails on its descriptor,
// but for a sock_send with flags, which no flags are defined for.

func sockAccept(*wt.Caller, int32, int32, int32) int32 { return errnoBadf }

func sockRecv(*wt.Caller, int32, int32, int32, int32, int32, int32) int32 { return errnoBadf }

func sockSend(_ *wt.Caller, _, _, _, flags, _ int32) int32 {
	if flags != 0 {
		return errnoNotsup
	}
	return errnoBadf
}

func sockShutdown(*wt.Caller, int32, int32) int32 { return errnoBadf }

// pollOneoffShadow is the shared poll_oneoff.
func pollOneoffShadow(c *wt.Caller, in, out, nsubs, neventsPtr int32) (int32, *wt.Trap) {
	run := runOf(c)
	open := func(fd uint32) bool { return run.fdOpen(c, fd) }
	errno, ended := pollOneoff(run.in.ctx, callerBytes(c), open, uint32(in), uint32(out), uint32(nsubs), uint32(neventsPtr))
	if ended {
		return 0, errStopped()
	}
	return int32(errno), nil
}

// Links are refused in every mount, as confinedFS refuses them on wazero:
// a link a guest made could point out of its mount, and the host, or the
// next run on wazero, would follow it.

func pathLink(c *wt.Caller, fd, _, _, _, newFd, _, _ int32) int32 {
	if run := runOf(c); !run.fdOpen(c, uint32(fd)) || !run.fdOpen(c, uint32(newFd)) {
		return errnoBadf
	}
	return errnoPerm
}

func pathSymlink(c *wt.Caller, _, _, fd, _, _ int32) int32 {
	if !runOf(c).fdOpen(c, uint32(fd)) {
		return errnoBadf
	}
	return errnoPerm
}

// argKind is what a WASI function's argument is, for the check it gets
// before the call is passed on to WASI's own function.
type argKind int

const (
	plain  argKind = iota // a descriptor, an offset, a time: WASI's own checks it
	span                  // a pointer; the next argument is the length of what it points to
	result                // a pointer to a result of limit bytes
	enum                  // a value of at most limit
	flags                 // flags with no bits outside limit
	iovecs                // an iovec array; the next argument is its count, the last where the byte count goes
)

// wasiArg is one argument of a checked WASI function.
type wasiArg struct {
	kind  argKind
	wide  bool // an i64, not an i32
	limit uint64
}

var (
	i32Arg    = wasiArg{}
	i64Arg    = wasiArg{wide: true}
	spanArg   = wasiArg{kind: span}
	iovecsArg = wasiArg{kind: iovecs}
	lookupArg = wasiArg{kind: flags, limit: 1}    // lookupflags
	fdflags   = wasiArg{kind: flags, limit: 0x1f} // fdflags
	fstflags  = wasiArg{kind: flags, limit: 0xf}  // fstflags
	rights    = wasiArg{kind: flags, wide: true, limit: 1<<30 - 1}
)

func resultArg(size uint64) wasiArg { return wasiArg{kind: result, limit: size} }

// passedOn are the WASI functions that wasmtime's own would end a run
// for, given a pointer outside memory or a value out of range (WASI's
// legacy rules let them trap), or that would allocate a buffer of the
// size they are given before checking it (fd_pread). Their shadows check
// every such argument as wazero does, and return EFAULT or EINVAL, before
// WASI's own serve the call. Misaligned pointers are not checked: WASI's
// rules say a call given one traps, and wasmtime's does.
var passedOn = []struct {
	name string
	args []wasiArg
}{
	{"fd_advise", []wasiArg{i32Arg, i64Arg, i64Arg, {kind: enum, limit: 5}}},
	{"fd_fdstat_get", []wasiArg{i32Arg, resultArg(24)}},
	{"fd_fdstat_set_flags", []wasiArg{i32Arg, fdflags}},
	{"fd_fdstat_set_rights", []wasiArg{i32Arg, rights, rights}},
	{"fd_filestat_get", []wasiArg{i32Arg, resultArg(64)}},
	{"fd_filestat_set_times", []wasiArg{i32Arg, i64Arg, i64Arg, fstflags}},
	{"fd_pread", []wasiArg{i32Arg, iovecsArg, i32Arg, i64Arg, i32Arg}},
	{"fd_prestat_get", []wasiArg{i32Arg, resultArg(8)}},
	{"fd_prestat_dir_name", []wasiArg{i32Arg, spanArg, i32Arg}},
	{"fd_pwrite", []wasiArg{i32Arg, iovecsArg, i32Arg, i64Arg, i32Arg}},
	{"fd_read", []wasiArg{i32Arg, iovecsArg, i32Arg, i32Arg}},
	{"fd_readdir", []wasiArg{i32Arg, spanArg, i32Arg, i64Arg, resultArg(4)}},
	{"fd_seek", []wasiArg{i32Arg, i64Arg, {kind: enum, limit: 2}, resultArg(8)}},
	{"fd_tell", []wasiArg{i32Arg, resultArg(8)}},
	{"fd_write", []wasiArg{i32Arg, iovecsArg, i32Arg, i32Arg}},
	{"path_create_directory", []wasiArg{i32Arg, spanArg, i32Arg}},
	{"path_filestat_get", []wasiArg{i32Arg, lookupArg, spanArg, i32Arg, resultArg(64)}},
	{"path_filestat_set_times", []wasiArg{i32Arg, lookupArg, spanArg, i32Arg, i64Arg, i64Arg, fstflags}},
	{"path_open", []wasiArg{i32Arg, lookupArg, spanArg, i32Arg, {kind: flags, limit: 0xf}, rights, rights, fdflags, resultArg(4)}},
	{"path_readlink", []wasiArg{i32Arg, spanArg, i32Arg, spanArg, i32Arg, resultArg(4)}},
	{"path_remove_directory", []wasiArg{i32Arg, spanArg, i32Arg}},
	{"path_rename", []wasiArg{i32Arg, spanArg, i32Arg, i32Arg, spanArg, i32Arg}},
	{"path_unlink_file", []wasiArg{i32Arg, spanArg, i32Arg}},
}

// wasmType is an argument's WebAssembly type, as the text format writes it.
func (a wasiArg) wasmType() string {
	if a.wide {
		return "i64"
	}
	return "i32"
}

// checkArgs checks a call's arguments against their kinds.
func checkArgs(mem byteMemory, kinds []wasiArg, args []wt.Val) uint16 {
	u32 := func(i int) uint32 { return uint32(args[i].I32()) }
	for i, a := range kinds {
		var v uint64
		if a.wide {
			v = uint64(args[i].I64())
		} else {
			v = uint64(u32(i))
		}
		switch a.kind {
		case span:
			if _, ok := mem.span(u32(i), u32(i+1)); !ok {
				return errnoFault
			}
		case result:
			if _, ok := mem.span(u32(i), uint32(a.limit)); !ok {
				return errnoFault
			}
		case enum:
			if v > a.limit {
				return errnoInval
			}
		case flags:
			if v&^a.limit != 0 {
				return errnoInval
			}
		case iovecs:
			if _, errno := ioArgs(mem, u32(i), u32(i+1), u32(len(args)-1)); errno != 0 {
				return errno
			}
		}
	}
	return 0
}

// defineChecked defines the shadow of one function of passedOn.
func defineChecked(l *wt.Linker, name string, kinds []wasiArg) error {
	params := make([]*wt.ValType, len(kinds))
	for i, a := range kinds {
		params[i] = wt.NewValType(wt.KindI32)
		if a.wide {
			params[i] = wt.NewValType(wt.KindI64)
		}
	}
	ty := wt.NewFuncType(params, []*wt.ValType{wt.NewValType(wt.KindI32)})
	return l.FuncNew(wasiModule, name, ty, func(c *wt.Caller, args []wt.Val) ([]wt.Val, *wt.Trap) {
		mem := callerBytes(c)
		if mem == nil { // WASI's own need the caller's memory
			return []wt.Val{wt.ValI32(errnoFault)}, nil
		}
		if errno := checkArgs(mem, kinds, args); errno != 0 {
			return []wt.Val{wt.ValI32(int32(errno))}, nil
		}
		vals := make([]any, len(args))
		for i, a := range args {
			vals[i] = a
		}
		res, trap := runOf(c).passOn(c, name, vals...)
		return []wt.Val{wt.ValI32(res)}, trap
	})
}

// throughModule compiles the module through which a shadow calls WASI's
// own functions. A host function cannot call them directly: they work on
// the memory exported by the instance that calls them, and a call from
// the host has no calling instance. So a run that passes calls on gets an
// instance of this module, which imports the guest's memory, exports it
// again, and calls WASI's functions from its own.
func throughModule(engine *wt.Engine) (*wt.Module, error) {
	var b strings.Builder
	b.WriteString(`(module (import "guest" "memory" (memory 0))`)
	for _, f := range passedOn {
		fmt.Fprintf(&b, ` (import %q %q (func $%s (param`, wasiModule, f.name, f.name)
		for _, a := range f.args {
			b.WriteString(" " + a.wasmType())
		}
		b.WriteString(`) (result i32)))`)
	}
	b.WriteString(` (export "memory" (memory 0))`)
	for _, f := range passedOn {
		fmt.Fprintf(&b, ` (func (export %q) (param`, f.name)
		for _, a := range f.args {
			b.WriteString(" " + a.wasmType())
		}
		b.WriteString(`) (result i32)`)
		for i := range f.args {
			fmt.Fprintf(&b, ` (local.get %d)`, i)
		}
		fmt.Fprintf(&b, ` (call $%s))`, f.name)
	}
	b.WriteString(`)`)
	wasm, err := wt.Wat2Wasm(b.String())
	if err != nil {
		return nil, err
	}
	return wt.NewModule(engine, wasm)
}

// passOn calls WASI's own function name through the run's instance of
// throughModule, made at its first call. If WASI fails the call (wasmtime
// ends the run then), the run keeps the error for its ending.
func (r *wtRun) passOn(c *wt.Caller, name string, args ...any) (int32, *wt.Trap) {
	if r.through == nil {
		imports := []wt.AsExtern{c.GetExport("memory")}
		for _, f := range passedOn {
			imports = append(imports, r.b.wasi.Get(c, wasiModule, f.name))
		}
		inst, err := wt.NewInstance(c, r.b.through, imports)
		if err != nil {
			r.wasiErr = err
			return 0, errStopped()
		}
		r.through = map[string]*wt.Func{}
		for _, f := range passedOn {
			r.through[f.name] = inst.GetFunc(c, f.name)
		}
	}
	res, err := r.through[name].Call(c, args...)
	if err != nil {
		r.wasiErr = err
		return 0, errStopped()
	}
	return res.(int32), nil
}

// probeModule compiles a module that asks WASI's own fd_fdstat_get about
// a descriptor, into a memory of its own, so that the guest's is left
// alone.
func probeModule(engine *wt.Engine) (*wt.Module, error) {
	wasm, err := wt.Wat2Wasm(`(module
		(import "wasi_snapshot_preview1" "fd_fdstat_get" (func $stat (param i32 i32) (result i32)))
		(memory (export "memory") 1)
		(func (export "probe") (param i32) (result i32) (call $stat (local.get 0) (i32.const 0))))`)
	if err != nil {
		return nil, err
	}
	return wt.NewModule(engine, wasm)
}

// fdOpen reports whether a descriptor is open in the guest, as WASI's
// descriptor table says, through an instance of probeModule made at its
// first call. If the probe fails, the descriptor counts as open: using it
// then gives its own error.
func (r *wtRun) fdOpen(c *wt.Caller, fd uint32) bool {
	if r.probe == nil {
		inst, err := wt.NewInstance(c, r.b.probe, []wt.AsExtern{r.b.wasi.Get(c, wasiModule, "fd_fdstat_get")})
		if err != nil {
			return true
		}
		r.probe = inst.GetFunc(c, "probe")
	}
	errno, err := r.probe.Call(c, int32(fd))
	return err != nil || errno != int32(errnoBadf)
}
