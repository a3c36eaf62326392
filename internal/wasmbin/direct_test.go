package wasmbin

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestDirectCallsAnswerAsTheTableDid runs every indirect call of a module
// through each table index, before and after the rewrite, on wazero: each
// call returns the same value, or traps in both.
func TestDirectCallsAnswerAsTheTableDid(t *testing.T) {
	orig := wattest.Build(t, "indirect")
	direct, applied, err := DirectCalls(orig, 100)
	if err != nil || !applied {
		t.Fatalf("DirectCalls: applied %v, %v", applied, err)
	}
	m, err := Parse(direct)
	if err != nil {
		t.Fatalf("the rewritten module does not parse: %v", err)
	}
	if m.Shape.ElementSegments != 0 || m.Tables[0].Min != 0 {
		t.Errorf("the rewritten module has %d element segments and a table of %d; want none and 0", m.Shape.ElementSegments, m.Tables[0].Min)
	}

	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	instantiate := func(name string, b []byte) api.Module {
		mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(name))
		if err != nil {
			t.Fatalf("instantiating the %s module: %v", name, err)
		}
		return mod
	}
	before, after := instantiate("before", orig), instantiate("after", direct)
	calls := []struct {
		export string
		args   []uint64
	}{{"call2", []uint64{7, 3}}, {"call2b", []uint64{7, 3}}, {"call1", []uint64{7}}, {"call0", nil}}
	answered, trapped := 0, 0
	for _, c := range calls {
		for _, index := range []uint32{0, 1, 2, 3, 4, 5, 7, 8, 9, 1 << 31, ^uint32(0)} {
			args := append([]uint64{uint64(index)}, c.args...)
			want, wantErr := before.ExportedFunction(c.export).Call(ctx, args...)
			got, gotErr := after.ExportedFunction(c.export).Call(ctx, args...)
			switch {
			case (wantErr == nil) != (gotErr == nil):
				t.Errorf("%s(%d): %v, %v after the rewrite; want %v, %v", c.export, index, got, gotErr, want, wantErr)
			case wantErr != nil:
				trapped++
			case len(want) != len(got) || len(want) == 1 && want[0] != got[0]:
				t.Errorf("%s(%d) = %v after the rewrite; want %v", c.export, index, got, want)
			default:
				answered++
			}
		}
	}
	// add and mul through both calls of their type (declared twice),
	// neg through its own, and every other pair traps.
	if answered != 5 || trapped != 39 {
		t.Errorf("%d calls answered and %d trapped; want 5 and 39", answered, trapped)
	}
}

// wideSpans has five types of function, each at both ends of a table of
// 65,000: five dispatch functions of two cases, whose br_tables would
// span 325,000 indices in all.
var wideSpans = func() string {
	var b strings.Builder
	b.WriteString("(module (table 65000 funcref)\n")
	for i := range 5 {
		fmt.Fprintf(&b, "  (type $t%d (func (param %s)))\n", i, strings.Repeat("i64 ", i))
		fmt.Fprintf(&b, "  (func $f%d (type $t%d))\n", i, i)
		fmt.Fprintf(&b, "  (elem (i32.const %d) $f%d) (elem (i32.const %d) $f%d)\n", i, i, 64999-i, i)
		fmt.Fprintf(&b, "  (func (param i32) (call_indirect (type $t%d) %s(local.get 0)))\n", i, strings.Repeat("(i64.const 0) ", i))
	}
	return b.String() + ")"
}()

