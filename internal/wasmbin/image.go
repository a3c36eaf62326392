package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// imagePage is the granularity of an image's data segments: a host page,
// which is what an engine maps copy-on-write.
const imagePage = 4096

// imageGap is the shortest run of zero pages Image leaves between two
// data segments: fewer, larger segments cost an engine less to lay out.
const imageGap = 16 * imagePage

// denseImage is how much memory wasmtime lays out as one copy-on-write
// image whatever its density (its memory_guaranteed_dense_image_size);
// a larger range it lays out only if data segments fill half of it.
const denseImage = 16 << 20

// Image rewrites a module that ExportState made into one whose
// instantiation builds a captured instance: its memory starts at the
// captured memory's size, with the captured bytes as active data segments
// (page-aligned runs of non-zero pages), and each mutable global in
// globals starts at the value in values, as bits. An engine that
// initialises memory from data segments copy-on-write (wasmtime) then
// maps a snapshot into each new instance instead of copying it.
func Image(wasm []byte, memory []byte, globals []Global, values []uint64) ([]byte, error) {
	if len(memory)%(64<<10) != 0 {
		return nil, fmt.Errorf("the memory's size %d is not a whole number of pages", len(memory))
	}
	if len(globals) != len(values) {
		return nil, fmt.Errorf("%d globals but %d values", len(globals), len(values))
	}
	init := make(map[uint32][]byte, len(globals))
	for i, g := range globals {
		init[g.Index] = constOf(g.Type, values[i])
	}
	parsed, err := Parse(wasm)
	if err != nil {
		return nil, err
	}
	imported := 0
	for _, imp := range parsed.Imports {
		switch imp.Kind {
		case KindGlobal:
			imported++
		case KindMemory:
			return nil, errors.New("it imports its memory")
		}
	}
	sections, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	segments := imageSegments(memory)
	hasMemory := false
	for i, sec := range sections {
		switch sec.id {
		case sectionMemory:
			hasMemory = true
			if sections[i].body, err = sizeMemory(sec.body, uint64(len(memory)>>16)); err != nil {
				return nil, fmt.Errorf("memory section: %w", err)
			}
		case sectionGlobal:
			if sections[i].body, err = initGlobals(sec.body, imported, init); err != nil {
				return nil, fmt.Errorf("global section: %w", err)
			}
		case sectionDataCount:
			n, err := (&reader{b: sec.body}).u32()
			if err != nil {
				return nil, fmt.Errorf("data count section: %w", err)
			}
			sections[i].body = binary.AppendUvarint(nil, uint64(n)+uint64(len(segments)))
		}
	}
	if len(segments) > 0 {
		if !hasMemory {
			return nil, errors.New("it defines no memory")
		}
		entries := make([][]byte, len(segments))
		for i, s := range segments {
			e := []byte{0x00, 0x41}
			e = appendSleb(e, int64(int32(s.Offset)))
			e = append(e, 0x0b)
			e = binary.AppendUvarint(e, uint64(len(s.Bytes)))
			entries[i] = append(e, s.Bytes...)
		}
		sections = extend(sections, sectionData, entries...)
	}
	out := assemble(wasm[:8], sections, len(wasm)+len(memory))
	return out, nil
}

// imageSegments are the page-aligned runs of memory that hold a non-zero
// byte, runs less than imageGap apart merged, or one run from the first to
// the last if they would fill less than half a range wasmtime lays out
// only when dense.
func imageSegments(memory []byte) []Segment {
	var segs []Segment
	data := 0
	for _, r := range NonZeroRuns(memory, imagePage) {
		if last := len(segs) - 1; last >= 0 && r[0]-int(segs[last].end()) < imageGap {
			data += r[1] - int(segs[last].end())
			segs[last].Bytes = memory[segs[last].Offset:r[1]]
		} else {
			segs = append(segs, Segment{Offset: uint32(r[0]), Bytes: memory[r[0]:r[1]]})
			data += r[1] - r[0]
		}
	}
	if len(segs) > 1 {
		first, last := segs[0], segs[len(segs)-1]
		span := int(last.Offset) + len(last.Bytes) - int(first.Offset)
		if span > denseImage && 2*data < span {
			segs = []Segment{{Offset: first.Offset, Bytes: memory[first.Offset : int(first.Offset)+span]}}
		}
	}
	return segs
}

// NonZeroRuns returns the runs of memory's pages (of page bytes; the last
// may be shorter) that hold a non-zero byte, as [start, end) offsets,
// adjacent pages in one run.
func NonZeroRuns(memory []byte, page int) [][2]int {
	var runs [][2]int
	for p := 0; p < len(memory); p += page {
		end := min(p+page, len(memory))
		if allZero(memory[p:end]) {
			continue
		}
		if last := len(runs) - 1; last >= 0 && runs[last][1] == p {
			runs[last][1] = end
		} else {
			runs = append(runs, [2]int{p, end})
		}
	}
	return runs
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// sizeMemory sets the minimum of a memory section's one memory to pages.
func sizeMemory(body []byte, pages uint64) ([]byte, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, fmt.Errorf("%d memories, not one", n)
	}
	mem, err := r.limits()
	if err != nil {
		return nil, err
	}
	if mem.Shared || mem.Is64 {
		return nil, errors.New("a shared or 64-bit memory")
	}
	if mem.HasMax && mem.MaxPages < pages {
		return nil, fmt.Errorf("the captured memory's %d pages are over its maximum of %d", pages, mem.MaxPages)
	}
	out := []byte{1, 0}
	out = binary.AppendUvarint(out, pages)
	if mem.HasMax {
		out[1] = 1
		out = binary.AppendUvarint(out, mem.MaxPages)
	}
	return append(out, body[r.off:]...), nil
}

// initGlobals replaces the initialiser of each global in init, by index
// (imported globals come first), with init's constant expression.
func initGlobals(body []byte, imported int, init map[uint32][]byte) ([]byte, error) {
	r := &reader{b: body}
	var out []byte
	err := vector(r, "global", func(i int) error {
		at := r.off
		if err := r.skip(2); err != nil { // value type, mutability
			return err
		}
		out = append(out, r.b[at:r.off]...)
		at = r.off
		if err := r.constExpr(nil); err != nil {
			return err
		}
		if c, ok := init[uint32(imported+i)]; ok {
			out = append(out, c...)
		} else {
			out = append(out, r.b[at:r.off]...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !r.done() {
		return nil, errors.New("bytes after its last entry")
	}
	n, _ := (&reader{b: body}).u32() // vector read it
	return append(binary.AppendUvarint(nil, uint64(n)), out...), nil
}

// constOf is the constant expression of a number of value type t, given
// as its bits.
func constOf(t byte, bits uint64) []byte {
	switch t {
	case 0x7e:
		return append(appendSleb([]byte{0x42}, int64(bits)), 0x0b)
	case 0x7d:
		return append(binary.LittleEndian.AppendUint32([]byte{0x43}, uint32(bits)), 0x0b)
	case 0x7c:
		return append(binary.LittleEndian.AppendUint64([]byte{0x44}, bits), 0x0b)
	}
	return append(appendSleb([]byte{0x41}, int64(int32(uint32(bits)))), 0x0b)
}

// appendSleb appends v as a signed LEB128 integer, as i32.const and
// i64.const take it (encoding/binary's varints are zig-zag encoded).
func appendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
