// Package wasmbin reads and edits WebAssembly binaries before, or without,
// compiling them: the imports, exports, memories, tables and custom sections
// wasmcp needs, and the shape of everything else (how many functions,
// locals, globals, table elements; how deeply code nests), which decides
// what the module will cost an engine to compile and to instantiate.
//
// Listing tools must never compile a module (compiling a large Go module
// takes over a second), and neither engine offers a decode-only API, so this
// package walks the binary itself. It trusts nothing: every length is checked
// against the bytes that remain, nothing is allocated by a count the module
// declares, and the walk takes time linear in the module's size. Each
// instruction of each function body is decoded (immediates included, so
// that nesting depth and br_table sizes are known), but nothing is
// type-checked: validation is the engine's job, once Check has bounded what
// validating and compiling can cost.
package wasmbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

var magic = []byte{0x00, 'a', 's', 'm'}

// coreVersion is the only binary version wasmcp accepts; components (the
// component model's layer 1 binaries) carry another.
const coreVersion = 1

// Section ids from the core specification.
const (
	sectionCustom    = 0
	sectionType      = 1
	sectionImport    = 2
	sectionFunction  = 3
	sectionTable     = 4
	sectionMemory    = 5
	sectionGlobal    = 6
	sectionExport    = 7
	sectionStart     = 8
	sectionElement   = 9
	sectionCode      = 10
	sectionData      = 11
	sectionDataCount = 12
	sectionTag       = 13
)

// sectionRank is the order in which known sections must appear; each may
// appear at most once. Custom sections may appear anywhere.
var sectionRank = map[byte]int{
	sectionType: 1, sectionImport: 2, sectionFunction: 3, sectionTable: 4,
	sectionMemory: 5, sectionTag: 6, sectionGlobal: 7, sectionExport: 8,
	sectionStart: 9, sectionElement: 10, sectionDataCount: 11, sectionCode: 12,
	sectionData: 13,
}

var sectionNames = map[byte]string{
	sectionType: "type", sectionImport: "import", sectionFunction: "function",
	sectionTable: "table", sectionMemory: "memory", sectionGlobal: "global",
	sectionExport: "export", sectionStart: "start", sectionElement: "element",
	sectionCode: "code", sectionData: "data", sectionDataCount: "data count",
	sectionTag: "tag",
}

// External kinds of imports and exports.
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
	KindTag    byte = 4
)

// Import is one entry of the import section.
type Import struct {
	Module, Name string
	Kind         byte
	// Type is a function import's type; nil for the other kinds, and for
	// a function whose type index names no type (which an engine
	// refuses).
	Type *FuncType
}

// ValType is a value type, by its binary encoding.
type ValType byte

// The value types of WebAssembly 2.0.
const (
	I32       ValType = 0x7f
	I64       ValType = 0x7e
	F32       ValType = 0x7d
	F64       ValType = 0x7c
	V128      ValType = 0x7b
	FuncRef   ValType = 0x70
	ExternRef ValType = 0x6f
)

var valTypeNames = map[ValType]string{
	I32: "i32", I64: "i64", F32: "f32", F64: "f64", V128: "v128", FuncRef: "funcref", ExternRef: "externref",
}

// String is the type's name in the text format.
func (t ValType) String() string {
	if name, ok := valTypeNames[t]; ok {
		return name
	}
	return fmt.Sprintf("0x%02x", byte(t))
}

// FuncType is a function type: what a function takes and returns.
type FuncType struct {
	Params, Results []ValType
}

// Equal reports whether t and u are the same type.
func (t FuncType) Equal(u FuncType) bool {
	return slices.Equal(t.Params, u.Params) && slices.Equal(t.Results, u.Results)
}

