package wasmbin

import (
	"encoding/binary"
	"slices"
)

// DirectCalls rewrites a module whose one table exists only for
// call_indirect so that an instance starts with that table empty: every
// call_indirect of a type T becomes a direct call of a dispatch function
// added for T, which takes T's parameters and the table index, and
// branches (one br_table) to a direct call of the function the element
// segments put at that index. An index that held no function, or one of
// another type, reaches a call_indirect on the table, now of size 0,
// which traps as the original would have (the engine's message may
// differ: an index out of bounds where the original saw a null entry or
// a type mismatch).
//
// It exists because an engine fills a table entry by entry as it
// instantiates a module: wazero evaluates each entry's constant
// expression and allocates for it, 110 ns each, which is a quarter of a
// Go reactor's instance from its snapshot (2,362 entries) and more of
// CPython's (4,171). The module's code cannot tell the difference: no
// instruction but call_indirect reads the table, which the rewrite
// requires, along with every other condition below; a module that meets
// none of them is returned as it is, with applied false.
//
// The conditions: one table, defined, not exported, of funcref; element
// segments all active on it at constant offsets within its minimum size,
// of function indices or ref.func and ref.null expressions; no
// instruction that reads or changes a table other than call_indirect
// (table.get, table.set, table.size, table.grow, table.fill, table.copy,
// table.init, elem.drop), and no ref.func; and dispatch functions of at
// most maxCases cases in all, spanning at most maxSpan table indices in
// all, passing on at most maxDispatchArgs arguments, and of at most
// maxDispatchBranchCost branches to the block that traps (and
// maxDispatchLocalsCost times the locals read after it), which bound
// what they cost to compile (a dispatch function of n cases nests n
// blocks, and an engine's work grows with the square of the nesting, as
// it does with the square of the branches to one block).
func DirectCalls(b []byte, maxCases int) (out []byte, applied bool, err error) {
	m, err := Parse(b)
	if err != nil {
		return nil, false, err
	}
	if len(m.Tables) != 1 || m.Tables[0].Imported {
		return b, false, nil
	}
	for _, e := range m.Exports {
		if e.Kind == KindTable {
			return b, false, nil
		}
	}
	sections, err := splitSections(b)
	if err != nil {
		return nil, false, err
	}
	var types []FuncType
	var table []int64 // each entry's function index, or -1 for none
	var code []byte
	for _, s := range sections {
		switch s.id {
		case sectionType:
			if types, err = readTypes(s.body); err != nil {
				return nil, false, err
			}
		case sectionTable:
			if !funcrefTable(s.body) || m.Tables[0].Min > uint64(maxBrTable) {
				return b, false, nil
			}
			table = slices.Repeat([]int64{-1}, int(m.Tables[0].Min))
		case sectionElement:
			if table == nil || !fillTable(s.body, table) {
				return b, false, nil
			}
		case sectionCode:
			code = s.body
		}
	}
	if table == nil || code == nil {
		return b, false, nil
	}
	typeOf := func(f int64) (FuncType, bool) {
		if f < 0 || f >= int64(len(m.funcTypes)) || int64(m.funcTypes[f]) >= int64(len(types)) {
			return FuncType{}, false
		}
		return types[m.funcTypes[f]], true
	}
	for _, f := range table {
		if _, ok := typeOf(f); f >= 0 && !ok {
			return b, false, nil // the engine refuses such a module: leave it to say so
		}
	}

	bodies, calls, ok, err := indirectCalls(m, code)
	if err != nil || !ok {
		return b, false, err
	}
	if len(calls) == 0 {
		return b, false, nil
	}

	// One dispatch function per type called indirectly that some entry
	// has, by type index; a call_indirect of a type no entry has traps
	// whatever its index, as it does on the empty table, and is kept.
	next := uint32(len(m.funcTypes))
	dispatchOf := map[uint32]uint32{}
	var added []dispatch
	cases, spans := 0, 0
	var branchCost, localsCost, args uint64
	for _, c := range calls {
		if _, seen := dispatchOf[c.typ]; seen {
			continue
		}
		if int64(c.typ) >= int64(len(types)) {
			return b, false, nil
		}
		d := dispatch{typ: c.typ, ft: types[c.typ]}
		for i, f := range table {
			if ft, ok := typeOf(f); ok && ft.Equal(d.ft) {
				d.targets = append(d.targets, target{index: uint32(i), fn: uint32(f)})
			}
		}
		if len(d.targets) == 0 {
			dispatchOf[c.typ] = noDispatch
			continue
		}
		if cases += len(d.targets); cases > maxCases {
			return b, false, nil
		}
		// Each case passes every parameter on: a local.get each.
		if len(d.ft.Params) >= maxParams {
			return b, false, nil
		}
		if args += uint64(len(d.targets)) * uint64(len(d.ft.Params)+1); args > maxDispatchArgs {
			return b, false, nil
		}
		// The br_table's targets are the span and its default; each that
		// holds no case branches to the one block that traps.
		span := uint64(d.targets[len(d.targets)-1].index-d.targets[0].index) + 1
		if spans += int(span); spans > maxSpan || span+1 > maxBrTable {
			return b, false, nil
		}
		holes := span + 1 - uint64(len(d.targets))
		if branchCost += holes * holes; branchCost > maxDispatchBranchCost {
			return b, false, nil
		}
		// The trapping block then reads every parameter, each read a
		// cost per branch to it.
		if localsCost += holes * uint64(len(d.ft.Params)+1); localsCost > maxDispatchLocalsCost {
			return b, false, nil
		}
		dispatchOf[c.typ] = next
		next++
		added = append(added, d)
	}

	// The new types (T's parameters and an i32 index, T's results), the
	// functions declared with them, their bodies, and the code with each
	// call_indirect replaced.
	var newTypes, newFuncs, newBodies [][]byte
	for i, d := range added {
		sig := FuncType{Params: append(slices.Clone(d.ft.Params), I32), Results: d.ft.Results}
		newTypes = append(newTypes, encodeFuncType(sig))
		newFuncs = append(newFuncs, binary.AppendUvarint(nil, uint64(len(types)+i)))
		newBodies = append(newBodies, d.body())
	}
	codeBody := binary.AppendUvarint(nil, uint64(len(bodies)+len(added)))
	for i, body := range bodies {
		codeBody = appendSized(codeBody, rewriteCalls(body, calls, i, dispatchOf))
	}
	for _, body := range newBodies {
		codeBody = appendSized(codeBody, body)
	}

	var kept []rawSection
	for _, s := range sections {
		switch s.id {
		case sectionElement:
			continue
		case sectionCode:
			s.body = codeBody
		case sectionTable:
			s.body = emptyTable(m.Tables[0])
		}
		kept = append(kept, s)
	}
	kept = extend(kept, sectionType, newTypes...)
	kept = extend(kept, sectionFunction, newFuncs...)
	wasm := assemble(b[:8], kept, len(b)+len(codeBody)-len(code))
	return wasm, true, nil
}

