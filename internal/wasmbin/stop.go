package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// StopExport names the global StopChecks adds: while it is 1 the module
// runs as before; once a host sets it to 0, the module traps (integer
// divide by zero) at its next stop point.
const StopExport = "wasmcp.stop"

// PointExport names the stop point StopChecks adds, exported so that its
// code may name it by ref.func.
const PointExport = "wasmcp.point"

// StopChecks rewrites a module so that a host can stop it, however its
// code runs, by clearing one global (StopExport) from another goroutine,
// and so that the Go runtime can stop the goroutine that runs it.
//
// It exists because wazero's own way, closing a module whose context is
// done (WithCloseOnContextDone), leaves native code for Go at every loop
// iteration to ask whether to stop: a Go guest's every function begins
// with a loop, and that exit was 45% of a Go call's time and 27% of a
// Python one's. It also looked only at loops, so code that only called (a
// function calling itself twice runs for 2^n calls on a stack of n
// frames) ran past any time limit; and since an exit to Go is the only
// place the Go runtime can stop the thread, the next garbage collection
// then waited for it, with every other goroutine.
//
// The rewrite adds a countdown (a mutable i32 global, not exported), the
// stop global, and two functions. The stop point resets the countdown,
// takes a reference to itself (ref.func, which wazero runs in Go, where
// the runtime can stop the goroutine), and divides by the stop global.
// tick is a check as a function. A check takes one from the countdown
// and calls the stop point once it is below zero. Checks go at every loop
// header, at the start of every body but a leaf's or one that enters a
// loop first, before a body's exits once a path's work since the last
// check passes exitWork, and wherever it would pass segment cost units
// (see bodyWalk): so one check stands for at most a
// segment's work, a leaf's (a body without calls, loops or bulk
// instructions, of at most a segment) counted at its callers. A bulk
// instruction (memory.fill, say) takes one per KiB of its length, read
// from the stack at run time. So a guest reaches a stop point at least
// every entryBudget*segment units (milliseconds), and a single bulk
// instruction, which works on at most the memory's size, is the longest
// it runs without one.
//
// A module that names a function, global or type past its own is
// refused: it is invalid, and would not be once rewritten. A start
// section, which would run inside instantiation, before a host can
// reach the stop global, becomes an export (StartExport) for the host to
// call once it can. Function indices stay as they were (the stop point
// is added after every other function), and so does every section but
// those of types, functions, globals, exports, start and code.
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
	g := stopGlobals{countdown: uint64(m.importedGlobals() + m.Shape.Globals), point: uint64(len(m.funcTypes))}
	g.stop, g.tick = g.countdown+1, g.point+1
	if err := namesOnlyItsOwn(m, start, g); err != nil {
		return nil, err
	}

	var kept []rawSection
	for _, s := range sections {
		switch s.id {
		case sectionStart:
			continue
		case sectionCode:
			if s.body, err = checkBodies(m, s.body, g); err != nil {
				return nil, err
			}
		}
		kept = append(kept, s)
	}
	kept = extend(kept, sectionType, []byte{0x60, 0x00, 0x00}, []byte{0x60, 0x01, byte(I32), 0x00})
	kept = extend(kept, sectionFunction, binary.AppendUvarint(nil, uint64(m.Shape.Types)), binary.AppendUvarint(nil, uint64(m.Shape.Types)+1))
	kept = extend(kept, sectionCode, appendSized(nil, g.pointBody()), appendSized(nil, g.tickBody()))
	kept = extend(kept, sectionGlobal,
		append(appendSleb([]byte{byte(I32), 0x01, 0x41}, entryBudget), 0x0b), // the countdown
		[]byte{byte(I32), 0x01, 0x41, 0x01, 0x0b})                            // the stop global, 1
	exports := [][]byte{
		append(exportName(StopExport, KindGlobal), binary.AppendUvarint(nil, g.stop)...),
		// An exported function may be named by ref.func.
		append(exportName(PointExport, KindFunc), binary.AppendUvarint(nil, g.point)...),
	}
	if start != nil {
		exports = append(exports, append(exportName(StartExport, KindFunc), start...))
	}
	kept = extend(kept, sectionExport, exports...)
	wasm := assemble(b[:8], kept, len(b)+len(b)/8)
	return wasm, nil
}

