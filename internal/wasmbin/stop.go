package wasmbin

import (
	"encoding/binary"
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
// stop global, and a function, the stop point: it resets the countdown,
// takes a reference to itself (ref.func, which wazero runs in Go, where
// the runtime can stop the goroutine), and divides by the stop global. Every loop header, and the start of every body that calls or
// is longer than leafBody bytes, takes its weight from the countdown and
// calls the stop point once it is below zero; a body that enters a loop
// before it can branch or call is left to that loop's check. A weight is
// the code that can run before the next check, in weightUnit bytes: the
// body's or loop's own bytes, and leafBody for each call, which may run a
// body without a check. So the guest reaches a stop point at least every
// entryBudget*weightUnit bytes of code (4 MiB, a few milliseconds).
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
	g := stopGlobals{countdown: uint64(m.Shape.Globals), point: uint64(len(m.funcTypes))}
	g.tick = g.point + 1
	for _, imp := range m.Imports {
		if imp.Kind == KindGlobal {
			g.countdown++
		}
	}
	g.stop = g.countdown + 1
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
	// leafBody is the longest body without calls that StopChecks leaves
	// without a check: such a body runs for at most its length, or
	// reaches a loop header.
	leafBody = 256
	// weightUnit is the bytes of code one unit of weight stands for, and
	// entryBudget the units between two stop points. A Go guest's
	// typical loop or body weighs 1 or 2: a stop point every thousand
	// checks or so, each an exit to Go of about a microsecond.
	weightUnit  = 4096
	entryBudget = 1024
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

// tickBody is tick's body, a check of the weight its parameter gives:
//
//	global.get countdown; local.get 0; i32.sub; global.set countdown
//	global.get countdown; i32.const 0; i32.lt_s
//	if; call point; end
//	end
func (g stopGlobals) tickBody() []byte {
	c := g.check(0)
	get := binary.AppendUvarint([]byte{0x23}, g.countdown)
	// The check with its i32.const 0 (two bytes) made a local.get 0.
	b := append(append([]byte{0x00}, get...), 0x20, 0x00)
	return append(append(b, c[len(get)+2:]...), 0x0b)
}

// tickCall is the check of weight w as a call of tick.
func (g stopGlobals) tickCall(w uint64) []byte {
	c := appendSleb([]byte{0x41}, int64(min(w, entryBudget)))
	return binary.AppendUvarint(append(c, 0x10), g.tick)
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

// check is the check of weight w:
//
//	global.get countdown; i32.const w; i32.sub; global.set countdown
//	global.get countdown; i32.const 0; i32.lt_s
//	if; call point; end
func (g stopGlobals) check(w uint64) []byte {
	get := binary.AppendUvarint([]byte{0x23}, g.countdown)
	c := appendSleb(append(get, 0x41), int64(min(w, entryBudget)))
	c = binary.AppendUvarint(append(c, 0x6b, 0x24), g.countdown)
	c = append(c, get...)
	c = binary.AppendUvarint(append(c, 0x41, 0x00, 0x48, 0x04, 0x40, 0x10), g.point)
	return append(c, 0x0b)
}

// weight is the weight of code of n bytes that makes calls calls.
func weight(n, calls int) uint64 {
	return 1 + (uint64(n)+uint64(calls)*leafBody)/weightUnit
}

// entryState is what checkBodies knows of how a body begins: whether
// every entry reaches a loop header, which has a check, before it can
// branch or call.
type entryState byte

const (
	scanning entryState = iota
	throughLoop
	notThroughLoop
)

// straight are the instructions that neither branch nor call, which a
// body may begin with and still enter its first loop every time: nop,
// block, local.get, local.set, local.tee, global.get, global.set,
// i32.const and i64.const. A Go guest's bodies begin global.get,
// local.set, block, loop.
var straight = [256]bool{0x01: true, 0x02: true, 0x20: true, 0x21: true, 0x22: true, 0x23: true, 0x24: true, 0x41: true, 0x42: true}

// bodyChecks is where one body's checks go, found as the body is read.
type bodyChecks struct {
	first int // the first instruction
	calls int // calls so far
	entry entryState
	loops []loopCheck
	open  []int // for each open block, the loop it is in loops, or -1
	// afterLoop is set while the instruction read last began a loop,
	// whose check goes before the next.
	afterLoop bool
}

// loopCheck is a loop's check: where it goes, and the loop's extent and
// calls, in bytes and in calls before it so far.
type loopCheck struct {
	at, start, end     int
	callsAt, callsThen int
}

func (c *bodyChecks) visit(op byte, at int) {
	if c.afterLoop {
		c.loops[len(c.loops)-1].at = at
		c.afterLoop = false
	}
	if c.entry == scanning {
		switch {
		case op == 0x03:
			c.entry = throughLoop
		case !straight[op]:
			c.entry = notThroughLoop
		}
	}
	switch op {
	case 0x10, 0x11: // call, call_indirect
		c.calls++
	case 0x02, 0x04: // block, if
		c.open = append(c.open, -1)
	case 0x03:
		c.open = append(c.open, len(c.loops))
		c.loops = append(c.loops, loopCheck{start: at, callsAt: c.calls})
		c.afterLoop = true
	case 0x0b:
		if n := len(c.open); n > 0 { // not the body's own end
			if l := c.open[n-1]; l >= 0 {
				c.loops[l].end, c.loops[l].callsThen = at, c.calls
			}
			c.open = c.open[:n-1]
		}
	}
}

// checkBodies returns the code section with the checks of g in every
// body.
func checkBodies(m *Module, code []byte, g stopGlobals) ([]byte, error) {
	var checks []bodyChecks
	bodies, err := walkBodies(m, code, func(i int, _ []byte, op byte, at int) {
		if i == len(checks) {
			checks = append(checks, bodyChecks{first: at})
		}
		checks[i].visit(op, at)
	})
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(code)+len(code)/4), uint64(len(bodies)))
	var checked []byte
	for i, body := range bodies {
		c := &checks[i]
		checked = checked[:0]
		last := 0
		check := g.check
		entry := c.entry != throughLoop && (c.calls > 0 || len(body) > leafBody)
		if len(c.loops) >= maxInlineChecks {
			check = g.tickCall
		}
		if entry {
			checked = append(checked, body[:c.first]...)
			checked = append(checked, check(weight(len(body), c.calls))...)
			last = c.first
		}
		for _, l := range c.loops {
			checked = append(checked, body[last:l.at]...)
			checked = append(checked, check(weight(l.end-l.start, l.callsThen-l.callsAt))...)
			last = l.at
		}
		if last == 0 {
			out = appendSized(out, body)
			continue
		}
		out = appendSized(out, append(checked, body[last:]...))
	}
	return out, nil
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
