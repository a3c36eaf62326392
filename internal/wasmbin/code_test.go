package wasmbin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

func TestParseShape(t *testing.T) {
	twoLocalDecls := [][2]uint64{{3, wasmgen.I32}, {4, 0x7e}}
	for _, tc := range []struct {
		name  string
		wasm  []byte
		check func(s Shape) bool
	}{
		{"plain command", wasmgen.Command{}.Bytes(), func(s Shape) bool {
			return s.Types == 1 && s.Functions == 1 && s.Exports == 2 && s.Memories == 1 && s.MaxNesting == 1 && s.MaxLocals == 0
		}},
		{"locals are summed over declarations", wasmgen.Command{StartLocals: twoLocalDecls}.Bytes(), func(s Shape) bool {
			return s.MaxLocals == 7 && s.TotalLocals == 7
		}},
		{"2^32-1 locals, declared in 7 bytes", wasmgen.Command{StartLocals: [][2]uint64{{1<<32 - 1, wasmgen.I32}}}.Bytes(), func(s Shape) bool {
			return s.MaxLocals == 1<<32-1
		}},
		{"nesting counts the body as depth 1", wasmgen.Command{StartCode: wasmgen.Nested(40)}.Bytes(), func(s Shape) bool {
			return s.MaxNesting == 41
		}},
		{"br_table targets include the default", wasmgen.Command{StartCode: wasmgen.Cat(wasmgen.BrTable(7), wasmgen.BrTable(5))}.Bytes(), func(s Shape) bool {
			// Each br_table is in a block of its own, which all its
			// targets name.
			return s.MaxBrTable == 7 && s.MaxBlockBranches == 7 && s.MaxBranchCost == 7*7+5*5 && s.BranchCost == 7*7+5*5
		}},
		{"costs sum over functions", wasmgen.Command{StartCode: wasmgen.Nested(3), ExtraFunctions: 2}.Bytes(), func(s Shape) bool {
			return s.MaxNesting == 4 && s.NestingCost == 4*4+1+1
		}},
		{"br and br_if are branches to the block they name", wasmgen.Command{StartCode: wasmgen.Cat([]byte{0x02, 0x40, 0x02, 0x40}, wasmgen.Repeat(9, 0x41, 0x00, 0x0d, 0x01), []byte{0x0c, 0x00, 0x0b, 0x0c, 0x00, 0x0b})}.Bytes(), func(s Shape) bool {
			// Nine br_if 1 and the br 0 after the inner block go to the
			// outer block; the first br 0 to the inner one.
			return s.MaxBlockBranches == 10 && s.MaxBranchCost == 10*10+1
		}},
		{"a branch to the body is a return", wasmgen.Command{StartCode: []byte{0x0c, 0x00}}.Bytes(), func(s Shape) bool {
			return s.MaxBlockBranches == 1
		}},
		{"labels past the body count nowhere", wasmgen.Command{StartCode: []byte{0x0c, 0x05}}.Bytes(), func(s Shape) bool {
			return s.MaxBlockBranches == 0
		}},
		{"functions, types and globals", wasmgen.Command{ExtraFunctions: 9, ExtraTypes: 4, Globals: 3}.Bytes(), func(s Shape) bool {
			return s.Functions == 10 && s.Types == 5 && s.Globals == 3
		}},
		{"tables and elements", wasmgen.Command{Tables: []wasmgen.TableLimits{{Min: 5, Max: 9}, {Min: 2, Max: -1}}, PassiveElements: 6, ActiveElements: 4}.Bytes(), func(s Shape) bool {
			return s.Tables == 2 && s.TableElements == 7 && s.ElementSegments == 2 && s.ElementEntries == 10 && s.PassiveElementEntries == 6
		}},
		{"data segments", wasmgen.Command{DataSegments: 5}.Bytes(), func(s Shape) bool {
			return s.DataSegments == 5 && s.DataBytes == 5
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.wasm)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(m.Shape) {
				t.Fatalf("shape %+v", m.Shape)
			}
		})
	}
}

// TestParseEveryInstruction checks the decoder against a module that uses
// every kind of immediate of WebAssembly 2.0, and against wazero, which
// must compile the same bytes.
func TestParseEveryInstruction(t *testing.T) {
	wasm := wattest.Build(t, "instructions")
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, wasm); err != nil {
		t.Fatalf("wazero refuses the corpus itself: %v", err)
	}
	m, err := Parse(wasm)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Shape
	if s.Functions != 2 || s.Globals != 7 || s.Tables != 2 || s.ElementSegments != 5 || s.DataSegments != 2 || s.MaxBrTable != 3 || s.MaxNesting != 4 || s.MaxLocals != 7 {
		t.Fatalf("shape %+v", s)
	}
}