// namesOnlyItsOwn checks that the module names no function, global or
// type past its own, nor an export StopChecks adds: an invalid module
// that named one would be valid once rewritten, and could reach the
// checks' own globals and functions.
func namesOnlyItsOwn(m *Module, start []byte, g stopGlobals) error {
	funcs, globals, types := g.point, g.countdown, uint64(m.Shape.Types)
	for _, t := range m.funcTypes {
		if uint64(t) >= types {
			return fmt.Errorf("a function has type %d, and the module has %d types", t, types)
		}
	}
	if start != nil {
		r := &reader{b: start}
		f, err := r.u32()
		if err != nil {
			return fmt.Errorf("start section: %w", err)
		}
		m.refs.note(0xd2, f)
	}
	for _, e := range m.Exports {
		switch {
		case e.Name == StopExport || e.Name == PointExport || start != nil && e.Name == StartExport:
			return fmt.Errorf("exports %q, a name wasmcp reserves", e.Name)
		case e.Kind == KindFunc:
			m.refs.note(0xd2, e.Index)
		case e.Kind == KindGlobal:
			m.refs.note(0x23, e.Index)
		}
	}
	switch {
	case m.refs.funcs > funcs:
		return fmt.Errorf("it names function %d, and has %d", m.refs.funcs-1, funcs)
	case m.refs.globals > globals:
		return fmt.Errorf("it names global %d, and has %d", m.refs.globals-1, globals)
	case m.refs.types > types:
		return fmt.Errorf("it names type %d, and has %d", m.refs.types-1, types)
	}
	return nil
}

const (
	// segment bounds the work, in cost units (see cost), that code does
	// on any path between two checks, and so what one check stands for;
	// entryBudget is the checks between two stop points. Between two, a
	// guest runs at most 4 Mi units: about 4 million simple instructions
	// (a few ms), or 65,536 memory accesses that each miss the caches
	// (about 30 ms).
	segment     = 4096
	entryBudget = 1024
	// costAccess and costCall are the costs of a memory access (a cache
	// and TLB miss is some 400 times an add) and of a call, to which a
	// call of a leaf adds the leaf's own.
	costAccess = 64
	costCall   = 16
	// exitWork bounds the work a body does on any path after its last
	// check before it returns, and so what a call of a body that is not
	// a leaf costs its caller (nonLeafCall), with the work before the
	// body's first check, a loop entered within maxPrologue bytes. Were
	// it not bounded, a recursion would unwind through every frame's
	// unchecked tail, a depth of frames times a segment each.
	exitWork    = 256
	nonLeafCall = exitWork + maxPrologue
	// bulkShift turns the length of a bulk instruction (memory.fill,
	// memory.copy, memory.init, table.fill, table.copy, table.init), in
	// bytes or elements, into the checks it stands for: one per KiB.
	bulkShift = 10
)

// stopGlobals are the indices StopChecks adds: the countdown and stop
// globals, the stop point, and tick, which is a check as a function.
type stopGlobals struct {
	countdown, stop, point, tick uint64
}

// maxInlineChecks bounds the checks a body gets inline. Each is a branch,
// and wazero's compilation grows faster than linearly in a function's
// blocks (a function of 8,000 loops compiled in 1.8 s, 12.3 s with an
// inline check in each); a body with more calls tick instead, which adds
// no block and costs a call.
const maxInlineChecks = 64

// tickBody is tick's body, a check by the weight its parameter gives.
func (g stopGlobals) tickBody() []byte {
	return append(append([]byte{0x00}, g.countdownBy(0x20, 0x00)...), 0x0b) // local.get 0
}

// tickCall is a check as a call of tick.
func (g stopGlobals) tickCall() []byte {
	return binary.AppendUvarint([]byte{0x41, 0x01, 0x10}, g.tick)
}

// pointBody is the stop point's body:
//
//	i32.const entryBudget; global.set countdown
//	ref.func point; drop
//	i32.const 0; global.get stop; i32.div_u; drop
func (g stopGlobals) pointBody() []byte {
	b := appendSleb([]byte{0x00, 0x41}, entryBudget)
	b = binary.AppendUvarint(append(b, 0x24), g.countdown)
	b = binary.AppendUvarint(append(b, 0xd2), g.point)
	b = append(b, 0x1a, 0x41, 0x00, 0x23)
	b = binary.AppendUvarint(b, g.stop)
	return append(b, 0x6e, 0x1a, 0x0b)
}