// String writes the type as "(i32, i32) -> i32": the results in
// parentheses unless there is exactly one.
func (t FuncType) String() string {
	list := func(ts []ValType) string {
		names := make([]string, len(ts))
		for i, v := range ts {
			names[i] = v.String()
		}
		return "(" + strings.Join(names, ", ") + ")"
	}
	results := list(t.Results)
	if len(t.Results) == 1 {
		results = t.Results[0].String()
	}
	return list(t.Params) + " -> " + results
}

// Export is one entry of the export section.
type Export struct {
	Name  string
	Kind  byte
	Index uint32 // in the index space of Kind
}

// Memory is a memory the module defines or imports.
type Memory struct {
	MinPages uint64
	MaxPages uint64 // valid only when HasMax
	HasMax   bool
	Imported bool
	Shared   bool `json:",omitempty"`
	Is64     bool `json:",omitempty"`
}

// Table is a table the module defines or imports.
type Table struct {
	Min, Max uint64 // Max is valid only when HasMax
	HasMax   bool
	Imported bool
}

// CustomSection is a custom section's name and payload.
type CustomSection struct {
	Name    string
	Payload []byte
}

// Module is what Parse reads from a binary.
type Module struct {
	Imports  []Import
	Exports  []Export
	Memories []Memory
	Tables   []Table
	Custom   []CustomSection
	// Shape is what the module declares, counted.
	Shape Shape

	// funcTypes is each function's type index, imported functions first;
	// params and results hold each type's counts.
	funcTypes       []uint32
	params, results []int
	// refs are the indices the module names, as far as StopChecks needs.
	refs references
}

// Shape counts what a module declares: the quantities that decide what it
// costs to validate, compile and instantiate, which Check bounds.
type Shape struct {
	Types     int
	Imports   int
	Exports   int
	Functions int // defined, not imported
	Globals   int // defined, not imported
	Tables    int // defined and imported
	Memories  int // defined and imported

	DataSegments    int
	ElementSegments int
	// ElementEntries counts the entries of every element segment.
	ElementEntries uint64
	// PassiveElementEntries counts those of passive segments, which an
	// engine keeps in every instance.
	PassiveElementEntries uint64
	// TableElements sums every table's minimum: what an instance starts
	// with. (CapTables bounds what the tables may grow to.)
	TableElements uint64

	MaxParams  int // in any function type
	MaxResults int // in any function or block type

	// MaxFunctionSize is the largest function body, locals included, in bytes.
	MaxFunctionSize int
	// MaxLocals is the most locals of one function, its parameters included.
	MaxLocals uint64
	// TotalLocals sums the locals of every function, parameters included.
	TotalLocals uint64
	// MaxNesting is the deepest nesting of block, loop and if in any
	// function; a function's body is depth 1.
	MaxNesting int
	// MaxBrTable is the most targets of one br_table, its default included.
	MaxBrTable int
	// MaxBlockBranches is the most branches to one block (each br and
	// br_if is one, each target of a br_table another), and MaxBranchCost
	// the largest sum, over one function's blocks, of the square of that
	// number. Compilers add a block's predecessors one by one, each after
	// a search of those already there: wazero's work grows with the
	// square (10,000 br_if to one block compile for about a second).
	MaxBlockBranches uint64
	MaxBranchCost    uint64
	// BranchCost sums every function's branch cost, and NestingCost the
	// square of every function's nesting depth: wazero's work on deeply
	// nested code also grows with the square of the depth (20,000
	// nested blocks compile for over a second).
	BranchCost  uint64
	NestingCost uint64
	// LocalsBranchCost sums, over functions, the locals of each times its
	// branch cost: a local read after a block with many branches to it
	// takes wazero work for every predecessor of every block on the way
	// (1,000 locals after 1,000 branches to one block compile for 1.9 s).
	LocalsBranchCost uint64
	// StateOps counts the instructions that change what an instance holds
	// outside its memory and globals: table.set, table.grow, table.fill,
	// table.copy, table.init, elem.drop and data.drop. A snapshot of
	// memory and globals would lose what they did.
	StateOps int
	// CodeBytes is the size of the code section; DataBytes sums the data
	// segments' contents.
	CodeBytes int
	DataBytes int
	// MaxNameLength is the longest import, export or custom section name.
	MaxNameLength int
}