// maxBrTable bounds the table a dispatch function's br_table spans, as
// Limits.BrTableTargets bounds a module's own; maxSpan bounds the spans
// of all of them together, so that many types with a few functions each,
// spread over a large table, cannot make the rewrite large (CPython's
// runtime spans about 40,000 in all, over 23 types).
const (
	maxBrTable = 65_520
	maxSpan    = 1 << 18
)

// noDispatch marks a type whose call_indirect stays as it is.
const noDispatch = ^uint32(0)

// target is a table entry a dispatch function calls directly.
type target struct{ index, fn uint32 }

// dispatch is the function that replaces call_indirect of one type.
type dispatch struct {
	typ     uint32
	ft      FuncType
	targets []target // by table index
}

// body is the dispatch function's body: with the table index in its last
// parameter, a br_table over the span of indices its targets hold, each
// to a block whose end calls one target and returns; every other index
// leaves the outermost block and reaches call_indirect on the table, which
// then holds nothing, and traps.
func (d *dispatch) body() []byte {
	n := len(d.ft.Params) // the index is local n
	first, last := d.targets[0].index, d.targets[len(d.targets)-1].index
	k := len(d.targets)
	b := []byte{0} // no locals beyond the parameters
	for range k + 1 {
		b = append(b, 0x02, 0x40) // block
	}
	b = append(b, 0x20)
	b = binary.AppendUvarint(b, uint64(n))
	if first != 0 {
		b = append(b, 0x41)
		b = appendSleb(b, int64(int32(first)))
		b = append(b, 0x6b) // i32.sub: below first wraps past the span
	}
	b = append(b, 0x0e)
	b = binary.AppendUvarint(b, uint64(last-first+1))
	j := 0
	for i := first; i <= last; i++ {
		if d.targets[j].index == i {
			b = binary.AppendUvarint(b, uint64(j))
			j++
		} else {
			b = binary.AppendUvarint(b, uint64(k))
		}
	}
	b = binary.AppendUvarint(b, uint64(k)) // the default
	args := func() {
		for p := range n {
			b = append(b, 0x20)
			b = binary.AppendUvarint(b, uint64(p))
		}
	}
	for _, t := range d.targets {
		b = append(b, 0x0b) // end: case t
		args()
		b = append(b, 0x10)
		b = binary.AppendUvarint(b, uint64(t.fn))
		b = append(b, 0x0f) // return
	}
	b = append(b, 0x0b) // end of the outermost block: no function there
	args()
	b = append(b, 0x20)
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, 0x11)
	b = binary.AppendUvarint(b, uint64(d.typ))
	b = append(b, 0x00, 0x0b) // table 0; end of the function
	return b
}