// check is a check inline.
func (g stopGlobals) check() []byte { return g.countdownBy(0x41, 0x01) } // i32.const 1

// countdownBy takes the value that weight pushes from the countdown and
// calls the stop point once it is below zero:
//
//	global.get countdown; weight; i32.sub; global.set countdown
//	global.get countdown; i32.const 0; i32.lt_s
//	if; call point; end
func (g stopGlobals) countdownBy(weight ...byte) []byte {
	get := binary.AppendUvarint([]byte{0x23}, g.countdown)
	c := append(append(get, weight...), 0x6b, 0x24)
	c = binary.AppendUvarint(c, g.countdown)
	c = append(c, get...)
	c = binary.AppendUvarint(append(c, 0x41, 0x00, 0x48, 0x04, 0x40, 0x10), g.point)
	return append(c, 0x0b)
}

// entryState is what a body's walk knows of how it begins: whether every
// entry reaches a loop header, which has a check, before it can branch or
// call.
type entryState byte

const (
	scanning entryState = iota
	throughLoop
	notThroughLoop
)

// maxPrologue bounds the bytes a body may take to enter its first loop
// and still count as entering through it: a caller counts only
// costCall for the call.
const maxPrologue = 64

// straight are the instructions that neither branch nor call, which a
// body may begin with and still enter its first loop every time: nop,
// block, local.get, local.set, local.tee, global.get, global.set,
// i32.const and i64.const. A Go guest's bodies begin global.get,
// local.set, block, loop.
var straight = [256]bool{0x01: true, 0x02: true, 0x20: true, 0x21: true, 0x22: true, 0x23: true, 0x24: true, 0x41: true, 0x42: true}

// frame is an open block, loop or if of a body's walk: the work done on
// the paths that branch to its end, and for an if, the work when it was
// entered, with which the path that skips a missing else reaches the end.
type frame struct {
	op             byte // 0x02, 0x03 or 0x04
	hasElse        bool
	entered, ended int
}

// insertion is where a check goes in a body, before the instruction at
// at: a check, or a bulk instruction's check of its length.
type insertion struct {
	at   int
	bulk bool
}

// bodyWalk follows the work a body does along its paths, in cost units
// since the last check, and places checks: at the entry (unless the body
// is a leaf, or enters a loop first), at every loop header, before every
// bulk instruction, and before any instruction that would take a path's
// work since the last check past segment. Control in a body is
// structured, so one pass does it: a block's end takes the most work of
// the paths that reach it.
type bodyWalk struct {
	body  []byte
	first int
	entry entryState
	// calls, loops and bulk count what the body has; max is the most
	// work any path does without a check (without any, if place is off).
	calls, loops, bulk int
	work, max          int
	open               []frame
	afterLoop          bool
	place              bool
	cost               func(op byte, at int) int
	checks             []insertion
}

func (w *bodyWalk) visit(op byte, at int) {
	if w.entry == scanning {
		switch {
		case at-w.first > maxPrologue:
			w.entry = notThroughLoop
		case op == 0x03:
			w.entry = throughLoop
		case !straight[op]:
			w.entry = notThroughLoop
		}
	}
	if w.afterLoop {
		w.afterLoop = false
		w.checkAt(at)
	}
	c := w.cost(op, at)
	if w.place && (w.work+c > segment || w.work > exitWork && w.exits(op, at)) {
		w.checkAt(at)
	}
	w.work += c
	w.max = max(w.max, w.work)
	r := &reader{b: w.body, off: at + 1}
	switch op {
	case 0x10, 0x11:
		w.calls++
	case 0x02, 0x04:
		w.open = append(w.open, frame{op: op, entered: w.work})
	case 0x03:
		w.loops++
		w.open = append(w.open, frame{op: op})
		w.afterLoop = true
	case 0x05:
		if n := len(w.open); n > 0 {
			f := &w.open[n-1]
			f.ended, f.hasElse = max(f.ended, w.work), true
			w.work = f.entered
		}
	case 0x0b:
		if n := len(w.open); n > 0 { // not the body's own end
			f := w.open[n-1]
			w.open = w.open[:n-1]
			if f.op != 0x03 {
				w.work = max(w.work, f.ended)
				if f.op == 0x04 && !f.hasElse {
					w.work = max(w.work, f.entered)
				}
			}
		}
	case 0x0c, 0x0d: // br, br_if
		if l, err := r.u32(); err == nil {
			w.branch(l)
		}
		if op == 0x0c {
			w.work = 0 // what follows is unreachable
		}
	case 0x0e: // br_table
		n, _ := r.u32()
		for range uint64(n) + 1 {
			l, err := r.u32()
			if err != nil {
				break
			}
			w.branch(l)
		}
		w.work = 0
	case 0x00, 0x0f: // unreachable, return
		w.work = 0
	case 0xfc:
		if sub, _ := r.u32(); bulkOp(sub) {
			w.bulk++
			if w.place {
				w.checks = append(w.checks, insertion{at: at, bulk: true})
			}
		}
	}
}

