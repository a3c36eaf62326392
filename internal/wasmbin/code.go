package wasmbin

import (
	"errors"
	"fmt"
)

// code reads the code section: every function body, instruction by
// instruction.
func (p *parser) code(r *reader) error {
	return p.bodies(r, nil)
}

// bodies reads the code section from r, each function body instruction
// by instruction, and hands each body (without its size) to done, if not
// nil, once it is read.
func (p *parser) bodies(r *reader, done func(body []byte)) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	defined := p.m.funcTypes[len(p.m.funcTypes)-p.m.Shape.Functions:]
	if int(n) != len(defined) {
		return fmt.Errorf("%d bodies for %d functions", n, len(defined))
	}
	for i := 0; i < int(n); i++ {
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("function %d: %w", i, err)
		}
		if uint64(size) > uint64(len(r.b)-r.off) {
			return fmt.Errorf("function %d: %w", i, errShort)
		}
		body := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		if err := p.body(&reader{b: body}, defined[i]); err != nil {
			return fmt.Errorf("function %d: %w", i, err)
		}
		if done != nil {
			done(body)
		}
	}
	return nil
}

// body reads one function body: its local declarations, then its
// instructions up to the end that closes it.
func (p *parser) body(r *reader, typ uint32) error {
	locals := uint64(0)
	if int(typ) < len(p.m.params) {
		locals = uint64(p.m.params[typ])
	}
	if err := vector(r, "local declaration", func(int) error {
		n, err := r.u32()
		if err != nil {
			return err
		}
		locals += uint64(n) // at most 2^32 declarations of 2^32 each: no overflow
		_, err = r.valType()
		return err
	}); err != nil {
		return err
	}
	sh := &p.m.Shape
	sh.MaxLocals = max(sh.MaxLocals, locals)
	sh.MaxFunctionSize = max(sh.MaxFunctionSize, len(r.b))
	sh.TotalLocals = addSat(sh.TotalLocals, locals)

	// blocks holds, for each open block (the body itself first), how
	// many branches target it so far.
	p.blocks = append(p.blocks[:0], 0)
	p.branchCost, p.depth = 0, 1
	sh.MaxNesting = max(sh.MaxNesting, 1)
	for len(p.blocks) > 0 {
		if r.off >= len(r.b) {
			return errors.New("the body ends before its final end")
		}
		op := r.b[r.off]
		if p.visit != nil {
			p.visit(r.b, op, r.off)
		}
		r.off++
		switch immediates[op] {
		case immNone:
		case immBlock:
			if err := p.blockType(r); err != nil {
				return err
			}
			p.blocks = append(p.blocks, 0)
			p.depth = max(p.depth, len(p.blocks))
			sh.MaxNesting = max(sh.MaxNesting, p.depth)
		case immEnd:
			n := p.blocks[len(p.blocks)-1]
			p.blocks = p.blocks[:len(p.blocks)-1]
			sh.MaxBlockBranches = max(sh.MaxBlockBranches, n)
			p.branchCost = addSat(p.branchCost, n*n)
		default:
			if err := p.instruction(r, op); err != nil {
				return err
			}
		}
	}
	if !r.done() {
		return errors.New("bytes after the end of the body")
	}
	sh.MaxBranchCost = max(sh.MaxBranchCost, p.branchCost)
	sh.BranchCost = addSat(sh.BranchCost, p.branchCost)
	sh.LocalsBranchCost = addSat(sh.LocalsBranchCost, mulSat(locals, p.branchCost))
	sh.NestingCost = addSat(sh.NestingCost, uint64(p.depth)*uint64(p.depth))
	return nil
}

// branch counts a branch to the block label names, if it is open (the
// engine refuses the module otherwise).
func (p *parser) branch(label uint32) {
	if int64(label) < int64(len(p.blocks)) {
		p.blocks[len(p.blocks)-1-int(label)]++
	}
}

// blockType reads a block type: empty, one value type, or a type index
// (a signed 33-bit integer, never negative).
func (p *parser) blockType(r *reader) error {
	if r.off >= len(r.b) {
		return errShort
	}
	switch c := r.b[r.off]; {
	case c == 0x40:
		r.off++
		return nil
	case c&0xc0 == 0x40: // one byte, negative: a value type
		if _, err := r.valType(); err != nil {
			return err
		}
		p.m.Shape.MaxResults = max(p.m.Shape.MaxResults, 1)
		return nil
	}
	// A type index. One past int32's range is truncated here, but stays
	// in the bytes, for the engine to refuse.
	t, err := r.sleb32()
	if err == nil && t >= 0 {
		p.m.refs.types = max(p.m.refs.types, uint64(t)+1)
	}
	return err
}

// references are, for each index space that StopChecks adds to, one past
// the largest index the module names: a module that names an index past
// its own is invalid, and must not become valid once the space grows.
type references struct {
	funcs, globals, types uint64
}

// note notes the index that the immediate of op names, if op is call,
// ref.func, global.get or global.set.
func (r *references) note(op byte, i uint32) {
	switch op {
	case 0x10, 0xd2:
		r.funcs = max(r.funcs, uint64(i)+1)
	case 0x23, 0x24:
		r.globals = max(r.globals, uint64(i)+1)
	}
}