// TestDirectCallsLeavesWhatItCannotKeepExact returns modules as they are
// when an instruction other than call_indirect could see the table, or
// the table is not all the module's own, or its segments are not all
// applied at constant offsets, or the dispatch would be too large.
func TestDirectCallsLeavesWhatItCannotKeepExact(t *testing.T) {
	const calls = `
  (type $t (func (result i32)))
  (func $f (type $t) (i32.const 1))
  (func (export "call") (param i32) (result i32) (call_indirect (type $t) (local.get 0)))`
	for _, c := range []struct {
		name, wat string
		maxCases  int
	}{
		{"table.get", `(module (table 2 funcref) (elem (i32.const 0) $f)` + calls + `
  (func (drop (table.get 0 (i32.const 0)))))`, 100},
		{"table.size", `(module (table 2 funcref) (elem (i32.const 0) $f)` + calls + `
  (func (result i32) (table.size 0)))`, 100},
		{"ref.func", `(module (table 2 funcref) (elem (i32.const 0) $f)` + calls + `
  (func (result funcref) (ref.func $f)))`, 100},
		{"an exported table", `(module (table (export "t") 2 funcref) (elem (i32.const 0) $f)` + calls + `)`, 100},
		{"an imported table", `(module (import "m" "t" (table 2 funcref)) (elem (i32.const 0) $f)` + calls + `)`, 100},
		{"a passive segment", `(module (table 2 funcref) (elem (i32.const 0) $f) (elem func $f)` + calls + `)`, 100},
		{"a declarative segment", `(module (table 2 funcref) (elem (i32.const 0) $f) (elem declare func $f)` + calls + `)`, 100},
		{"an offset from a global", `(module (import "m" "g" (global i32)) (table 2 funcref) (elem (global.get 0) $f)` + calls + `)`, 100},
		{"a segment past the table", `(module (table 2 funcref) (elem (i32.const 1) $f $f)` + calls + `)`, 100},
		{"no indirect call", `(module (table 2 funcref) (elem (i32.const 0) $f) (type $t (func (result i32))) (func $f (type $t) (i32.const 1)))`, 100},
		{"too many cases", `(module (table 2 funcref) (elem (i32.const 0) $f $f)` + calls + `)`, 1},
		{"too wide a span", wideSpans, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := wattest.Text(t, c.wat)
			out, applied, err := DirectCalls(b, c.maxCases)
			if err != nil || applied || !bytes.Equal(out, b) {
				t.Errorf("DirectCalls: applied %v, %v, module changed %v; want it left as it is", applied, err, !bytes.Equal(out, b))
			}
		})
	}
	// The same module with none of these is rewritten, so that each case
	// above is refused for its own reason.
	b := wattest.Text(t, `(module (table 2 funcref) (elem (i32.const 0) $f $f)`+calls+`)`)
	if _, applied, err := DirectCalls(b, 100); err != nil || !applied {
		t.Errorf("the plain module: applied %v, %v; want it rewritten", applied, err)
	}
}

// wideDispatchWat is a module whose table of 65,520 entries holds, for
// each of n function types, one function at index i and again at
// 65,519-i, and which calls each type indirectly once: a few kilobytes
// of module, and 2n cases of dispatch, each type's spanning the table.
func wideDispatchWat(n int) string {
	var b strings.Builder
	vt := []string{"i32", "i64", "f32", "f64"}
	b.WriteString("(module (table 65520 funcref)\n")
	for i := range n {
		var ps []string
		for x := i; len(ps) < 6; x /= 4 {
			ps = append(ps, vt[x%4])
		}
		params := strings.Join(ps, " ")
		fmt.Fprintf(&b, "(type $t%d (func (param %s)))\n", i, params)
		fmt.Fprintf(&b, "(func $f%d (type $t%d))\n", i, i)
		fmt.Fprintf(&b, "(elem (i32.const %d) $f%d)\n(elem (i32.const %d) $f%d)\n", i, i, 65519-i, i)
		fmt.Fprintf(&b, "(func (param %s i32) (call_indirect (type $t%d) (local.get 0) (local.get 1) (local.get 2) (local.get 3) (local.get 4) (local.get 5) (local.get 6)))\n", params, i)
	}
	b.WriteString(")")
	return b.String()
}

