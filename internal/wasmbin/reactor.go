package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// StartExport names the module's start function once ExportState has
// removed it from the start section: the host calls it after writing the
// data segments, as instantiation would have.
const StartExport = "wasmcp.start"

// Segment is bytes to write into memory 0 at an offset.
type Segment struct {
	Offset uint32
	Bytes  []byte
}

// end is where the segment's bytes end in memory.
func (s Segment) end() uint64 { return uint64(s.Offset) + uint64(len(s.Bytes)) }

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
	// Data is what the module's active data segments wrote at
	// instantiation, in order, segments near one another merged: the host
	// writes it into a new instance's memory.
	Data []Segment
	// Start says whether the module has a start function (StartExport).
	Start bool
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

// splitSections cuts a module into its sections, in order, for the
// rewrites that keep most of them as they are.
func splitSections(b []byte) ([]rawSection, error) {
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
	return sections, nil
}

// ExportState rewrites a module so that a host can capture an instance's
// state and make new instances from it: every mutable global is exported
// (as "wasmcp.global.<index>"), the active data segments are emptied (as
// passive segments, so that every segment keeps its index, or dropped
// when no code can name one) and returned for the host to write, and the start function no longer runs at
// instantiation but is exported as StartExport. Nothing else changes: the
// module's own code cannot tell, since an active segment is dropped once
// instantiation wrote it.
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
	sections, err := splitSections(b)
	if err != nil {
		return nil, err
	}
	out := &Reactor{}
	if parsed.Shape.StateOps > 0 {
		out.Unsafe = "its code changes tables or drops segments (table.set, table.grow, table.fill, table.copy, table.init, elem.drop or data.drop), which a snapshot of memory and globals does not keep"
	}
	var start []byte // the start function's index, if any
	dataCount := hasDataCount(sections)
	var kept []rawSection
	for _, sec := range sections {
		switch sec.id {
		case sectionGlobal:
			globals, unsafe, err := mutableGlobals(sec.body, parsed.importedGlobals())
			if err != nil {
				return nil, fmt.Errorf("global section: %w", err)
			}
			out.Globals = globals
			if unsafe != "" && out.Unsafe == "" {
				out.Unsafe = unsafe
			}
		case sectionStart:
			start = sec.body
			continue
		case sectionData:
			var keep bool
			if sec.body, out.Data, keep, err = emptyDataSection(sec.body, dataCount); err != nil {
				return nil, err
			}
			if !keep {
				continue
			}
		}
		kept = append(kept, sec)
	}
	var exports [][]byte
	if start != nil {
		out.Start = true
		exports = append(exports, append(exportName(StartExport, KindFunc), start...))
	}
	for _, g := range out.Globals {
		exports = append(exports, append(exportName(g.Export, KindGlobal), binary.AppendUvarint(nil, uint64(g.Index))...))
	}
	if len(exports) > 0 {
		kept = extend(kept, sectionExport, exports...)
	}
	wasm := assemble(b[:8], kept, len(b))
	out.Wasm = wasm
	return out, nil
}

// EmptyData rewrites a module's active data segments as ExportState
// does, and returns what they held, for a host that gives each instance a
// memory that holds it already: instantiation then writes nothing. Passive
// segments are kept as they are. A module whose memory is imported, or
// whose active segments are not all at constant offsets in memory 0, gets
// an error and is best run as it is.
func EmptyData(b []byte) ([]byte, []Segment, error) {
	parsed, err := Parse(b)
	if err != nil {
		return nil, nil, err
	}
	for _, imp := range parsed.Imports {
		if imp.Kind == KindMemory {
			return nil, nil, errors.New("it imports its memory")
		}
	}
	sections, err := splitSections(b)
	if err != nil {
		return nil, nil, err
	}
	dataCount := hasDataCount(sections)
	wasm := append(make([]byte, 0, len(b)), b[:8]...)
	var data []Segment
	for _, sec := range sections {
		if sec.id == sectionData {
			var keep bool
			if sec.body, data, keep, err = emptyDataSection(sec.body, dataCount); err != nil {
				return nil, nil, err
			}
			if !keep {
				continue
			}
		}
		wasm = appendSection(wasm, sec)
	}
	return wasm, data, nil
}

// hasDataCount reports whether a module has a data count section. Without
// one no code can name a segment (memory.init and data.drop need one), so
// emptied segments need not keep their places: an engine would still make
// each in every instance.
func hasDataCount(sections []rawSection) bool {
	for _, sec := range sections {
		if sec.id == sectionDataCount {
			return true
		}
	}
	return false
}