// CustomNamed returns the payloads of every custom section with the given name.
func (m *Module) CustomNamed(name string) [][]byte {
	var out [][]byte
	for _, c := range m.Custom {
		if c.Name == name {
			out = append(out, c.Payload)
		}
	}
	return out
}

// importedGlobals counts the globals the module imports, which come first
// in its index space of globals.
func (m *Module) importedGlobals() int {
	n := 0
	for _, imp := range m.Imports {
		if imp.Kind == KindGlobal {
			n++
		}
	}
	return n
}

// HasExport reports whether the module exports name with the given kind.
func (m *Module) HasExport(name string, kind byte) bool {
	for _, e := range m.Exports {
		if e.Name == name && e.Kind == kind {
			return true
		}
	}
	return false
}

// ExportedFunc returns the parameter and result counts of the function
// exported as name; ok is false when no function is exported so.
func (m *Module) ExportedFunc(name string) (params, results int, ok bool) {
	for _, e := range m.Exports {
		if e.Name != name || e.Kind != KindFunc {
			continue
		}
		if int64(e.Index) >= int64(len(m.funcTypes)) {
			return 0, 0, false
		}
		t := m.funcTypes[e.Index]
		if int64(t) >= int64(len(m.params)) {
			return 0, 0, false
		}
		return m.params[t], m.results[t], true
	}
	return 0, 0, false
}

// ErrNotWasm means the bytes do not start with the Wasm magic number.
var ErrNotWasm = errors.New("not a WebAssembly binary (bad magic number)")

// Parse walks a whole module: every section, and every instruction of every
// function. It fails on bytes that are not a well-formed module in the
// binary format of WebAssembly 2.0, or that use an instruction from beyond
// it, and otherwise returns what the module declares. It does not check
// types or indices: an engine validates those when it compiles.
func Parse(b []byte) (*Module, error) {
	r, err := newReader(b)
	if err != nil {
		return nil, err
	}
	p := &parser{m: &Module{}}
	last := 0
	for !r.done() {
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		if id != sectionCustom {
			rank, known := sectionRank[id]
			if !known {
				return nil, fmt.Errorf("unknown section id %d", id)
			}
			if rank <= last {
				return nil, fmt.Errorf("%s section is out of order or repeated", sectionNames[id])
			}
			last = rank
		}
		if err := p.section(id, &reader{b: body}); err != nil {
			if id == sectionCustom {
				return nil, fmt.Errorf("custom section: %w", err)
			}
			return nil, fmt.Errorf("%s section: %w", sectionNames[id], err)
		}
	}
	if p.sawFunctions && !p.sawCode && p.m.Shape.Functions > 0 {
		return nil, fmt.Errorf("function section declares %d functions but there is no code section", p.m.Shape.Functions)
	}
	return p.m, nil
}

// parser holds what one section needs of those before it.
type parser struct {
	m *Module
	// typeSection is the type section's body, which imports walks again
	// for the types of the function imports.
	typeSection []byte
	// blocks and branchCost are the open blocks of the function being
	// read and its branch cost so far (see Shape.MaxBlockBranches).
	blocks       []uint64
	branchCost   uint64
	depth        int // the deepest nesting so far
	sawFunctions bool
	sawCode      bool
	// visit, if set, is called with each instruction's body, opcode and
	// offset in the body as body reads it.
	visit func(body []byte, op byte, at int)
}

