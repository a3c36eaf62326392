package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// sectionTable is the table section's id.
const sectionTable = 4

// CapTables returns b with every table it defines bounded by limit
// elements: a table with no maximum, or a larger one, gets limit as its
// maximum, so that table.grow fails past it. Neither engine counts tables
// against the memory limit, and a guest could otherwise grow one to
// gigabytes. A table whose minimum is already over limit is an error. b is
// returned as it is when no table needs a cap; otherwise a new slice.
func CapTables(b []byte, limit uint32) ([]byte, error) {
	r, err := newReader(b)
	if err != nil {
		return nil, err
	}
	for !r.done() {
		start := r.off
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		if id != sectionTable {
			continue
		}
		capped, changed, err := capTableSection(body, limit)
		if err != nil || !changed {
			return b, err
		}
		out := append([]byte(nil), b[:start]...)
		out = append(out, sectionTable)
		out = binary.AppendUvarint(out, uint64(len(capped)))
		out = append(out, capped...)
		// A module has at most one table section; the compiler checks the
		// rest.
		return append(out, b[r.off:]...), nil
	}
	return b, nil
}

// capTableSection re-encodes a table section with every maximum at most
// limit, and says whether anything changed.
func capTableSection(body []byte, limit uint32) ([]byte, bool, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, false, fmt.Errorf("table section: %w", err)
	}
	out := binary.AppendUvarint(nil, uint64(n))
	changed := false
	for i := uint32(0); i < n; i++ {
		refType, err := r.byte()
		if err != nil {
			return nil, false, fmt.Errorf("table %d: %w", i, err)
		}
		if refType == 0x40 {
			return nil, false, fmt.Errorf("table %d has an initializer expression, which is not supported", i)
		}
		if r.off >= len(r.b) {
			return nil, false, fmt.Errorf("table %d: %w", i, errShort)
		}
		if flag := r.b[r.off]; flag&^0x01 != 0 {
			return nil, false, fmt.Errorf("table %d: limits flag 0x%02x is not supported (shared or 64-bit tables)", i, flag)
		}
		lim, err := r.limits()
		if err != nil {
			return nil, false, fmt.Errorf("table %d: %w", i, err)
		}
		if lim.MinPages > uint64(limit) {
			return nil, false, fmt.Errorf("table %d starts with %d elements; wasmcp allows at most %d", i, lim.MinPages, limit)
		}
		if !lim.HasMax || lim.MaxPages > uint64(limit) {
			lim.MaxPages, changed = uint64(limit), true
		}
		out = append(out, refType, 0x01)
		out = binary.AppendUvarint(out, lim.MinPages)
		out = binary.AppendUvarint(out, lim.MaxPages)
	}
	if !r.done() {
		return nil, false, errors.New("table section: bytes after the last table")
	}
	return out, changed, nil
}