// The kinds of immediate an instruction of WebAssembly 2.0 carries, by its
// opcode: a table, so that the walk over a body costs one lookup per
// instruction (a switch of ranges would test them one by one).
const (
	immUnknown byte = iota // not an instruction of WebAssembly 2.0
	immNone
	immBlock  // block, loop, if: a block type; they open a block
	immEnd    // end closes one
	immBranch // br, br_if: a label
	immIndex  // one index: call, local, global and table get/set/tee, ref.func
	immBrTable
	immCallIndirect // a type and a table
	immSelect       // select with a vector of types
	immMemarg       // loads and stores
	immMemory       // memory.size and memory.grow: a memory index byte
	immI32
	immI64
	immF32
	immF64
	immRefNull
	immMisc // the 0xfc prefix
	immSIMD // the 0xfd prefix
)

var immediates = func() (t [256]byte) {
	set := func(kind byte, ops ...int) {
		for _, op := range ops {
			t[op] = kind
		}
	}
	span := func(from, to int) []int {
		var ops []int
		for op := from; op <= to; op++ {
			ops = append(ops, op)
		}
		return ops
	}
	set(immNone, 0x00, 0x01, 0x05, 0x0f, 0x1a, 0x1b, 0xd1) // unreachable, nop, else, return, drop, select, ref.is_null
	set(immNone, span(0x45, 0xc4)...)                      // numeric, sign extension
	set(immBlock, 0x02, 0x03, 0x04)
	set(immEnd, 0x0b)
	set(immBranch, 0x0c, 0x0d)
	set(immIndex, 0x10, 0xd2)
	set(immIndex, span(0x20, 0x26)...)
	set(immBrTable, 0x0e)
	set(immCallIndirect, 0x11)
	set(immSelect, 0x1c)
	set(immMemarg, span(0x28, 0x3e)...)
	set(immMemory, 0x3f, 0x40)
	set(immI32, 0x41)
	set(immI64, 0x42)
	set(immF32, 0x43)
	set(immF64, 0x44)
	set(immRefNull, 0xd0)
	set(immMisc, 0xfc)
	set(immSIMD, 0xfd)
	return t
}()

// instruction reads the immediates of an instruction of WebAssembly 2.0
// that neither opens nor closes a block.
func (p *parser) instruction(r *reader, op byte) error {
	switch immediates[op] {
	case immNone:
		return nil
	case immBranch:
		label, err := r.u32()
		p.branch(label)
		return err
	case immIndex:
		if op == 0x26 { // table.set
			p.m.Shape.StateOps++
		}
		i, err := r.u32()
		p.m.refs.note(op, i)
		return err
	case immBrTable:
		return p.brTable(r)
	case immCallIndirect:
		t, err := r.u32()
		if err != nil {
			return err
		}
		p.m.refs.types = max(p.m.refs.types, uint64(t)+1)
		_, err = r.u32()
		return err
	case immSelect:
		return vector(r, "select type", func(int) error {
			_, err := r.valType()
			return err
		})
	case immMemarg:
		return r.memarg()
	case immMemory:
		return r.memoryIndex()
	case immI32:
		return r.sleb(5)
	case immI64:
		return r.sleb(10)
	case immF32:
		return r.skip(4)
	case immF64:
		return r.skip(8)
	case immRefNull:
		ref, err := r.byte()
		if err == nil && ref != 0x70 && ref != 0x6f {
			err = fmt.Errorf("ref.null of unknown type 0x%02x", ref)
		}
		return err
	case immMisc:
		sub, err := r.misc()
		switch sub {
		case 9, 12, 13, 14, 15, 17: // data.drop, table.init, elem.drop, table.copy, table.grow, table.fill
			p.m.Shape.StateOps++
		}
		return err
	case immSIMD:
		return r.simd()
	}
	if name, ok := unsupported[op]; ok {
		return fmt.Errorf("instruction 0x%02x (%s) is not supported: wasmcp runs WebAssembly 2.0", op, name)
	}
	return fmt.Errorf("unknown instruction 0x%02x", op)
}

// unsupported names the instructions of later proposals, so that a module
// that uses one is told which.
var unsupported = map[byte]string{
	0x06: "exception handling", 0x07: "exception handling", 0x08: "exception handling",
	0x09: "exception handling", 0x0a: "exception handling", 0x18: "exception handling",
	0x19: "exception handling", 0x1f: "exception handling",
	0x12: "tail calls", 0x13: "tail calls", 0x14: "function references", 0x15: "function references",
	0xd3: "function references", 0xd4: "function references", 0xd5: "function references", 0xd6: "function references",
	0xfb: "garbage collection", 0xfe: "threads",
}

func (p *parser) brTable(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := uint64(0); i <= uint64(n); i++ { // the targets, then the default
		label, err := r.u32()
		if err != nil {
			return fmt.Errorf("br_table target %d: %w", i, err)
		}
		p.branch(label)
	}
	sh := &p.m.Shape
	sh.MaxBrTable = max(sh.MaxBrTable, int(n)+1)
	return nil
}