func (p *parser) section(id byte, r *reader) error {
	var err error
	switch id {
	case sectionCustom:
		var name string
		if name, err = p.name(r); err == nil {
			p.m.Custom = append(p.m.Custom, CustomSection{Name: name, Payload: r.b[r.off:]})
			r.off = len(r.b)
		}
	case sectionType:
		p.typeSection = r.b
		err = p.types(r)
	case sectionImport:
		err = p.imports(r)
	case sectionFunction:
		p.sawFunctions = true
		err = p.functions(r)
	case sectionTable:
		err = vector(r, "table", func(int) error {
			t, err := r.tableType()
			if err == nil {
				p.addTable(t)
			}
			return err
		})
	case sectionMemory:
		err = vector(r, "memory", func(int) error {
			mem, err := r.limits()
			if err == nil {
				p.addMemory(mem)
			}
			return err
		})
	case sectionTag:
		return errors.New("exception handling (tags) is not supported")
	case sectionGlobal:
		err = vector(r, "global", func(int) error {
			p.m.Shape.Globals++
			if err := r.globalType(); err != nil {
				return err
			}
			return r.constExpr(&p.m.refs)
		})
	case sectionExport:
		err = vector(r, "export", func(int) error {
			var e Export
			var err error
			if e.Name, err = p.name(r); err != nil {
				return err
			}
			if e.Kind, err = r.byte(); err != nil {
				return err
			}
			if e.Kind > KindTag {
				return fmt.Errorf("unknown export kind 0x%02x", e.Kind)
			}
			if e.Index, err = r.u32(); err != nil {
				return err
			}
			p.m.Exports = append(p.m.Exports, e)
			p.m.Shape.Exports++
			return nil
		})
	case sectionStart:
		_, err = r.u32()
	case sectionElement:
		err = vector(r, "element segment", func(int) error { return p.element(r) })
	case sectionDataCount:
		_, err = r.u32()
	case sectionCode:
		p.sawCode = true
		p.m.Shape.CodeBytes = len(r.b)
		err = p.code(r)
	case sectionData:
		err = vector(r, "data segment", func(int) error { return p.data(r) })
	}
	if err == nil && !r.done() {
		err = errors.New("bytes after its last entry")
	}
	return err
}

// vector reads a vector's count, then each entry with read, naming the
// entry in errors.
func vector(r *reader, what string, read func(i int) error) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	for i := 0; i < int(n); i++ {
		if err := read(i); err != nil {
			return fmt.Errorf("%s %d: %w", what, i, err)
		}
	}
	return nil
}

func (p *parser) name(r *reader) (string, error) {
	s, err := r.name()
	if err == nil {
		p.m.Shape.MaxNameLength = max(p.m.Shape.MaxNameLength, len(s))
	}
	return s, err
}

func (p *parser) addTable(t Table) {
	p.m.Tables = append(p.m.Tables, t)
	sh := &p.m.Shape
	sh.Tables++
	sh.TableElements = addSat(sh.TableElements, t.Min)
}

func (p *parser) addMemory(mem Memory) {
	p.m.Memories = append(p.m.Memories, mem)
	p.m.Shape.Memories++
}

func (p *parser) types(r *reader) error {
	return vector(r, "type", func(int) error {
		params, results, err := r.funcType(nil)
		if err != nil {
			return err
		}
		p.m.params = append(p.m.params, params)
		p.m.results = append(p.m.results, results)
		sh := &p.m.Shape
		sh.Types++
		sh.MaxParams = max(sh.MaxParams, params)
		sh.MaxResults = max(sh.MaxResults, results)
		return nil
	})
}

// funcType reads one function type and counts its parameters and results.
// Their value types are kept in keep, unless it is nil: only the types of
// imports are kept, so that many types cost no memory for their values.
func (r *reader) funcType(keep *FuncType) (params, results int, err error) {
	form, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	if form != 0x60 {
		return 0, 0, fmt.Errorf("form 0x%02x is not a function type (0x60); GC types are not supported", form)
	}
	var counts [2]int
	for k := range counts {
		if err := vector(r, "value type", func(int) error {
			t, err := r.valType()
			counts[k]++
			switch {
			case keep == nil || err != nil:
			case k == 0:
				keep.Params = append(keep.Params, t)
			default:
				keep.Results = append(keep.Results, t)
			}
			return err
		}); err != nil {
			return 0, 0, err
		}
	}
	return counts[0], counts[1], nil
}

