package wasmbin

import (
	"encoding/binary"
	"fmt"
)

// StopExport names the global StopChecks adds: while it is 1 the module
// runs as before; once a host sets it to 0, the module traps (integer
// divide by zero) at its next function entry or loop iteration.
const StopExport = "wasmcp.stop"

// StopChecks rewrites a module so that a host can stop it from another
// thread by clearing one global (StopExport): every function body and
// every loop begins by dividing by it. A module's start section, which
// would run inside instantiation, before a host can reach the global,
// becomes an export (StartExport) for the host to call once it can.
//
// It exists because wazero's own way to stop a guest, closing it when its
// context ends, leaves native code at every loop iteration to ask the Go
// runtime whether the module is closed. A Go guest's every function begins
// with a loop (its resumption points), so that cost was most of a Go
// call's time; the check is a load and a division. It checks function
// entries too, which wazero does not: recursion without a loop (a
// function calling itself twice) runs for exponential time within a
// bounded stack.
//
// A check takes at most 9 bytes and adds no block: a body grows by that
// once, and by at most three times the bytes of its loops (a loop takes
// at least three), so what the rewrite adds to compilation is linear in
// the module's size.
func StopChecks(b []byte) ([]byte, error) {
	m, err := Parse(b)
	if err != nil {
		return nil, err
	}
	sections, err := splitSections(b)
	if err != nil {
		return nil, err
	}
	var start []byte
	for _, s := range sections {
		if s.id == sectionStart {
			start = s.body
		}
	}
	for _, e := range m.Exports {
		if e.Name == StopExport || start != nil && e.Name == StartExport {
			return nil, fmt.Errorf("exports %q, a name wasmcp reserves", e.Name)
		}
	}
	stop := uint32(m.Shape.Globals)
	for _, imp := range m.Imports {
		if imp.Kind == KindGlobal {
			stop++
		}
	}
	// i32.const 0; global.get; i32.div_u; drop: 0/1 while the global is
	// 1, a trap once it is 0. A branch would split the block, and
	// wazero's compilation grows faster than linearly in blocks.
	check := binary.AppendUvarint([]byte{0x41, 0x00, 0x23}, uint64(stop))
	check = append(check, 0x6e, 0x1a)

	var kept []rawSection
	for _, s := range sections {
		switch s.id {
		case sectionStart:
			continue
		case sectionCode:
			if s.body, err = checkBodies(m, s.body, check); err != nil {
				return nil, err
			}
		}
		kept = append(kept, s)
	}
	// A mutable i32, 1 until the host sets it to 0.
	kept = extend(kept, sectionGlobal, []byte{byte(I32), 0x01, 0x41, 0x01, 0x0b})
	exports := [][]byte{append(exportName(StopExport, KindGlobal), binary.AppendUvarint(nil, uint64(stop))...)}
	if start != nil {
		exports = append(exports, append(exportName(StartExport, KindFunc), start...))
	}
	kept = extend(kept, sectionExport, exports...)
	wasm := append(make([]byte, 0, len(b)+len(b)/8), b[:8]...)
	for _, s := range kept {
		wasm = appendSection(wasm, s)
	}
	return wasm, nil
}

// checkBodies returns the code section with check placed before each
// body's first instruction and after each loop's block type.
func checkBodies(m *Module, code []byte, check []byte) ([]byte, error) {
	r := &reader{b: code}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	defined := m.funcTypes[len(m.funcTypes)-m.Shape.Functions:]
	if int(n) != len(defined) {
		return nil, fmt.Errorf("%d bodies for %d functions", n, len(defined))
	}
	out := binary.AppendUvarint(make([]byte, 0, len(code)+len(code)/4), uint64(n))
	p := &parser{m: m}
	var at []int // where checks go in the body
	var body []byte
	loop := false
	p.visit = func(op byte, off int) {
		// The first instruction, and the one after a loop's block type.
		if len(at) == 0 || loop {
			at = append(at, off)
		}
		loop = op == 0x03
	}
	for i := range int(n) {
		size, err := r.u32()
		if err != nil || uint64(size) > uint64(len(r.b)-r.off) {
			return nil, fmt.Errorf("function %d: %w", i, errShort)
		}
		body = r.b[r.off : r.off+int(size)]
		r.off += int(size)
		at, loop = at[:0], false
		if err := p.body(&reader{b: body}, defined[i]); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		checked := make([]byte, 0, len(body)+len(at)*len(check))
		last := 0
		for _, a := range at {
			checked = append(checked, body[last:a]...)
			checked = append(checked, check...)
			last = a
		}
		out = appendSized(out, append(checked, body[last:]...))
	}
	return out, nil
}