// memarg reads a load's or store's alignment and offset.
func (r *reader) memarg() error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align >= 1<<6 {
		// Bit 6 would announce a memory index (multi-memory).
		return fmt.Errorf("alignment 2^%d is not supported (multi-memory?)", align)
	}
	_, err = r.u32()
	return err
}

// memoryIndex reads the memory operand of memory.size, memory.grow and the
// bulk memory instructions, which 2.0 requires to be 0.
func (r *reader) memoryIndex() error {
	idx, err := r.byte()
	if err == nil && idx != 0 {
		err = fmt.Errorf("memory index %d is not supported (multi-memory)", idx)
	}
	return err
}

// misc reads an instruction with the 0xfc prefix: saturating truncation,
// bulk memory and table instructions. It returns the instruction's
// sub-opcode.
func (r *reader) misc() (uint32, error) {
	sub, err := r.u32()
	if err != nil {
		return 0, err
	}
	switch {
	case sub <= 7: // trunc_sat
		return sub, nil
	case sub == 8: // memory.init data, memory
		if _, err := r.u32(); err != nil {
			return sub, err
		}
		return sub, r.memoryIndex()
	case sub == 9, sub == 13, sub >= 15 && sub <= 17: // data.drop, elem.drop, table.grow/size/fill
		_, err := r.u32()
		return sub, err
	case sub == 10: // memory.copy
		if err := r.memoryIndex(); err != nil {
			return sub, err
		}
		return sub, r.memoryIndex()
	case sub == 11: // memory.fill
		return sub, r.memoryIndex()
	case sub == 12, sub == 14: // table.init elem table, table.copy table table
		if _, err := r.u32(); err != nil {
			return sub, err
		}
		_, err := r.u32()
		return sub, err
	}
	return sub, fmt.Errorf("unknown instruction 0xfc %d", sub)
}

// simdOpcode reads the opcode after the 0xfd prefix. The format makes it
// a LEB128 integer, but wazero reads one byte. The two agree on every
// minimal encoding of an opcode of WebAssembly 2.0: a single byte, or for
// 0x80 to 0xff a byte and then 0x01, which wazero takes for a nop (these
// opcodes have no immediates). Any other encoding is refused, so that no
// module can be read one way here and another by the engine.
func (r *reader) simdOpcode() (uint32, error) {
	b, err := r.byte()
	if err != nil || b < 0x80 {
		return uint32(b), err
	}
	next, err := r.byte()
	if err != nil {
		return 0, err
	}
	if next != 0x01 {
		return 0, fmt.Errorf("instruction 0xfd with opcode bytes %#02x %#02x: %w", b, next, errSIMDEncoding)
	}
	return uint32(b), nil
}

// errSIMDEncoding is a SIMD opcode the engines would not read alike.
var errSIMDEncoding = errors.New("not the minimal encoding of a WebAssembly 2.0 SIMD opcode")

// simd reads an instruction with the 0xfd prefix: the fixed-width SIMD of
// WebAssembly 2.0. Relaxed SIMD (0x100 and up) is not supported.
func (r *reader) simd() error {
	sub, err := r.simdOpcode()
	if err != nil {
		return err
	}
	switch {
	case sub <= 0x0b, sub == 0x5c, sub == 0x5d: // v128 loads and stores, load_zero
		return r.memarg()
	case sub == 0x0c, sub == 0x0d: // v128.const, i8x16.shuffle
		return r.skip(16)
	case sub >= 0x15 && sub <= 0x22: // extract and replace lane
		return r.skip(1)
	case sub >= 0x54 && sub <= 0x5b: // load and store lane
		if err := r.memarg(); err != nil {
			return err
		}
		return r.skip(1)
	case sub <= 0xff:
		return nil
	}
	return fmt.Errorf("instruction 0xfd %d is not supported: wasmcp runs WebAssembly 2.0 (no relaxed SIMD)", sub)
}

// constExpr reads a constant expression: the instructions WebAssembly 2.0
// allows in one, up to its end, noting in refs, if not nil, the globals
// and functions it names.
func (r *reader) constExpr(refs *references) error {
	for {
		op, err := r.byte()
		if err != nil {
			return err
		}
		switch op {
		case 0x0b:
			return nil
		case 0x41:
			err = r.sleb(5)
		case 0x42:
			err = r.sleb(10)
		case 0x43:
			err = r.skip(4)
		case 0x44:
			err = r.skip(8)
		case 0x23, 0xd2: // global.get, ref.func
			var i uint32
			if i, err = r.u32(); err == nil && refs != nil {
				refs.note(op, i)
			}
		case 0xd0:
			_, err = r.byte()
		case 0xfd:
			var sub uint32
			if sub, err = r.simdOpcode(); err == nil {
				if sub != 0x0c {
					return fmt.Errorf("instruction 0xfd %d is not allowed in a constant expression", sub)
				}
				err = r.skip(16)
			}
		default:
			return fmt.Errorf("instruction 0x%02x is not allowed in a constant expression", op)
		}
		if err != nil {
			return err
		}
	}
}