func (p *parser) imports(r *reader) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	typed := map[uint32][]int{} // type index: the function imports of that type
	for i := 0; i < int(n); i++ {
		var imp Import
		if imp.Module, err = p.name(r); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		if imp.Name, err = p.name(r); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		if imp.Kind, err = r.byte(); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		switch imp.Kind {
		case KindFunc:
			var t uint32
			if t, err = r.u32(); err == nil {
				p.m.funcTypes = append(p.m.funcTypes, t)
				typed[t] = append(typed[t], len(p.m.Imports))
			}
		case KindTable:
			var t Table
			if t, err = r.tableType(); err == nil {
				t.Imported = true
				p.addTable(t)
			}
		case KindMemory:
			var mem Memory
			if mem, err = r.limits(); err == nil {
				mem.Imported = true
				p.addMemory(mem)
			}
		case KindGlobal:
			err = r.globalType()
		case KindTag:
			err = errors.New("exception handling (tags) is not supported")
		default:
			err = fmt.Errorf("unknown import kind 0x%02x", imp.Kind)
		}
		if err != nil {
			return fmt.Errorf("import %d (%s.%s): %w", i, imp.Module, imp.Name, err)
		}
		p.m.Imports = append(p.m.Imports, imp)
		p.m.Shape.Imports++
	}
	p.importTypes(typed)
	return nil
}

// importTypes gives function imports their types, from a second walk of
// the type section (which types has already checked), keeping the value
// types of only those it needs. An index past the last type is left for
// the engine to refuse.
func (p *parser) importTypes(typed map[uint32][]int) {
	if len(typed) == 0 {
		return
	}
	r := &reader{b: p.typeSection}
	n, _ := r.u32() // zero when there is no type section
	for i := range n {
		imports, ok := typed[i]
		if !ok {
			r.funcType(nil)
			continue
		}
		t := &FuncType{}
		r.funcType(t)
		for _, k := range imports {
			p.m.Imports[k].Type = t
		}
	}
}

func (p *parser) functions(r *reader) error {
	return vector(r, "function", func(int) error {
		t, err := r.u32()
		if err == nil {
			p.m.funcTypes = append(p.m.funcTypes, t)
			p.m.Shape.Functions++
		}
		return err
	})
}

// element reads one element segment (flags 0 to 7 of the 2.0 format).
func (p *parser) element(r *reader) error {
	flags, err := r.u32()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("unknown element segment flags %d", flags)
	}
	passive := flags&0x03 == 0x01
	if flags&0x01 == 0 { // active: an optional table index, then the offset
		if flags&0x02 != 0 {
			if _, err := r.u32(); err != nil {
				return err
			}
		}
		if err := r.constExpr(&p.m.refs); err != nil {
			return err
		}
	}
	exprs := flags&0x04 != 0
	if flags&0x03 != 0 { // an element kind or a reference type
		kind, err := r.byte()
		if err != nil {
			return err
		}
		if exprs && kind != 0x70 && kind != 0x6f {
			return fmt.Errorf("unknown reference type 0x%02x", kind)
		}
		if !exprs && kind != 0x00 {
			return fmt.Errorf("unknown element kind 0x%02x", kind)
		}
	}
	var entries uint64
	err = vector(r, "entry", func(int) error {
		entries++
		if exprs {
			return r.constExpr(&p.m.refs)
		}
		f, err := r.u32()
		p.m.refs.note(0xd2, f)
		return err
	})
	sh := &p.m.Shape
	sh.ElementSegments++
	sh.ElementEntries += entries
	if passive {
		sh.PassiveElementEntries += entries
	}
	return err
}

