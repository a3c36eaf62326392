package wasmbin

import "encoding/binary"

// EntryChecks rewrites a module so that wazero, closing modules whose
// context is done (wazero.RuntimeConfig.WithCloseOnContextDone), can stop
// it however its code runs.
//
// wazero looks at the context only at loop headers, where its native code
// calls out to Go. That call is also the only place the Go runtime can
// stop the goroutine: code that runs long without one ignores the time
// limit and, once the garbage collector asks every goroutine to stop,
// stalls the whole process until it returns. Code without loops gets
// there by calling: a function that calls itself twice runs for 2^n calls
// with a stack of n frames, and so does a chain of n functions each
// calling the next twice.
//
// So EntryChecks adds a mutable i32 global, a countdown, and begins every
// body that calls (or is longer than leafBody bytes) by taking the body's
// weight from it; once it falls below zero, the body resets it and
// enters an empty loop, whose header is one of wazero's checks. A body
// that enters a loop before it can branch or call is checked by wazero
// at every entry already, and is left as it is. A body's
// weight covers the code it can run before the next check: its own
// bytes, each forward once, and for each call, a body without a check
// (one of at most leafBody bytes). So between two of wazero's checks the
// guest runs at most about entryBudget*weightUnit bytes of code (4 MiB,
// a few milliseconds), or one loop iteration, whichever comes first.
//
// The countdown is not exported, so a reactor's snapshot does not hold
// it: every instance starts it afresh. Function indices, code offsets of
// anything but the bodies, and every other section stay as they were.
func EntryChecks(b []byte) ([]byte, error) {
	m, err := Parse(b)
	if err != nil {
		return nil, err
	}
	sections, err := splitSections(b)
	if err != nil {
		return nil, err
	}
	counter := uint64(m.Shape.Globals)
	for _, imp := range m.Imports {
		if imp.Kind == KindGlobal {
			counter++
		}
	}
	grown := 0
	for i, s := range sections {
		if s.id != sectionCode {
			continue
		}
		body, err := checkEntries(m, s.body, counter)
		if err != nil {
			return nil, err
		}
		grown = len(body) - len(s.body)
		sections[i].body = body
	}
	init := binary.AppendVarint([]byte{byte(I32), 0x01, 0x41}, entryBudget)
	sections = extend(sections, sectionGlobal, append(init, 0x0b))
	wasm := append(make([]byte, 0, len(b)+grown+16), b[:8]...)
	for _, s := range sections {
		wasm = appendSection(wasm, s)
	}
	return wasm, nil
}

const (
	// leafBody is the longest body without calls that EntryChecks leaves
	// without a check: such a body runs for at most its length, or
	// reaches a loop header.
	leafBody = 256
	// weightUnit is the bytes of code one unit of a body's weight stands
	// for, and entryBudget the units between two checks. A Go guest's
	// typical body weighs 1 or 2: a check every thousand calls or so,
	// each check a call out to Go of about a microsecond.
	weightUnit  = 4096
	entryBudget = 1024
)

// checkEntries returns the code section with a check of weight
// 1 + (its length + leafBody per call) / weightUnit, at most entryBudget,
// at the start of every body that calls or is longer than leafBody, where
// counter is the index of the countdown global.
func checkEntries(m *Module, code []byte, counter uint64) ([]byte, error) {
	var first, calls []int // each body's first instruction, and its calls
	var entry []entryState
	bodies, err := walkBodies(m, code, func(i int, _ []byte, op byte, at int) {
		if i == len(first) {
			first, calls, entry = append(first, at), append(calls, 0), append(entry, scanning)
		}
		if op == 0x10 || op == 0x11 { // call, call_indirect
			calls[i]++
		}
		if entry[i] == scanning {
			switch {
			case op == 0x03:
				entry[i] = throughLoop
			case !straight[op]:
				entry[i] = notThroughLoop
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(make([]byte, 0, len(code)+len(code)/8), uint64(len(bodies)))
	for i, body := range bodies {
		if entry[i] == throughLoop || calls[i] == 0 && len(body) <= leafBody {
			out = appendSized(out, body)
			continue
		}
		weight := min(1+(uint64(len(body))+uint64(calls[i])*leafBody)/weightUnit, entryBudget)
		check := entryCheck(counter, int64(weight))
		out = binary.AppendUvarint(out, uint64(len(body)+len(check)))
		out = append(out, body[:first[i]]...)
		out = append(out, check...)
		out = append(out, body[first[i]:]...)
	}
	return out, nil
}

// entryState is what checkEntries knows of how a body begins: whether
// every entry reaches a loop header, which wazero checks, before it can
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

// entryCheck is the check of weight w on the countdown global counter:
//
//	global.get counter; i32.const w; i32.sub; global.set counter
//	global.get counter; i32.const 0; i32.lt_s
//	if
//	  i32.const entryBudget; global.set counter
//	  loop end
//	end
func entryCheck(counter uint64, w int64) []byte {
	get := binary.AppendUvarint([]byte{0x23}, counter)
	set := binary.AppendUvarint([]byte{0x24}, counter)
	c := appendSleb(append(get, 0x41), w)
	c = append(append(c, 0x6b), set...)
	c = append(c, get...)
	c = appendSleb(append(c, 0x41, 0x00, 0x48, 0x04, 0x40, 0x41), entryBudget)
	c = append(c, set...)
	return append(c, 0x03, 0x40, 0x0b, 0x0b)
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