// exits reports whether the instruction op at at may leave the body:
// return, the body's own end, or a branch to the body's label.
func (w *bodyWalk) exits(op byte, at int) bool {
	depth := uint32(len(w.open))
	r := &reader{b: w.body, off: at + 1}
	switch op {
	case 0x0f:
		return true
	case 0x0b:
		return depth == 0
	case 0x0c, 0x0d:
		l, err := r.u32()
		return err == nil && l == depth
	case 0x0e:
		n, err := r.u32()
		for i := uint64(0); err == nil && i <= uint64(n); i++ {
			var l uint32
			if l, err = r.u32(); err == nil && l == depth {
				return true
			}
		}
	}
	return false
}

// bulkOp reports whether the 0xfc instruction sub is a bulk one, whose
// work grows with its length.
func bulkOp(sub uint32) bool {
	switch sub {
	case 8, 10, 11, 12, 14, 17: // memory.init, memory.copy, memory.fill, table.init, table.copy, table.fill
		return true
	}
	return false
}

// checkAt places a check before the instruction at at.
func (w *bodyWalk) checkAt(at int) {
	if w.place {
		w.checks = append(w.checks, insertion{at: at})
	}
	w.work = 0
}

// branch notes that the path so far reaches the end of the block label
// names (a loop's branch goes to its header, which has a check).
func (w *bodyWalk) branch(label uint32) {
	if int64(label) < int64(len(w.open)) {
		f := &w.open[len(w.open)-1-int(label)]
		if f.op != 0x03 {
			f.ended = max(f.ended, w.work)
		}
	}
}

// accessCost is the cost of each instruction that is not a call: a
// memory access (loads, stores, and every SIMD instruction, some of which
// access memory) costs costAccess, others 1.
var accessCost = func() (t [256]int) {
	for op := range t {
		t[op] = 1
	}
	for op := 0x28; op <= 0x3e; op++ {
		t[op] = costAccess
	}
	t[0xfd], t[0xfc] = costAccess, costAccess
	return t
}()