// TestDirectCallsBoundsWhatItAddsToCompile rewrites modules whose few
// cases each span the whole table: every index between two cases is a
// branch to the one block that traps, and wazero's work on a block grows
// with the square of the branches to it (Shape.BranchCost). A 3.7 kB
// module of 64 such types compiled for 96 s once rewritten, 1.7 ms as it
// was; maxSpan refuses it, but not 4 such types, whose 260 bytes compiled
// for 6.5 s once rewritten. What the rewrite adds must stay within a
// bound, or it must leave the module as it is.
func TestDirectCallsBoundsWhatItAddsToCompile(t *testing.T) {
	for _, n := range []int{1, 4, 64} {
		orig := wattest.Text(t, wideDispatchWat(n))
		before, err := Parse(orig)
		if err != nil {
			t.Fatal(err)
		}
		out, applied, err := DirectCalls(orig, 8192)
		if err != nil {
			t.Fatalf("%d types: %v", n, err)
		}
		if !applied {
			continue
		}
		after, err := Parse(out)
		if err != nil {
			t.Fatalf("%d types: the rewritten module does not parse: %v", n, err)
		}
		if added := after.Shape.BranchCost - before.Shape.BranchCost; added > maxDispatchBranchCost {
			t.Errorf("%d types: the rewrite adds %d units of branch cost (%d bytes -> %d); want at most %d", n, added, len(orig), len(out), maxDispatchBranchCost)
		}
		if after.Shape.MaxBrTable > maxBrTable {
			t.Errorf("%d types: a dispatch's br_table has %d targets; want at most %d", n, after.Shape.MaxBrTable, maxBrTable)
		}
	}
}

// TestDirectCallsBoundsTheDispatchCode rewrites a module of 13 kB whose
// table holds 8,192 entries of one function of 999 parameters: each case
// of its dispatch passes every parameter on, so the dispatch function
// would be 8,192 times 999 local.get, 23 MB of code in one body (wazero
// compiled it for 7.7 s; the module as it was, 3.5 ms), and a type of
// 1,000 parameters, more than engines take (wasmtime's parser, the JS
// API: 1,000). What the rewrite adds must stay within a bound, or it
// must leave the module as it is.
func TestDirectCallsBoundsTheDispatchCode(t *testing.T) {
	for _, c := range []struct{ params, entries int }{{999, 8192}, {1000, 1}} {
		params := strings.TrimSpace(strings.Repeat("i32 ", c.params))
		var gets, elems strings.Builder
		for i := range c.params + 1 {
			fmt.Fprintf(&gets, "(local.get %d)", i)
		}
		for range c.entries {
			elems.WriteString(" $f")
		}
		orig := wattest.Text(t, fmt.Sprintf(`(module (table %d funcref) (type $t (func (param %s)))
  (func $f (type $t)) (elem (i32.const 0) %s)
  (func (param %s i32) (call_indirect (type $t) %s)))`, c.entries, params, elems.String(), params, gets.String()))
		out, applied, err := DirectCalls(orig, 8192)
		if err != nil {
			t.Fatalf("%d parameters: %v", c.params, err)
		}
		if !applied {
			continue
		}
		after, err := Parse(out)
		if err != nil {
			t.Fatalf("%d parameters: the rewritten module does not parse: %v", c.params, err)
		}
		if after.Shape.MaxFunctionSize > 1<<20 {
			t.Errorf("%d parameters, %d entries: a function of the rewritten module is %d bytes (%d bytes -> %d); want at most 1 MiB", c.params, c.entries, after.Shape.MaxFunctionSize, len(orig), len(out))
		}
		if after.Shape.MaxParams > 1000 {
			t.Errorf("%d parameters: a type of the rewritten module has %d parameters; want at most 1,000", c.params, after.Shape.MaxParams)
		}
	}
}

// TestDirectCallsLeavesADispatchTooCostlyToCompile: one type of 999
// parameters at indices 0 and 15,999 makes a dispatch whose trapping
// block, reached by 15,999 branches, is followed by 1,000 local reads;
// wazero compiled it for 850 ms (the module as it was: 2.5 ms), as no
// other bound on the rewrite sees.
func TestDirectCallsLeavesADispatchTooCostlyToCompile(t *testing.T) {
	params := strings.TrimSpace(strings.Repeat("i32 ", 999))
	var gets strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&gets, "(local.get %d)", i)
	}
	orig := wattest.Text(t, fmt.Sprintf(`(module (table 16000 funcref) (type $t (func (param %s)))
  (func $f (type $t)) (elem (i32.const 0) $f) (elem (i32.const 15999) $f)
  (func (param %s i32) (call_indirect (type $t) %s)))`, params, params, gets.String()))
	if _, applied, err := DirectCalls(orig, 8192); err != nil || applied {
		t.Errorf("DirectCalls: applied %v, %v; want the module left as it is", applied, err)
	}
}