// emptyDataSection is emptyData of a data section's body, and whether the
// section is still needed: only if code can name its segments.
func emptyDataSection(body []byte, dataCount bool) ([]byte, []Segment, bool, error) {
	body, data, err := emptyData(body)
	if err != nil {
		return nil, nil, false, fmt.Errorf("data section: %w", err)
	}
	return body, data, dataCount, nil
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
		return r.constExpr(nil)
	})
	return globals, unsafe, err
}

// mergeGap is the largest run of zeroes between two data segments that
// emptyData merges across: Go writes tens of thousands of small segments.
const mergeGap = 64

// emptyData rewrites a data section's active segments as empty passive
// ones, and returns what they held, in order, with segments less than
// mergeGap apart merged.
func emptyData(body []byte) ([]byte, []Segment, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, nil, err
	}
	out := binary.AppendUvarint(nil, uint64(n))
	var data []Segment
	// earlierEnd is where the segments before data's last one end, at the
	// furthest: merging may fill a gap with zeroes only above it.
	var earlierEnd uint64
	for i := range n {
		flags, err := r.u32()
		if err != nil {
			return nil, nil, err
		}
		active := flags != 1
		var offset uint32
		switch flags {
		case 0, 2:
			if flags == 2 {
				if mem, err := r.u32(); err != nil || mem != 0 {
					return nil, nil, fmt.Errorf("data segment %d: not for memory 0", i)
				}
			}
			if offset, err = constOffset(r); err != nil {
				return nil, nil, fmt.Errorf("data segment %d: %w", i, err)
			}
		case 1:
		default:
			return nil, nil, fmt.Errorf("data segment %d: unknown flags %d", i, flags)
		}
		size, err := r.u32()
		if err != nil || uint64(size) > uint64(len(r.b)-r.off) {
			return nil, nil, fmt.Errorf("data segment %d: %w", i, errShort)
		}
		bytes := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		out = append(out, 0x01)
		if !active {
			out = binary.AppendUvarint(out, uint64(size))
			out = append(out, bytes...)
			continue
		}
		out = append(out, 0x00) // empty
		if last := len(data) - 1; last >= 0 && mergeable(data[last], earlierEnd, offset) {
			seg := &data[last]
			end := uint64(offset) - uint64(seg.Offset) + uint64(size)
			if end > uint64(len(seg.Bytes)) {
				seg.Bytes = append(seg.Bytes, make([]byte, end-uint64(len(seg.Bytes)))...)
			}
			copy(seg.Bytes[offset-seg.Offset:], bytes)
			continue
		}
		if last := len(data) - 1; last >= 0 {
			earlierEnd = max(earlierEnd, data[last].end())
		}
		data = append(data, Segment{Offset: offset, Bytes: append([]byte(nil), bytes...)})
	}
	if !r.done() {
		return nil, nil, errors.New("bytes after its last entry")
	}
	return out, data, nil
}

// mergeable reports whether a segment at offset may be merged into seg,
// the last kept, when the segments before seg end by earlierEnd: it starts
// within mergeGap of seg's end, and the zeroes that fill the gap between
// them overwrite no earlier segment, which the merged one is written after.
func mergeable(seg Segment, earlierEnd uint64, offset uint32) bool {
	if offset < seg.Offset || uint64(offset)-uint64(seg.Offset) > uint64(len(seg.Bytes))+mergeGap {
		return false
	}
	return uint64(offset) <= seg.end() || earlierEnd <= seg.end()
}

// constOffset reads a data segment's offset, which must be an i32.const.
func constOffset(r *reader) (uint32, error) {
	op, err := r.byte()
	if err != nil {
		return 0, err
	}
	if op != 0x41 {
		return 0, errors.New("its offset is not a constant")
	}
	v, err := r.sleb32()
	if err != nil {
		return 0, err
	}
	if end, err := r.byte(); err != nil || end != 0x0b {
		return 0, errors.New("its offset is not a constant")
	}
	return uint32(v), nil
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

// exportName is an export entry without its index.
func exportName(name string, kind byte) []byte {
	e := binary.AppendUvarint(nil, uint64(len(name)))
	e = append(e, name...)
	return append(e, kind)
}

// assemble is a module of header (magic and version) and sections, in a
// buffer of size bytes to begin with.
func assemble(header []byte, sections []rawSection, size int) []byte {
	wasm := append(make([]byte, 0, size), header...)
	for _, s := range sections {
		wasm = appendSection(wasm, s)
	}
	return wasm
}

func appendSection(b []byte, s rawSection) []byte {
	b = append(b, s.id)
	b = binary.AppendUvarint(b, uint64(len(s.body)))
	return append(b, s.body...)
}

// sleb32 reads a signed LEB128 integer of at most 32 bits.
func (r *reader) sleb32() (int32, error) {
	var v int64
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if shift < 28 && c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return int32(v), nil
		}
	}
	return 0, errors.New("integer is too long")
}