func (p *parser) data(r *reader) error {
	flags, err := r.u32()
	if err != nil {
		return err
	}
	switch flags {
	case 0:
		err = r.constExpr(&p.m.refs)
	case 1:
	case 2:
		if _, err = r.u32(); err == nil {
			err = r.constExpr(&p.m.refs)
		}
	default:
		err = fmt.Errorf("unknown data segment flags %d", flags)
	}
	if err != nil {
		return err
	}
	n, err := r.u32()
	if err != nil {
		return err
	}
	if uint64(n) > uint64(len(r.b)-r.off) {
		return errShort
	}
	r.off += int(n)
	p.m.Shape.DataSegments++
	p.m.Shape.DataBytes += int(n)
	return nil
}

// SetCustomSection returns a copy of b in which every custom section called
// name is removed and one holding payload is appended. Custom sections may
// stand anywhere, so appending keeps the module valid.
func SetCustomSection(b []byte, name string, payload []byte) ([]byte, error) {
	if !utf8.ValidString(name) {
		return nil, errors.New("custom section name is not UTF-8")
	}
	out, err := filterSections(b, func(id byte, body []byte) bool {
		if id != sectionCustom {
			return true
		}
		n, err := (&reader{b: body}).name()
		return err != nil || n != name
	})
	if err != nil {
		return nil, err
	}
	var content []byte
	content = binary.AppendUvarint(content, uint64(len(name)))
	content = append(content, name...)
	content = append(content, payload...)
	out = append(out, sectionCustom)
	out = binary.AppendUvarint(out, uint64(len(content)))
	return append(out, content...), nil
}

// StripCustom returns a copy of b without its custom sections. No engine
// needs them to run a module, and what they may hold (names, debug
// information) costs memory to decode; b is returned as it is when it has
// none.
func StripCustom(b []byte) ([]byte, error) {
	has := false
	if _, err := filterSections(b, func(id byte, _ []byte) bool {
		has = has || id == sectionCustom
		return true
	}); err != nil || !has {
		return b, err
	}
	return filterSections(b, func(id byte, _ []byte) bool { return id != sectionCustom })
}

// filterSections copies the header and each section keep accepts.
func filterSections(b []byte, keep func(id byte, body []byte) bool) ([]byte, error) {
	r, err := newReader(b)
	if err != nil {
		return nil, err
	}
	out := append(make([]byte, 0, len(b)), b[:8]...)
	for !r.done() {
		start := r.off
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		if keep(id, body) {
			out = append(out, b[start:r.off]...)
		}
	}
	return out, nil
}

// reader walks a byte slice; every method fails rather than reads past the end.
type reader struct {
	b   []byte
	off int
}

var errShort = errors.New("unexpected end of section")

func newReader(b []byte) (*reader, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], magic) {
		return nil, ErrNotWasm
	}
	if v := binary.LittleEndian.Uint32(b[4:8]); v != coreVersion {
		return nil, fmt.Errorf("binary version %#x is not a core module (version 1); components are not supported", v)
	}
	return &reader{b: b, off: 8}, nil
}

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) section() (id byte, body []byte, err error) {
	if id, err = r.byte(); err != nil {
		return 0, nil, err
	}
	size, err := r.u32()
	if err != nil {
		return 0, nil, fmt.Errorf("section %d: %w", id, err)
	}
	if uint64(size) > uint64(len(r.b)-r.off) {
		return 0, nil, fmt.Errorf("section %d claims %d bytes, only %d remain", id, size, len(r.b)-r.off)
	}
	body = r.b[r.off : r.off+int(size)]
	r.off += int(size)
	return id, body, nil
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) u32() (uint32, error) {
	// Most integers in a module take one byte.
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		r.off++
		return uint32(r.b[r.off-1]), nil
	}
	v, err := r.uleb(5)
	return uint32(v), err
}