func TestParseRefusesLaterProposals(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		{"threads", "\x41\x00\xfe\x10\x02\x00\x1a", "threads"},
		{"tail call", "\x12\x00", "tail calls"},
		{"exceptions", "\x06\x40\x0b", "exception handling"},
		{"garbage collection", "\xfb\x00", "garbage collection"},
		{"function references", "\xd4", "function references"},
		{"relaxed SIMD", "\xfd\x80\x02", "not the minimal encoding"},
		// A padded opcode, which wazero would read as 0x80 and then an
		// unreachable: refused, so that wazero and wasmbin read alike.
		{"padded SIMD opcode", "\x00\xfd\x80\x00\x02\x40", "not the minimal encoding"},
		{"padded v128.const", "\xfd\x8c\x00" + strings.Repeat("\x00", 16) + "\x1a", "not the minimal encoding"},
		{"unassigned opcode", "\xc5", "unknown instruction 0xc5"},
		{"unknown 0xfc instruction", "\xfc\x12", "unknown instruction 0xfc 18"},
		{"multi-memory load", "\x41\x00\x28\x40\x01\x00\x1a", "multi-memory"},
		{"multi-memory size", "\x3f\x01\x1a", "multi-memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(wasmgen.Command{StartCode: []byte(tc.code)}.Bytes())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want one mentioning %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "code section: function 0") {
				t.Errorf("err = %v; want it to name the function", err)
			}
		})
	}
}

func TestParseMalformed(t *testing.T) {
	cmd := wasmgen.Command{}.Bytes()
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"body without its end", module(section(1, vec([]byte{0x60, 0, 0})), section(3, vec(leb(0))), section(10, vec(cat(leb(2), []byte{0x00, 0x01})))), "ends before its final end"},
		{"bytes after the end", module(section(1, vec([]byte{0x60, 0, 0})), section(3, vec(leb(0))), section(10, vec(cat(leb(3), []byte{0x00, 0x0b, 0x01})))), "bytes after the end of the body"},
		{"truncated immediate", wasmgen.Command{StartCode: []byte{0x44, 0x00, 0x00}}.Bytes(), "function 0"},
		{"br_table cut short", wasmgen.Command{StartCode: []byte{0x41, 0x00, 0x0e, 0x05, 0x00}}.Bytes(), "br_table target"},
		{"fewer bodies than functions", module(section(1, vec([]byte{0x60, 0, 0})), section(3, vec(leb(0), leb(0))), section(10, vec(cat(leb(2), []byte{0x00, 0x0b})))), "1 bodies for 2 functions"},
		{"functions without code", module(section(1, vec([]byte{0x60, 0, 0})), section(3, vec(leb(0)))), "no code section"},
		{"section out of order", module(section(3, vec()), section(1, vec())), "type section is out of order"},
		{"repeated section", module(section(1, vec()), section(1, vec())), "out of order or repeated"},
		{"unknown section", module(section(14, nil)), "unknown section id 14"},
		{"tag section", module(section(13, vec())), "exception handling"},
		{"trailing bytes in a section", module(section(1, cat(vec(), []byte{0}))), "bytes after its last entry"},
		{"global with a non-constant initializer", module(section(6, vec([]byte{0x7f, 0x00, 0x20, 0x00, 0x0b}))), "not allowed in a constant expression"},
		{"bad value type", module(section(1, vec([]byte{0x60, 0x01, 0x55, 0x00}))), "unknown value type 0x55"},
		{"GC type", module(section(1, vec([]byte{0x5f, 0x00}))), "GC types are not supported"},
		{"bad element flags", module(section(9, vec(leb(8)))), "unknown element segment flags 8"},
		{"bad data flags", module(section(11, vec(leb(3)))), "unknown data segment flags 3"},
		{"data longer than its section", module(section(11, vec([]byte{0x01, 0x05, 0x00}))), "unexpected end"},
		{"a command cut anywhere", cmd[:len(cmd)-3], ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.wasm)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %+v, %v; want an error mentioning %q", m, err, tc.want)
			}
		})
	}
}

