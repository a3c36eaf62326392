package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DataExport is the function ExportState adds: it does what instantiation
// did before the rewrite, once the instance exists (writes the data
// segments into memory, then runs the start function), so that an
// instance made from a snapshot can skip it.
const DataExport = "wasmcp.data"

// reservedPrefix begins the names of every export ExportState adds.
const reservedPrefix = "wasmcp."

// Global is a mutable global that ExportState exported.
type Global struct {
	Export string
	Index  uint32 // in the module's index space of globals
	// Type is the global's value type: 0x7f i32, 0x7e i64, 0x7d f32 or
	// 0x7c f64.
	Type byte
}

// Reactor is a module rewritten by ExportState.
type Reactor struct {
	Wasm []byte
	// Globals are the module's mutable globals, in index order.
	Globals []Global
	// Unsafe, when not empty, says why memory and globals are not all of
	// the state an instance of the module can build: a snapshot of them
	// would not be the instance.
	Unsafe string
}

// rawSection is one section of a module being rewritten.
type rawSection struct {
	id   byte
	body []byte
}

// ExportState rewrites a module so that a host can capture an instance's
// state and make new instances from it: every mutable global is exported
// (as "wasmcp.global.<index>"), the active data segments become passive,
// and the start function no longer runs at instantiation; DataExport
// does both. Nothing else changes: the module's own code cannot tell.
func ExportState(b []byte) (*Reactor, error) {
	parsed, err := Parse(b)
	if err != nil {
		return nil, err
	}
	for _, e := range parsed.Exports {
		if strings.HasPrefix(e.Name, reservedPrefix) {
			return nil, fmt.Errorf("exports %q: export names beginning with %q are reserved for wasmcp", e.Name, reservedPrefix)
		}
	}
	r, err := newReader(b)
	if err != nil {
		return nil, err
	}
	var sections []rawSection
	for !r.done() {
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		sections = append(sections, rawSection{id, body})
	}
	out := &Reactor{}
	if parsed.Shape.StateOps > 0 {
		out.Unsafe = "its code changes tables or drops segments (table.set, table.grow, table.fill, table.copy, table.init, elem.drop or data.drop), which a snapshot of memory and globals does not keep"
	}
	funcs := len(parsed.funcTypes) // imported and defined: the new function's index
	newType := uint64(parsed.Shape.Types)
	var start []byte // the start function's call, if any
	var dataInit []byte
	segments := 0
	var kept []rawSection
	for _, s := range sections {
		switch s.id {
		case sectionGlobal:
			imported := 0
			for _, imp := range parsed.Imports {
				if imp.Kind == KindGlobal {
					imported++
				}
			}
			globals, unsafe, err := mutableGlobals(s.body, imported)
			if err != nil {
				return nil, fmt.Errorf("global section: %w", err)
			}
			out.Globals = globals
			if unsafe != "" && out.Unsafe == "" {
				out.Unsafe = unsafe
			}
		case sectionStart:
			start = append([]byte{0x10}, s.body...) // call <index>
			continue
		case sectionData:
			body, code, n, err := passiveData(s.body)
			if err != nil {
				return nil, fmt.Errorf("data section: %w", err)
			}
			s.body, dataInit, segments = body, code, n
		}
		kept = append(kept, s)
	}
	exports := [][]byte{exportEntry(DataExport, KindFunc, uint64(funcs))}
	for i := range out.Globals {
		exports = append(exports, exportEntry(out.Globals[i].Export, KindGlobal, uint64(out.Globals[i].Index)))
	}
	body := append(append([]byte{0x00}, dataInit...), start...) // no locals
	body = append(body, 0x0b)
	kept = extend(kept, sectionType, []byte{0x60, 0x00, 0x00})
	kept = extend(kept, sectionFunction, binary.AppendUvarint(nil, newType))
	kept = extend(kept, sectionExport, exports...)
	kept = extend(kept, sectionCode, append(binary.AppendUvarint(nil, uint64(len(body))), body...))
	if !has(kept, sectionDataCount) {
		kept = insert(kept, rawSection{sectionDataCount, binary.AppendUvarint(nil, uint64(segments))})
	}
	wasm := append(make([]byte, 0, len(b)+len(body)+64), b[:8]...)
	for _, s := range kept {
		wasm = appendSection(wasm, s)
	}
	out.Wasm = wasm
	return out, nil
}

