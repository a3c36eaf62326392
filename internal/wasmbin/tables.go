package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// CapTables returns b with its tables bounded by budget elements in all:
// every table keeps its minimum, and what they may grow beyond their
// minima is shared out so that the maxima sum to at most budget. Neither
// engine counts tables against the memory limit, and a guest could
// otherwise grow many tables to gigabytes. Tables whose declared maxima
// already fit are left alone; room is shared fairly among those that ask
// for more (a table with no maximum asks for all there is). Minima that
// sum past budget are an error. It returns the module, as it is when no
// table needs a cap and otherwise a new slice, and the sum of its tables'
// maxima. Imported tables are not counted: wasmcp provides none.
func CapTables(b []byte, budget uint64) ([]byte, uint64, error) {
	r, err := newReader(b)
	if err != nil {
		return nil, 0, err
	}
	for !r.done() {
		start := r.off
		id, body, err := r.section()
		if err != nil {
			return nil, 0, err
		}
		if id != sectionTable {
			continue
		}
		capped, total, changed, err := capTableSection(body, budget)
		if err != nil || !changed {
			return b, total, err
		}
		out := append([]byte(nil), b[:start]...)
		out = append(out, sectionTable)
		out = binary.AppendUvarint(out, uint64(len(capped)))
		out = append(out, capped...)
		// A module has at most one table section; the compiler checks the
		// rest.
		return append(out, b[r.off:]...), total, nil
	}
	return b, 0, nil
}

// tableEntry is one table of a table section, as CapTables rewrites it.
type tableEntry struct {
	ref      byte
	min, max uint64
	hasMax   bool
}

// capTableSection re-encodes a table section within budget, and says what
// its maxima sum to and whether anything changed.
func capTableSection(body []byte, budget uint64) ([]byte, uint64, bool, error) {
	r := &reader{b: body}
	var tables []tableEntry
	if err := vector(r, "table", func(int) error {
		ref := byte(0)
		if r.off < len(r.b) {
			ref = r.b[r.off]
		}
		t, err := r.tableType()
		if err != nil {
			return err
		}
		tables = append(tables, tableEntry{ref: ref, min: t.Min, max: t.Max, hasMax: t.HasMax})
		return nil
	}); err != nil {
		return nil, 0, false, fmt.Errorf("table section: %w", err)
	}
	if !r.done() {
		return nil, 0, false, errors.New("table section: bytes after the last table")
	}
	var minima, maxima uint64
	fits := true
	for _, t := range tables {
		minima = addSat(minima, t.min)
		if !t.hasMax {
			fits = false
		}
		maxima = addSat(maxima, t.max)
	}
	if minima > budget {
		return nil, 0, false, fmt.Errorf("its tables start with %d elements in all; wasmcp allows at most %d", minima, budget)
	}
	if fits && maxima <= budget {
		return nil, maxima, false, nil
	}
	// Share the room above the minima: tables asking for least are served
	// first, each getting at most an equal share of what is left.
	room := budget - minima
	order := make([]int, len(tables))
	for i := range order {
		order[i] = i
	}
	want := func(t tableEntry) uint64 {
		if !t.hasMax {
			return ^uint64(0)
		}
		return t.max - min(t.max, t.min)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		wa, wb := want(tables[a]), want(tables[b])
		switch {
		case wa < wb:
			return -1
		case wa > wb:
			return 1
		}
		return 0
	})
	for k, i := range order {
		share := room / uint64(len(order)-k)
		grant := min(want(tables[i]), share)
		room -= grant
		tables[i].max, tables[i].hasMax = tables[i].min+grant, true
	}
	out := binary.AppendUvarint(nil, uint64(len(tables)))
	total := uint64(0)
	for _, t := range tables {
		out = append(out, t.ref, 0x01)
		out = binary.AppendUvarint(out, t.min)
		out = binary.AppendUvarint(out, t.max)
		total += t.max
	}
	return out, total, true, nil
}
