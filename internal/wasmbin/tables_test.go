package wasmbin

import (
	"bytes"
	"strings"
	"testing"
)

func table(flag byte, min uint64, max ...uint64) []byte {
	return cat([]byte{0x70}, limits(flag, min, max...))
}

func TestCapTables(t *testing.T) {
	mem := section(sectionMemory, vec(limits(0x00, 1)))
	for _, tc := range []struct {
		name    string
		in      []byte
		want    []byte // nil: the input, unchanged
		wantErr string
	}{
		{"no table", module(typeSection(), mem), nil, ""},
		{"bounded table", module(section(sectionTable, vec(table(0x01, 7, 7))), mem), nil, ""},
		{"table without a maximum", module(section(sectionTable, vec(table(0x00, 6300))), mem),
			module(section(sectionTable, vec(table(0x01, 6300, 100000))), mem), ""},
		{"maximum over the budget", module(section(sectionTable, vec(table(0x01, 1, 1<<32-1), table(0x01, 2, 3))), mem),
			// The small table keeps its maximum; the other gets the rest.
			module(section(sectionTable, vec(table(0x01, 1, 99997), table(0x01, 2, 3))), mem), ""},
		{"maxima within the budget in all", module(section(sectionTable, vec(table(0x01, 1, 50000), table(0x01, 2, 50000))), mem), nil, ""},
		{"maxima past the budget in all", module(section(sectionTable, vec(table(0x01, 0, 60000), table(0x01, 0, 60000))), mem),
			module(section(sectionTable, vec(table(0x01, 0, 50000), table(0x01, 0, 50000))), mem), ""},
		{"tables without maxima share the room", module(section(sectionTable, vec(table(0x00, 10), table(0x00, 0), table(0x00, 90))), mem),
			module(section(sectionTable, vec(table(0x01, 10, 33310), table(0x01, 0, 33300), table(0x01, 90, 33390))), mem), ""},
		{"minima over the budget in all", module(section(sectionTable, vec(table(0x00, 60000), table(0x00, 40001)))), nil, "start with 100001 elements in all"},
		{"64-bit table", module(section(sectionTable, vec(table(0x04, 1)))), nil, "not supported"},
		{"initializer", module(section(sectionTable, vec([]byte{0x40, 0x00, 0x70, 0x00, 0x01}))), nil, "initializer"},
		{"trailing bytes", module(section(sectionTable, cat(vec(table(0x00, 1)), []byte{0}))), nil, "after the last table"},
		{"truncated", module(section(sectionTable, vec([]byte{0x70}))), nil, "table 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := bytes.Clone(tc.in)
			got, total, err := CapTables(tc.in, 100000)
			if !bytes.Equal(tc.in, orig) {
				t.Fatal("CapTables modified its input")
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v; want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = tc.in
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got  % x\nwant % x", got, want)
			}
			m, err := Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			sum := uint64(0)
			for _, tb := range m.Tables {
				if !tb.HasMax {
					t.Fatalf("a table was left without a maximum: %+v", m.Tables)
				}
				sum += tb.Max
			}
			if sum != total || (len(m.Tables) > 0 && total > 100000 && tc.want != nil) {
				t.Fatalf("maxima sum to %d; CapTables said %d", sum, total)
			}
		})
	}
}