func TestLimitsCheck(t *testing.T) {
	shape := func(m *Module, err error) *Module {
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, tc := range []struct {
		name string
		wasm []byte
		lim  Limits
		what string // "" when the module is within the limit
	}{
		{"locals at the limit", wasmgen.Command{StartLocals: [][2]uint64{{10, wasmgen.I32}}}.Bytes(), Limits{Locals: 10}, ""},
		{"locals over", wasmgen.Command{StartLocals: [][2]uint64{{11, wasmgen.I32}}}.Bytes(), Limits{Locals: 10}, "locals in one function"},
		{"total locals over", wasmgen.Command{StartLocals: [][2]uint64{{6, wasmgen.I32}}, ExtraFunctions: 1}.Bytes(), Limits{TotalLocals: 5}, "locals in all functions"},
		{"nesting over", wasmgen.Command{StartCode: wasmgen.Nested(5)}.Bytes(), Limits{Nesting: 5}, "levels of nested blocks"},
		{"nesting at the limit", wasmgen.Command{StartCode: wasmgen.Nested(4)}.Bytes(), Limits{Nesting: 5}, ""},
		{"br_table over", wasmgen.Command{StartCode: wasmgen.BrTable(9)}.Bytes(), Limits{BrTableTargets: 8}, "targets in one br_table"},
		{"branches to one block over", wasmgen.Command{StartCode: wasmgen.BrTable(9)}.Bytes(), Limits{BlockBranches: 8}, "branches to one block"},
		{"branch cost over", wasmgen.Command{StartCode: wasmgen.Repeat(3, wasmgen.BrTable(4)...)}.Bytes(), Limits{BranchCost: 47}, "branch cost"},
		{"branch cost at the limit", wasmgen.Command{StartCode: wasmgen.Repeat(3, wasmgen.BrTable(4)...)}.Bytes(), Limits{BranchCost: 48}, ""},
		{"locals-and-branches cost over", wasmgen.Command{StartLocals: [][2]uint64{{10, wasmgen.I32}}, StartCode: wasmgen.BrTable(4)}.Bytes(), Limits{LocalsBranchCost: 159}, "locals-and-branches cost"},
		{"locals-and-branches cost at the limit", wasmgen.Command{StartLocals: [][2]uint64{{10, wasmgen.I32}}, StartCode: wasmgen.BrTable(4)}.Bytes(), Limits{LocalsBranchCost: 160}, ""},
		{"nesting cost over", wasmgen.Command{StartCode: wasmgen.Nested(3), ExtraFunctions: 2}.Bytes(), Limits{NestingCost: 17}, "nesting cost"},
		{"nesting cost at the limit", wasmgen.Command{StartCode: wasmgen.Nested(3), ExtraFunctions: 2}.Bytes(), Limits{NestingCost: 18}, ""},
		{"functions over", wasmgen.Command{ExtraFunctions: 3}.Bytes(), Limits{Functions: 3}, "functions"},
		{"types over", wasmgen.Command{ExtraTypes: 2}.Bytes(), Limits{Types: 2}, "function types"},
		{"globals over", wasmgen.Command{Globals: 3}.Bytes(), Limits{Globals: 2}, "globals"},
		{"tables over", wasmgen.Command{Tables: []wasmgen.TableLimits{{Min: 1, Max: 1}, {Min: 1, Max: 1}}}.Bytes(), Limits{Tables: 1}, "tables"},
		{"table elements over", wasmgen.Command{Tables: []wasmgen.TableLimits{{Min: 6, Max: -1}, {Min: 5, Max: 5}}}.Bytes(), Limits{TableElements: 10}, "initial table elements"},
		{"element entries over", wasmgen.Command{PassiveElements: 11}.Bytes(), Limits{ElementEntries: 10}, "element segment entries"},
		{"data segments over", wasmgen.Command{DataSegments: 3}.Bytes(), Limits{DataSegments: 2}, "data segments"},
		{"function size over", wasmgen.Command{StartCode: wasmgen.Repeat(10, 0x01)}.Bytes(), Limits{FunctionSize: 10}, "bytes in one function body"},
		{"memory pages over", wasmgen.Command{MemoryPages: 3}.Bytes(), Limits{MemoryPages: 2}, "initial pages of memory"},
		{"zero limits bound nothing", wasmgen.Command{StartLocals: [][2]uint64{{1 << 30, wasmgen.I32}}, ExtraFunctions: 100}.Bytes(), Limits{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.lim.Check(shape(Parse(tc.wasm)))
			if tc.what == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var le *LimitError
			if !errors.As(err, &le) || !strings.Contains(le.What, tc.what) || le.Has <= le.Max {
				t.Fatalf("Check = %v; want a LimitError about %q", err, tc.what)
			}
		})
	}
	for _, flag := range []byte{0x02, 0x04} {
		m := shape(Parse(module(section(sectionMemory, vec(limits(flag|0x01, 1, 2))))))
		if err := (Limits{}).Check(m); err == nil {
			t.Errorf("a memory with limits flag %#x passed Check", flag)
		}
	}
}

func TestStripCustom(t *testing.T) {
	plain := wasmgen.Command{}.Bytes()
	got, err := StripCustom(plain)
	if err != nil || &got[0] != &plain[0] {
		t.Fatalf("a module without custom sections was copied or refused (%v)", err)
	}
	with, err := SetCustomSection(plain, "name", []byte("debug names"))
	if err != nil {
		t.Fatal(err)
	}
	with = append(wasmgen.Cat(plain[:8], wasmgen.Custom("first", []byte("x"))), with[8:]...)
	got, err = StripCustom(with)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(plain) {
		t.Fatalf("stripped module differs from the original:\n% x\n% x", got, plain)
	}
	if _, err := StripCustom([]byte("nope")); !errors.Is(err, ErrNotWasm) {
		t.Fatalf("StripCustom(not wasm) = %v", err)
	}
}

// FuzzParseBodies holds the decoder to wazero's reading of function
// bodies: whatever body wazero compiles, Parse must accept. The module
// around the body is the corpus of every instruction, so bodies can use
// its types, tables, globals, elements and data; only instructions are
// fuzzed, never the local declarations, so that no input can make wazero
// allocate by a count of its choosing.
func FuzzParseBodies(f *testing.F) {
	template := wattest.Build(f, "instructions")
	before, head, locals, seed, after := splitStartBody(f, template)
	f.Add(seed)
	f.Add([]byte{0x02, 0x40, 0x41, 0x00, 0x0e, 0x01, 0x00, 0x00, 0x0b})
	f.Add([]byte{0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0x1a})
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, code []byte) {
		body := wasmgen.Cat(locals, code, []byte{0x0b})
		wasm := wasmgen.Cat(before, wasmgen.Section(sectionCode, wasmgen.Cat(head, wasmgen.ULEB(uint64(len(body))), body)), after)
		m, perr := Parse(wasm)
		cm, werr := rt.CompileModule(ctx, wasm)
		if werr == nil {
			cm.Close(ctx)
			// wazero reads a SIMD opcode as one byte; Parse refuses any
			// encoding of one on which that reading and the format's
			// disagree.
			if perr != nil && !errors.Is(perr, errSIMDEncoding) {
				t.Fatalf("wazero compiles the body but Parse refuses it: %v\nbody % x", perr, code)
			}
			if perr == nil && m.Shape.MaxNesting < 1 {
				t.Fatalf("shape %+v", m.Shape)
			}
		}
	})
}

// splitStartBody cuts a module whose code section ends with _start's body
// (as instructions.wat's does) around that body's instructions: the
// sections before the code section, the code section up to that body's
// size, its local declarations, its instructions (the final end left
// out), and the sections after the code section.
func splitStartBody(tb testing.TB, wasm []byte) (before, head, locals, code, after []byte) {
	tb.Helper()
	r, err := newReader(wasm)
	if err != nil {
		tb.Fatal(err)
	}
	for !r.done() {
		start := r.off
		id, body, err := r.section()
		if err != nil {
			tb.Fatal(err)
		}
		if id != sectionCode {
			continue
		}
		br := &reader{b: body}
		n, _ := br.u32()
		for i := uint32(1); i < n; i++ {
			size, _ := br.u32()
			br.off += int(size)
		}
		headEnd := br.off
		size, _ := br.u32()
		last := body[br.off : br.off+int(size)]
		lr := &reader{b: last}
		decls, _ := lr.u32()
		for i := uint32(0); i < decls; i++ {
			lr.u32()
			lr.byte()
		}
		return wasm[:start], body[:headEnd], last[:lr.off], last[lr.off : len(last)-1], wasm[r.off:]
	}
	tb.Fatal("no code section")
	return
}