// indirectCall is a call_indirect in the code: in body (its index among
// the module's bodies), from at to end, of type typ.
type indirectCall struct {
	body    int
	at, end int
	typ     uint32
}

// indirectCalls walks every body of the code section and returns the
// bodies (without their sizes) and their call_indirect instructions, in
// order; ok is false if an instruction other than call_indirect reads or
// changes a table, or names a function as a reference.
func indirectCalls(m *Module, code []byte) (bodies [][]byte, calls []indirectCall, ok bool, err error) {
	ok = true
	bodies, err = walkBodies(m, code, func(i int, body []byte, op byte, at int) {
		switch op {
		case 0x11:
			ir := &reader{b: body, off: at + 1}
			typ, err1 := ir.u32()
			tab, err2 := ir.u32()
			if err1 != nil || err2 != nil || tab != 0 {
				ok = false
				return
			}
			calls = append(calls, indirectCall{body: i, at: at, end: ir.off, typ: typ})
		case 0x25, 0x26, 0xd2: // table.get, table.set, ref.func
			ok = false
		case 0xfc:
			ir := &reader{b: body, off: at + 1}
			if sub, err := ir.u32(); err != nil || sub >= 12 && sub <= 17 {
				ok = false
			}
		}
	})
	if err != nil {
		return nil, nil, false, err
	}
	return bodies, calls, ok, nil
}

// rewriteCalls returns body i with each of its call_indirect instructions
// replaced by a call of its type's dispatch function.
func rewriteCalls(body []byte, calls []indirectCall, i int, dispatchOf map[uint32]uint32) []byte {
	start, _ := slices.BinarySearchFunc(calls, i, func(c indirectCall, i int) int { return c.body - i })
	if start == len(calls) || calls[start].body != i {
		return body
	}
	out := make([]byte, 0, len(body))
	last := 0
	for _, c := range calls[start:] {
		if c.body != i {
			break
		}
		if dispatchOf[c.typ] == noDispatch {
			continue
		}
		out = append(out, body[last:c.at]...)
		out = append(out, 0x10)
		out = binary.AppendUvarint(out, uint64(dispatchOf[c.typ]))
		last = c.end
	}
	return append(out, body[last:]...)
}

// readTypes reads the type section's function types.
func readTypes(body []byte) ([]FuncType, error) {
	r := &reader{b: body}
	var types []FuncType
	err := vector(r, "type", func(int) error {
		var t FuncType
		_, _, err := r.funcType(&t)
		types = append(types, t)
		return err
	})
	return types, err
}