// uleb decodes an unsigned LEB128 of at most maxBytes bytes.
func (r *reader) uleb(maxBytes int) (uint64, error) {
	var v uint64
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 9 && c&0x80 == 0 && c > 0x01 {
			// The tenth byte carries only the 64th bit.
			return 0, errors.New("integer overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if maxBytes == 5 && v > 0xffffffff {
				return 0, errors.New("integer overflows 32 bits")
			}
			return v, nil
		}
	}
	return 0, errors.New("integer is too long")
}

// sleb skips a signed LEB128 of at most maxBytes bytes; only its length
// matters here, as no constant's value changes what a module costs.
func (r *reader) sleb(maxBytes int) error {
	if r.off < len(r.b) && r.b[r.off] < 0x80 {
		r.off++
		return nil
	}
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return err
		}
		if c&0x80 == 0 {
			return nil
		}
	}
	return errors.New("integer is too long")
}

func (r *reader) skip(n int) error {
	if n > len(r.b)-r.off {
		return errShort
	}
	r.off += n
	return nil
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(len(r.b)-r.off) {
		return "", errShort
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	if !utf8.Valid(s) {
		return "", errors.New("name is not UTF-8")
	}
	return string(s), nil
}

// limits reads a memory's limits: a flag byte (bit 0: has a maximum, bit 1:
// shared, bit 2: 64-bit), then the minimum and maybe maximum.
func (r *reader) limits() (Memory, error) {
	flag, err := r.byte()
	if err != nil {
		return Memory{}, err
	}
	if flag > 0x07 {
		return Memory{}, fmt.Errorf("unknown limits flag 0x%02x", flag)
	}
	width := 5
	if flag&0x04 != 0 {
		width = 10
	}
	mem := Memory{Shared: flag&0x02 != 0, Is64: flag&0x04 != 0}
	if mem.MinPages, err = r.uleb(width); err != nil {
		return Memory{}, err
	}
	if flag&0x01 != 0 {
		mem.HasMax = true
		if mem.MaxPages, err = r.uleb(width); err != nil {
			return Memory{}, err
		}
	}
	return mem, nil
}

// tableType reads a table type: a reference type, then limits without the
// shared and 64-bit flags.
func (r *reader) tableType() (Table, error) {
	ref, err := r.byte()
	if err != nil {
		return Table{}, err
	}
	switch ref {
	case 0x70, 0x6f:
	case 0x40:
		return Table{}, errors.New("a table with an initializer expression is not supported")
	default:
		return Table{}, fmt.Errorf("unknown reference type 0x%02x", ref)
	}
	if r.off < len(r.b) && r.b[r.off]&^0x01 != 0 {
		return Table{}, fmt.Errorf("limits flag 0x%02x is not supported (shared or 64-bit tables)", r.b[r.off])
	}
	lim, err := r.limits()
	return Table{Min: lim.MinPages, Max: lim.MaxPages, HasMax: lim.HasMax}, err
}

// valType reads a value type of WebAssembly 2.0.
func (r *reader) valType() (ValType, error) {
	b, err := r.byte()
	if err != nil {
		return 0, err
	}
	if _, ok := valTypeNames[ValType(b)]; !ok {
		return 0, fmt.Errorf("unknown value type 0x%02x", b)
	}
	return ValType(b), nil
}

func (r *reader) globalType() error {
	if _, err := r.valType(); err != nil {
		return err
	}
	mut, err := r.byte()
	if err == nil && mut > 1 {
		err = fmt.Errorf("unknown mutability 0x%02x", mut)
	}
	return err
}

// mulSat multiplies without wrapping past the largest uint64.
func mulSat(a, b uint64) uint64 {
	if a != 0 && b > ^uint64(0)/a {
		return ^uint64(0)
	}
	return a * b
}

// addSat adds without wrapping past the largest uint64.
func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return ^uint64(0)
}