// mutableGlobals lists a global section's mutable globals, whose indices
// follow those of the imported globals, and says why one of them cannot be
// captured, if one cannot.
func mutableGlobals(body []byte, imported int) ([]Global, string, error) {
	r := &reader{b: body}
	var globals []Global
	unsafe := ""
	err := vector(r, "global", func(i int) error {
		typ, err := r.byte()
		if err != nil {
			return err
		}
		mut, err := r.byte()
		if err != nil {
			return err
		}
		if mut == 1 {
			switch typ {
			case 0x7f, 0x7e, 0x7d, 0x7c:
				index := imported + i
				globals = append(globals, Global{Export: reservedPrefix + "global." + strconv.Itoa(index), Index: uint32(index), Type: typ})
			default:
				unsafe = fmt.Sprintf("its global %d is a mutable vector or reference, which a snapshot cannot hold", i)
			}
		}
		return r.constExpr()
	})
	return globals, unsafe, err
}

// passiveData rewrites a data section's active segments as passive ones,
// and returns the code that writes them as instantiation would have:
// memory.init, then data.drop, for each in order.
func passiveData(body []byte) ([]byte, []byte, int, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, nil, 0, err
	}
	out := binary.AppendUvarint(nil, uint64(n))
	var code []byte
	for i := range n {
		flags, err := r.u32()
		if err != nil {
			return nil, nil, 0, err
		}
		var offset []byte
		switch flags {
		case 0, 2:
			if flags == 2 {
				if mem, err := r.u32(); err != nil || mem != 0 {
					return nil, nil, 0, fmt.Errorf("data segment %d: not for memory 0", i)
				}
			}
			at := r.off
			if err := r.constExpr(); err != nil {
				return nil, nil, 0, fmt.Errorf("data segment %d: %w", i, err)
			}
			offset = r.b[at : r.off-1] // without its end
		case 1:
		default:
			return nil, nil, 0, fmt.Errorf("data segment %d: unknown flags %d", i, flags)
		}
		size, err := r.u32()
		if err != nil || uint64(size) > uint64(len(r.b)-r.off) {
			return nil, nil, 0, fmt.Errorf("data segment %d: %w", i, errShort)
		}
		bytes := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		out = append(out, 0x01)
		out = binary.AppendUvarint(out, uint64(size))
		out = append(out, bytes...)
		if offset == nil {
			continue
		}
		// offset; i32.const 0; i32.const size; memory.init i 0; data.drop i
		code = append(code, offset...)
		code = append(code, 0x41, 0x00, 0x41)
		code = appendSLEB(code, int64(int32(size)))
		code = append(code, 0xfc, 0x08)
		code = binary.AppendUvarint(code, uint64(i))
		code = append(code, 0x00, 0xfc, 0x09)
		code = binary.AppendUvarint(code, uint64(i))
	}
	if !r.done() {
		return nil, nil, 0, errors.New("bytes after its last entry")
	}
	return out, code, int(n), nil
}

// extend appends entries to the vector that is the body of section id,
// adding the section if the module has none.
func extend(sections []rawSection, id byte, entries ...[]byte) []rawSection {
	for i, s := range sections {
		if s.id != id {
			continue
		}
		r := &reader{b: s.body}
		n, _ := r.u32() // Parse read it
		body := binary.AppendUvarint(nil, uint64(n)+uint64(len(entries)))
		body = append(body, s.body[r.off:]...)
		for _, e := range entries {
			body = append(body, e...)
		}
		sections[i].body = body
		return sections
	}
	body := binary.AppendUvarint(nil, uint64(len(entries)))
	for _, e := range entries {
		body = append(body, e...)
	}
	return insert(sections, rawSection{id, body})
}

// insert places a section the module lacks where its rank says.
func insert(sections []rawSection, s rawSection) []rawSection {
	at := len(sections)
	for i, other := range sections {
		if other.id != sectionCustom && sectionRank[other.id] > sectionRank[s.id] {
			at = i
			break
		}
	}
	sections = append(sections, rawSection{})
	copy(sections[at+1:], sections[at:])
	sections[at] = s
	return sections
}

func has(sections []rawSection, id byte) bool {
	for _, s := range sections {
		if s.id == id {
			return true
		}
	}
	return false
}

func exportEntry(name string, kind byte, index uint64) []byte {
	e := binary.AppendUvarint(nil, uint64(len(name)))
	e = append(e, name...)
	e = append(e, kind)
	return binary.AppendUvarint(e, index)
}

func appendSection(b []byte, s rawSection) []byte {
	b = append(b, s.id)
	b = binary.AppendUvarint(b, uint64(len(s.body)))
	return append(b, s.body...)
}

// appendSLEB appends v in signed LEB128.
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