// funcrefTable reports whether the table section's one table holds
// funcref.
func funcrefTable(body []byte) bool {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil || n != 1 {
		return false
	}
	t, err := r.byte()
	return err == nil && ValType(t) == FuncRef
}

// fillTable writes into table what the element section's segments put
// there at instantiation, in order; it reports false for a segment it
// does not take (see DirectCalls).
func fillTable(body []byte, table []int64) bool {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return false
	}
	for range n {
		flags, err := r.u32()
		if err != nil || flags&0x01 != 0 { // passive or declarative
			return false
		}
		if flags&0x02 != 0 {
			if tab, err := r.u32(); err != nil || tab != 0 {
				return false
			}
		}
		offset, err := constOffset(r)
		if err != nil {
			return false
		}
		exprs := flags&0x04 != 0
		if flags&0x02 != 0 {
			kind, err := r.byte()
			if err != nil || exprs && ValType(kind) != FuncRef || !exprs && kind != 0x00 {
				return false
			}
		}
		count, err := r.u32()
		if err != nil || uint64(offset)+uint64(count) > uint64(len(table)) {
			return false
		}
		for i := range count {
			f, ok := elementEntry(r, exprs)
			if !ok {
				return false
			}
			table[offset+i] = f
		}
	}
	return r.done()
}

// elementEntry reads one entry of an element segment: a function index,
// or an expression that is ref.func or ref.null func (-1).
func elementEntry(r *reader, expr bool) (int64, bool) {
	if !expr {
		f, err := r.u32()
		return int64(f), err == nil
	}
	op, err := r.byte()
	if err != nil {
		return 0, false
	}
	var f int64 = -1
	switch op {
	case 0xd2:
		idx, err := r.u32()
		if err != nil {
			return 0, false
		}
		f = int64(idx)
	case 0xd0:
		if t, err := r.byte(); err != nil || ValType(t) != FuncRef {
			return 0, false
		}
	default:
		return 0, false
	}
	end, err := r.byte()
	return f, err == nil && end == 0x0b
}

// emptyTable is the body of a table section declaring t with no
// elements: an index into it traps as an index that held no function
// did, and an instance has no references to allocate.
func emptyTable(t Table) []byte {
	if t.HasMax {
		b := []byte{1, byte(FuncRef), 0x01, 0x00}
		return binary.AppendUvarint(b, t.Max)
	}
	return []byte{1, byte(FuncRef), 0x00, 0x00}
}

// encodeFuncType is t in the binary format.
func encodeFuncType(t FuncType) []byte {
	b := []byte{0x60}
	for _, list := range [][]ValType{t.Params, t.Results} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, v := range list {
			b = append(b, byte(v))
		}
	}
	return b
}

// appendSized appends body to b after its size.
func appendSized(b, body []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(body)))
	return append(b, body...)
}

// maxParams is the most parameters engines take in a function type (the
// JS API's limit, and wasmtime's parser's): a dispatch function takes its
// type's and the index.
const maxParams = 1000

// maxDispatchArgs bounds the arguments the dispatch functions' cases
// pass on, in all: a local.get each, two bytes or three, and wazero's
// work on each (8,192 cases of 999 parameters were 23 MB of code, which
// compiled for 7.7 s). 2^18 keeps one dispatch function under 1 MiB
// (Limits.FunctionSize); CPython's runtime's pass about 16,000.
const maxDispatchArgs = 1 << 18

// maxDispatchBranchCost bounds the branch cost (Shape.BranchCost) that
// the dispatch functions add in all: each index a dispatch's br_table
// spans that holds no case is a branch to the block that traps, and
// wazero's work on a block grows with the square of the branches to it
// (0.4 ns a unit: 2^28 is about 110 ms). CPython's runtime adds 1.0e8.
const maxDispatchBranchCost = 1 << 28

// maxDispatchLocalsCost bounds, over the dispatch functions, the branches
// to the block that traps times the locals read after it: wazero's work
// on a local read after a block is per branch to the block (53 ns a
// unit: one dispatch of 999 parameters and 16,000 holes compiled for
// 850 ms). 2^22 is about 220 ms.
const maxDispatchLocalsCost = 1 << 22
