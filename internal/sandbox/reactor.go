package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// A reactor (docs/abi.md, "Reactors") is initialised once, by the
// exports in reactor.initSteps, and runs each call in abi.ExportRun. The
// host runs it one of two ways. Without a snapshot, one fresh instance
// per call runs the whole sequence: the start-up with the init's
// arguments, environment and stdio, then the call with the call's. With a
// snapshot (snapshot.go), the start-up ran once, at load, and each call's
// fresh instance starts from what it left and runs only the call.

// reactor is what a reactor module needs beyond its code.
type reactor struct {
	// init is the stdin of wasmcp_init: the module's abi.InitSection.
	init []byte
	// data is what its data segments write into a new instance's memory
	// (wasmbin.ExportState), before steps.
	data []wasmbin.Segment
	// steps are the exports its start-up calls, in order.
	steps []string
	// globals are its mutable globals, which a snapshot captures.
	globals []wasmbin.Global
	// unsafe says why the module cannot be snapshotted, if it cannot.
	unsafe string
	// wasm is the rewritten module, kept for a backend that makes
	// snapshots modules of their own (program.images).
	wasm []byte
}

// newReactor rewrites a checked reactor module (wasmbin.ExportState) and
// reads what running it needs.
func newReactor(wasm []byte, parsed *wasmbin.Module) ([]byte, *reactor, error) {
	rewritten, err := wasmbin.ExportState(wasm)
	if err != nil {
		return nil, nil, err
	}
	// Each call's instance is a new one from the snapshot, and filling a
	// table entry by entry is a large part of what an instance costs
	// (wasmbin.DirectCalls): a reactor's table is left empty instead,
	// where its code allows.
	direct, _, err := wasmbin.DirectCalls(rewritten.Wasm, maxDispatchCases)
	if err != nil {
		return nil, nil, err
	}
	x := &reactor{data: rewritten.Data, globals: rewritten.Globals, unsafe: rewritten.Unsafe}
	if rewritten.Start {
		x.steps = append(x.steps, wasmbin.StartExport)
	}
	if sections := parsed.CustomNamed(abi.InitSection); len(sections) == 1 {
		// A copy: the module's bytes need not outlive its compilation.
		x.init = bytes.Clone(sections[0])
	}
	for _, name := range []string{abi.ExportInitialize, abi.ExportInit} {
		if _, _, ok := parsed.ExportedFunc(name); ok {
			x.steps = append(x.steps, name)
		}
	}
	return direct, x, nil
}

// maxDispatchCases bounds the cases of the dispatch functions
// wasmbin.DirectCalls adds to a reactor: each nests a block per case, and
// compiling nested blocks costs the square of their depth (8,192 cases
// cost at most what Limits.Nesting allows one function). CPython's
// runtime has 4,171 and a Go guest 2,341.
const maxDispatchCases = 8192

// checkEntry reports why a module cannot start as its manifest says.
func checkEntry(m *wasmbin.Module, start abi.Start) error {
	if start != abi.StartReactor {
		if !m.HasExport("_start", wasmbin.KindFunc) {
			return errors.New(`exports no "_start" function: a tool must be a WASI command module (for Go: GOOS=wasip1 GOARCH=wasm go build), or a reactor that says "start": "reactor" in its manifest`)
		}
		return nil
	}
	for _, name := range []string{abi.ExportInitialize, abi.ExportInit, abi.ExportRun} {
		params, results, ok := m.ExportedFunc(name)
		switch {
		case !ok && name == abi.ExportRun:
			return fmt.Errorf(`is a reactor ("start": "reactor") but exports no %q function: a reactor exports %s, and may export %s and %s, each taking and returning nothing (for Go: a //go:wasmexport %s function, built with -buildmode=c-shared)`,
				abi.ExportRun, abi.ExportRun, abi.ExportInitialize, abi.ExportInit, abi.ExportRun)
		case !ok && slices.ContainsFunc(m.Exports, func(e wasmbin.Export) bool { return e.Name == name }):
			return fmt.Errorf("exports %q, but not as a function", name)
		case ok && (params != 0 || results != 0):
			return fmt.Errorf("exports %s with %d parameters and %d results; a reactor's %s must take and return nothing", name, params, results, name)
		}
	}
	if n := len(m.CustomNamed(abi.InitSection)); n > 1 {
		return fmt.Errorf("has %d %q custom sections; a module may hold one (wasmcp pack --init replaces it)", n, abi.InitSection)
	}
	return nil
}

// guestIO is what a guest's WASI calls see of its run: the arguments,
// environment and stdio of the call, or of a reactor's start-up.
type guestIO struct {
	args, env      []string // as args_get and environ_get give them
	stdin          io.Reader
	stdout, stderr io.Writer
}

// envList is an environment as environ_get gives it, sorted so that every
// run of a tool sees the same order.
func envList(env map[string]string) []string {
	list := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		list = append(list, k+"="+env[k])
	}
	return list
}

// plan is what a started instance runs, in order.
type plan struct {
	// from, when set, is the snapshot the instance starts from: its
	// memory and globals replace the module's before anything runs (on
	// wasmtime, the instance is one of its image instead).
	from *snapshot
	// memory, when set, is a command's initial memory, which the
	// instance maps (Compiled.data).
	memory *memImage
	// globals are the reactor's mutable globals, for from and capture.
	globals []wasmbin.Global
	// data, without from, is written into memory before init runs.
	data []wasmbin.Segment
	// init are the exports of a reactor's start-up, run with the init's
	// guestIO.
	init []string
	// run is the export that runs the call, with the call's guestIO;
	// empty when the instance is made to be captured.
	run string
	// capture, when set, is given the instance's memory and globals once
	// init has run; the instance then ends.
	capture func(memory []byte, globals []uint64)
	// hold makes the instance wait before run until its call is given
	// (Prepared.Start): a prepared reactor's wasmcp_run is all the call's,
	// under its time limit and with its reporter and HTTP client.
	hold bool
}

// stringsSizes is args_sizes_get or environ_sizes_get: how many strings,
// and the bytes they take with a NUL after each.
func stringsSizes(mem guestMemory, list []string, countPtr, sizePtr uint32) int32 {
	size := 0
	for _, s := range list {
		size += len(s) + 1
	}
	if mem == nil || !mem.WriteUint32Le(countPtr, uint32(len(list))) || !mem.WriteUint32Le(sizePtr, uint32(size)) {
		return errnoFault
	}
	return 0
}

// writeData writes a reactor's data segments into a new instance's
// memory, as instantiation would have: a segment out of bounds traps.
func writeData(mem guestMemory, data []wasmbin.Segment) ending {
	for _, seg := range data {
		if mem == nil || !mem.Write(seg.Offset, seg.Bytes) {
			return ending{trap: "out of bounds memory access", startup: "its data segments"}
		}
	}
	return ending{}
}

// writeStrings is args_get or environ_get: a pointer to each string at
// ptrs, the strings themselves, each followed by a NUL, at buf.
func writeStrings(mem guestMemory, list []string, ptrs, buf uint32) int32 {
	if mem == nil {
		return errnoFault
	}
	size := 0
	for _, s := range list {
		size += len(s) + 1
	}
	table, ok1 := mem.Read(ptrs, uint32(4*len(list)))
	dst, ok2 := mem.Read(buf, uint32(size))
	if !ok1 || !ok2 {
		return errnoFault
	}
	at := 0
	for i, s := range list {
		binary.LittleEndian.PutUint32(table[4*i:], buf+uint32(at))
		at += copy(dst[at:], s)
		dst[at] = 0
		at++
	}
	return 0
}
