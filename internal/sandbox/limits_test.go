package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

// hostileShapes are modules that stretch one dimension far enough to cost
// an engine seconds or gigabytes (the figures are from bench/limits, with
// what the shape costs wazero and wasmtime when nothing stops it).
var hostileShapes = []struct {
	name string
	wasm func() []byte
	what string // the limit that refuses it
}{
	{"2^26 locals in 55 bytes (1.6 GiB)", func() []byte {
		return wasmgen.Command{StartLocals: [][2]uint64{{1 << 26, wasmgen.I32}}}.Bytes()
	}, "locals in one function"},
	{"10,000 functions of 1,000 locals each (84 MiB; 830 MiB with 100,000)", func() []byte {
		return manyFunctionsWithLocals(10_000, 1000)
	}, "locals in all functions"},
	{"60,000 nested blocks (30 s)", func() []byte {
		return wasmgen.Command{StartCode: wasmgen.Nested(60_000)}.Bytes()
	}, "levels of nested blocks"},
	{"a br_table of 250,000 targets (20 s)", func() []byte {
		return wasmgen.Command{StartCode: wasmgen.BrTable(250_000)}.Bytes()
	}, "targets in one br_table"},
	{"100,000 br_if to one block (over 40 s)", func() []byte {
		return wasmgen.Command{StartCode: wasmgen.Cat([]byte{0x02, 0x40}, wasmgen.Repeat(100_000, 0x41, 0x00, 0x0d, 0x00), []byte{0x0b})}.Bytes()
	}, "branches to one block"},
	{"1,000 br_tables of 1,000 targets in one function (34 s, 2.3 GiB)", func() []byte {
		return wasmgen.Command{StartCode: wasmgen.Repeat(1000, wasmgen.BrTable(1000)...)}.Bytes()
	}, "branch cost"},
	{"256 tables of 2^20 elements (2 GiB per instance)", func() []byte {
		ts := make([]wasmgen.TableLimits, 256)
		for i := range ts {
			ts[i] = wasmgen.TableLimits{Min: 1 << 20, Max: 1 << 20}
		}
		return wasmgen.Command{Tables: ts}.Bytes()
	}, "tables"},
	{"16 tables of 2^20 elements", func() []byte {
		ts := make([]wasmgen.TableLimits, 16)
		for i := range ts {
			ts[i] = wasmgen.TableLimits{Min: 1 << 20, Max: 1 << 20}
		}
		return wasmgen.Command{Tables: ts}.Bytes()
	}, "initial table elements"},
	{"16 million passive elements (1.8 GiB)", func() []byte {
		return wasmgen.Command{PassiveElements: 1 << 24}.Bytes()
	}, "element segment entries"},
	{"a million globals (160 MiB, and 64 MiB per instance)", func() []byte {
		return wasmgen.Command{Globals: 1_000_000}.Bytes()
	}, "globals"},
	{"a million functions (5 s)", func() []byte {
		return wasmgen.Command{ExtraFunctions: 1_000_000}.Bytes()
	}, "functions"},
	{"a million types (1.5 s)", func() []byte {
		return wasmgen.Command{ExtraTypes: 1_000_000}.Bytes()
	}, "function types"},
	{"a 7.6 MB function (430 MiB)", func() []byte {
		return wasmgen.Command{StartCode: wasmgen.Repeat(7_654_321/3, 0x41, 0x00, 0x1a)}.Bytes()
	}, "bytes in one function body"},
}

func manyFunctionsWithLocals(n int, locals uint64) []byte {
	return wasmgen.Command{ExtraFunctions: n, ExtraLocals: [][2]uint64{{locals, wasmgen.I32}}}.Bytes()
}

func TestHostileShapesAreRefusedBeforeCompiling(t *testing.T) {
	e := newEngine(t)
	for _, tc := range hostileShapes {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Compile(context.Background(), tc.wasm(), abi.StartCommand)
			var le *wasmbin.LimitError
			if !errors.As(err, &le) || !strings.Contains(le.What, tc.what) {
				t.Fatalf("Compile = %v; want a limit error about %q", err, tc.what)
			}
			if !strings.Contains(err.Error(), "implementation limits") {
				t.Fatalf("error %q does not say which limits", err)
			}
		})
	}
}

func TestTablesShareOneBudget(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "tablesgrow").Run(context.Background(), Run{Limits: small})
	if out.Failure == nil || out.Failure.Kind != Exit || out.Failure.ExitCode != 3 {
		t.Fatalf("outcome %+v; want exit status 3 (both tables grew by 400,000, the first no further)", out.Failure)
	}
}

func TestTablesCountAgainstTheMemoryLimit(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "bigtable") // 8 MiB of table elements
	lim := Limits{Timeout: small.Timeout, Memory: 16 << 20, Output: small.Output}
	if out := c.Run(context.Background(), Run{Stdin: []byte{100}, Limits: lim}); out.Failure != nil {
		t.Fatalf("growing to 101 pages beside 8 MiB of tables, within 16 MiB: %+v", out.Failure)
	}
	// The guest exits 1 when its grow is refused; wazero sees the refusal
	// and says so (wasmtime cannot: see wtMemory), naming the tables.
	out := c.Run(context.Background(), Run{Stdin: []byte{130}, Limits: lim})
	switch f := out.Failure; {
	case f == nil || f.Kind != MemoryLimit && f.ExitCode != 1:
		t.Fatalf("growing to 131 pages beside 8 MiB of tables, within 16 MiB: %+v; want the grow refused", f)
	case f.Kind == MemoryLimit && !strings.Contains(f.Detail, "the limit is 16 MiB, of which its tables and globals take 8 MiB"):
		t.Fatalf("memory failure %q does not name the tables", f.Detail)
	}
	lim.Memory = 8 << 20
	out = c.Run(context.Background(), Run{Stdin: []byte{0}, Limits: lim})
	if out.Failure == nil || out.Failure.Kind != MemoryLimit || !strings.Contains(out.Failure.Detail, "8 MiB of it for its tables and globals") {
		t.Fatalf("starting with 8 MiB of tables within 8 MiB: %+v; want a memory failure naming the tables", out.Failure)
	}
}