// checkBodies returns the code section with the checks of g in every
// body.
func checkBodies(m *Module, code []byte, g stopGlobals) ([]byte, error) {
	imported := len(m.funcTypes) - m.Shape.Functions
	// The first walk finds the leaves: bodies without calls, loops or
	// bulk instructions, whose every path does at most a segment's work.
	// A leaf gets no check; a call of one costs its work.
	var walks []*bodyWalk
	cost := func(op byte, _ int) int { return accessCost[op] }
	bodies, err := walkBodies(m, code, func(i int, body []byte, op byte, at int) {
		if i == len(walks) {
			walks = append(walks, &bodyWalk{body: body, first: at, cost: cost})
		}
		walks[i].visit(op, at)
	})
	if err != nil {
		return nil, err
	}
	leaf := make([]int, len(bodies)) // a leaf's work, or -1
	maxLeaf := 0
	for i, w := range walks {
		leaf[i] = -1
		if w.calls == 0 && w.loops == 0 && w.bulk == 0 && w.max <= segment {
			leaf[i] = w.max
			maxLeaf = max(maxLeaf, w.max)
		}
	}
	callCost := func(body []byte) func(op byte, at int) int {
		return func(op byte, at int) int {
			switch op {
			case 0x10:
				r := &reader{b: body, off: at + 1}
				f, err := r.u32()
				if err == nil && int64(f) >= int64(imported) && int64(f)-int64(imported) < int64(len(leaf)) && leaf[int(f)-imported] >= 0 {
					return costCall + leaf[int(f)-imported]
				}
				if err == nil && int64(f) < int64(imported) {
					return costCall // the host's, in Go
				}
				return costCall + nonLeafCall
			case 0x11:
				return costCall + max(maxLeaf, nonLeafCall)
			}
			return accessCost[op]
		}
	}

	out := binary.AppendUvarint(make([]byte, 0, len(code)+len(code)/4), uint64(len(bodies)))
	var checked []byte
	for i, body := range bodies {
		if leaf[i] >= 0 {
			out = appendSized(out, body)
			continue
		}
		first := walks[i].first
		w := &bodyWalk{body: body, first: first, place: true, cost: callCost(body)}
		if walks[i].entry != throughLoop {
			w.checks = append(w.checks, insertion{at: first})
		}
		// The walk again, now placing checks; it read the body before.
		p := &parser{m: m, visit: func(_ []byte, op byte, at int) { w.visit(op, at) }}
		if err := p.body(&reader{b: body}, m.funcTypes[imported+i]); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		check := g.check
		if len(w.checks) >= maxInlineChecks {
			check = g.tickCall
		}
		checked = checked[:0]
		local := -1
		if w.bulk > 0 {
			var err error
			if checked, local, err = withLocal(checked, body[:first], m.params[m.funcTypes[imported+i]]); err != nil {
				return nil, fmt.Errorf("function %d: %w", i, err)
			}
		} else {
			checked = append(checked, body[:first]...)
		}
		last := first
		for _, c := range w.checks {
			checked = append(checked, body[last:c.at]...)
			if c.bulk {
				checked = append(checked, g.bulkCheck(uint64(local))...)
			} else {
				checked = append(checked, check()...)
			}
			last = c.at
		}
		out = appendSized(out, append(checked, body[last:]...))
	}
	return out, nil
}

// withLocal appends to b the local declarations decls with one i32 more,
// and returns that local's index, given the function's params.
func withLocal(b, decls []byte, params int) ([]byte, int, error) {
	r := &reader{b: decls}
	n, err := r.u32()
	if err != nil {
		return nil, 0, err
	}
	entries := r.off
	total := uint64(params)
	for range n {
		c, err := r.u32()
		if err != nil {
			return nil, 0, err
		}
		total += uint64(c)
		if _, err := r.byte(); err != nil {
			return nil, 0, err
		}
	}
	if total >= 1<<31 {
		return nil, 0, errors.New("too many locals for one more")
	}
	b = binary.AppendUvarint(b, uint64(n)+1)
	b = append(b, decls[entries:]...)
	return append(b, 0x01, byte(I32)), int(total), nil
}

// bulkCheck is the check before a bulk instruction, whose length is on
// the stack, of a check per 2^bulkShift of it, with local a spare i32:
//
//	local.tee local; local.get local; i32.const bulkShift; i32.shr_u
//	call tick
func (g stopGlobals) bulkCheck(local uint64) []byte {
	c := binary.AppendUvarint([]byte{0x22}, local)
	c = binary.AppendUvarint(append(c, 0x20), local)
	c = append(c, 0x41, bulkShift, 0x76, 0x10)
	return binary.AppendUvarint(c, g.tick)
}

// walkBodies returns the bodies of the code section, without their
// sizes, having read each instruction by instruction: visit, if not nil,
// is called with each instruction's body, by index, and its opcode and
// offset in the body.
func walkBodies(m *Module, code []byte, visit func(i int, body []byte, op byte, at int)) ([][]byte, error) {
	var bodies [][]byte
	p := &parser{m: m}
	if visit != nil {
		p.visit = func(body []byte, op byte, at int) { visit(len(bodies), body, op, at) }
	}
	err := p.bodies(&reader{b: code}, func(body []byte) { bodies = append(bodies, body) })
	return bodies, err
}
