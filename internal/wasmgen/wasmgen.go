// Package wasmgen builds WebAssembly binaries for tests and benchmarks:
// the encoding primitives of the core specification's binary format, and
// hostile modules that stretch one dimension of a module (locals, nesting,
// br_table targets, functions, globals, tables, element entries) as far as
// asked. Modules too large to write as text, or shaped to cost an engine
// as much as possible, are made here; readable ones live in
// internal/wattest as WebAssembly text.
//
// It encodes exactly what the specification describes and depends on no
// package of wasmcp, so that the code it tests cannot share its mistakes.
package wasmgen

// ULEB encodes v as an unsigned LEB128.
func ULEB(v uint64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// SLEB encodes v as a signed LEB128.
func SLEB(v int64) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(out, c)
		}
		out = append(out, c|0x80)
	}
}

// Cat concatenates byte slices.
func Cat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Header is the magic number and version 1.
func Header() []byte { return []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00} }

// Module is a header followed by the given sections.
func Module(sections ...[]byte) []byte { return Cat(Header(), Cat(sections...)) }

// Section frames a body with its id and size.
func Section(id byte, body []byte) []byte { return Cat([]byte{id}, ULEB(uint64(len(body))), body) }

// Name encodes a length-prefixed name.
func Name(s string) []byte { return Cat(ULEB(uint64(len(s))), []byte(s)) }

// Vec prefixes already-encoded entries with their count.
func Vec(entries ...[]byte) []byte { return Cat(ULEB(uint64(len(entries))), Cat(entries...)) }

// Custom is a custom section.
func Custom(name string, payload []byte) []byte { return Section(0, Cat(Name(name), payload)) }

// Limits encodes a limits structure: a flag byte, the minimum, and the
// maximum when one is given.
func Limits(flag byte, minimum uint64, maximum ...uint64) []byte {
	out := Cat([]byte{flag}, ULEB(minimum))
	for _, m := range maximum {
		out = append(out, ULEB(m)...)
	}
	return out
}

// Body encodes a function body: its local declarations (count, value type)
// and its instructions, to which the final end is added.
func Body(locals [][2]uint64, code []byte) []byte {
	decls := make([][]byte, len(locals))
	for i, l := range locals {
		decls[i] = Cat(ULEB(l[0]), []byte{byte(l[1])})
	}
	b := Cat(Vec(decls...), code, []byte{0x0b})
	return Cat(ULEB(uint64(len(b))), b)
}

// Value types and opcodes used by the shapes.
const (
	I32     = 0x7f
	Funcref = 0x70
)

// Command describes a WASI command module with no imports: one memory
// exported as "memory", a function of type () -> () exported as "_start"
// with StartLocals and StartCode, and whatever else is asked for. It runs
// on any engine and exits 0 unless its code says otherwise.
type Command struct {
	MemoryPages uint64
	StartLocals [][2]uint64
	StartCode   []byte
	// ExtraTypes adds function types (all () -> ()) beyond the one used.
	ExtraTypes int
	// ExtraFunctions adds functions of type 0, each with ExtraLocals and
	// ExtraCode.
	ExtraFunctions int
	ExtraLocals    [][2]uint64
	ExtraCode      []byte
	// Globals adds mutable i32 globals initialised to 0.
	Globals int
	// Tables adds funcref tables with these limits; a negative Max means
	// none.
	Tables []TableLimits
	// PassiveElements adds one passive segment with this many references
	// to function 0; ActiveElements, an active one at offset 0 of table 0.
	PassiveElements, ActiveElements int
	// DataSegments adds passive data segments of one byte each.
	DataSegments int
}

// TableLimits are one table's minimum and maximum (negative: none).
type TableLimits struct {
	Min int64
	Max int64
}

// Bytes encodes the module.
func (c Command) Bytes() []byte {
	types := make([][]byte, 1+c.ExtraTypes)
	for i := range types {
		types[i] = []byte{0x60, 0x00, 0x00}
	}
	funcs := make([][]byte, 1+c.ExtraFunctions)
	for i := range funcs {
		funcs[i] = ULEB(0)
	}
	bodies := make([][]byte, 1+c.ExtraFunctions)
	bodies[0] = Body(c.StartLocals, c.StartCode)
	if len(bodies) > 1 {
		extra := Body(c.ExtraLocals, c.ExtraCode)
		for i := 1; i < len(bodies); i++ {
			bodies[i] = extra
		}
	}
	pages := max(c.MemoryPages, 1)
	sections := [][]byte{
		Section(1, Vec(types...)),
		Section(3, Vec(funcs...)),
	}
	if len(c.Tables) > 0 {
		tables := make([][]byte, len(c.Tables))
		for i, t := range c.Tables {
			if t.Max < 0 {
				tables[i] = Cat([]byte{Funcref}, Limits(0x00, uint64(t.Min)))
			} else {
				tables[i] = Cat([]byte{Funcref}, Limits(0x01, uint64(t.Min), uint64(t.Max)))
			}
		}
		sections = append(sections, Section(4, Vec(tables...)))
	}
	sections = append(sections, Section(5, Vec(Limits(0x00, pages))))
	if c.Globals > 0 {
		sections = append(sections, Section(6, repeatVec(c.Globals, []byte{I32, 0x01, 0x41, 0x00, 0x0b})))
	}
	sections = append(sections, Section(7, Vec(
		Cat(Name("_start"), []byte{0x00}, ULEB(0)),
		Cat(Name("memory"), []byte{0x02}, ULEB(0)),
	)))
	var elems [][]byte
	if c.PassiveElements > 0 {
		elems = append(elems, Cat([]byte{0x01, 0x00}, repeatVec(c.PassiveElements, []byte{0x00})))
	}
	if c.ActiveElements > 0 {
		elems = append(elems, Cat([]byte{0x00, 0x41, 0x00, 0x0b}, repeatVec(c.ActiveElements, []byte{0x00})))
	}
	if len(elems) > 0 {
		sections = append(sections, Section(9, Vec(elems...)))
	}
	if c.DataSegments > 0 {
		sections = append(sections, Section(12, ULEB(uint64(c.DataSegments))))
	}
	sections = append(sections, Section(10, Vec(bodies...)))
	if c.DataSegments > 0 {
		sections = append(sections, Section(11, repeatVec(c.DataSegments, []byte{0x01, 0x01, 0x2a})))
	}
	return Module(sections...)
}

// repeatVec is a vector of n copies of one encoded entry.
func repeatVec(n int, entry []byte) []byte {
	out := ULEB(uint64(n))
	for range n {
		out = append(out, entry...)
	}
	return out
}

// Repeat returns n copies of code.
func Repeat(n int, code ...byte) []byte {
	out := make([]byte, 0, n*len(code))
	for range n {
		out = append(out, code...)
	}
	return out
}

// Nested is code that nests depth empty blocks.
func Nested(depth int) []byte {
	return Cat(Repeat(depth, 0x02, 0x40), Repeat(depth, 0x0b))
}

// BrTable is code with one br_table of n targets (its default included),
// all to the block around it.
func BrTable(n int) []byte {
	code := Cat([]byte{0x02, 0x40, 0x41, 0x00, 0x0e}, ULEB(uint64(n-1)))
	code = append(code, Repeat(n, 0x00)...)
	return append(code, 0x0b)
}
