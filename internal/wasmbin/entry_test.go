package wasmbin

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// entryModule has a body of each kind EntryChecks tells apart: a short
// leaf, a long one, one that calls directly (recursively, so that a call
// runs through the countdown many times), one that calls indirectly, one
// that enters a loop before anything else, and one that may branch past
// its loop.
func entryModule(t *testing.T) []byte {
	return wattest.Text(t, `(module
  (type $un (func (param i32) (result i32)))
  (table 1 funcref)
  (elem (i32.const 0) $fib)
  (global $g (mut i32) (i32.const 5))
  (func $leaf (param i32) (result i32) (i32.add (local.get 0) (global.get $g)))
  (func $long (param i32) (result i32) `+strings.Repeat("nop ", leafBody)+` (local.get 0))
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (call $long (local.get $n)))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func $viaTable (export "viaTable") (param i32) (result i32)
    (call $leaf (call_indirect (type $un) (local.get 0) (i32.const 0))))
  (func $looped (param i32) (result i32) (local i32)
    (local.set 1 (global.get $g))
    (block (loop (drop (call $leaf (local.get 0)))))
    (local.get 0))
  (func $skips (param i32) (result i32)
    (block (br_if 0 (local.get 0)) (loop (drop (call $leaf (local.get 0)))))
    (local.get 0)))`)
}

// Every body that calls or is longer than leafBody begins with a check of
// the weight its length and calls give it, on a global added after the
// module's own; a short leaf is left as it was, and so is a body that
// enters a loop, which wazero checks, before it can branch or call.
func TestEntryChecksGoWhereCodeCanRunLong(t *testing.T) {
	orig := entryModule(t)
	checked, err := EntryChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(checked)
	if err != nil {
		t.Fatalf("the rewritten module does not parse: %v", err)
	}
	if m.Shape.Globals != 2 {
		t.Errorf("the rewritten module has %d globals; want its one and the countdown", m.Shape.Globals)
	}
	before, after := bodiesOf(t, orig), bodiesOf(t, checked)
	for i, want := range []struct {
		name    string
		checked bool
		weight  int64
	}{{"leaf", false, 0}, {"long", true, 1}, {"fib", true, 1}, {"viaTable", true, 1}, {"looped", false, 0}, {"skips", true, 1}} {
		b, a := before[i], after[i]
		if !want.checked {
			if !bytes.Equal(a, b) {
				t.Errorf("%s: rewritten to % x; want it as it was", want.name, a)
			}
			continue
		}
		check := entryCheck(1, want.weight)
		// Each body here declares no locals: its first instruction is at 1.
		if !bytes.Equal(a, append(append([]byte{b[0]}, check...), b[1:]...)) {
			t.Errorf("%s: rewritten to % x; want the check % x before % x", want.name, a, check, b[1:])
		}
	}
}

// A body's weight grows with its length and its calls: a body of 100
// calls weighs 1 + 100*leafBody/weightUnit, since each may run a leaf.
func TestEntryCheckWeighsCalls(t *testing.T) {
	src := `(module (func $f (export "f") ` + strings.Repeat("call $f ", 100) + `))`
	checked, err := EntryChecks(wattest.Text(t, src))
	if err != nil {
		t.Fatal(err)
	}
	// The body: no locals, 100 calls of two bytes, end.
	want := entryCheck(0, 1+(1+100*2+1+100*leafBody)/weightUnit)
	if !bytes.Contains(checked, want) {
		t.Errorf("the rewritten module % x holds no check % x", checked, want)
	}
}

// bodiesOf is a module's function bodies, without their sizes.
func bodiesOf(t *testing.T, b []byte) [][]byte {
	t.Helper()
	m, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	sections, err := splitSections(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sections {
		if s.id == sectionCode {
			bodies, err := walkBodies(m, s.body, nil)
			if err != nil {
				t.Fatal(err)
			}
			return bodies
		}
	}
	t.Fatal("no code section")
	return nil
}

// The checks change nothing a call computes, however often the countdown
// runs out (fib(25) makes 242,785 calls), on wazero as wasmcp runs it.
func TestEntryChecksLeaveWhatACallComputes(t *testing.T) {
	orig := entryModule(t)
	checked, err := EntryChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	results := map[string][]uint64{}
	for name, b := range map[string][]byte{"before": orig, "after": checked} {
		mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(name))
		if err != nil {
			t.Fatalf("instantiating the module %s the rewrite: %v", name, err)
		}
		for _, call := range []struct {
			export string
			arg    uint64
		}{{"fib", 25}, {"viaTable", 20}} {
			got, err := mod.ExportedFunction(call.export).Call(ctx, call.arg)
			if err != nil {
				t.Fatalf("%s(%d) %s the rewrite: %v", call.export, call.arg, name, err)
			}
			results[name] = append(results[name], got...)
		}
	}
	if want := []uint64{75025, 6770}; !slices.Equal(results["before"], want) || !slices.Equal(results["after"], want) {
		t.Errorf("fib(25), viaTable(20) = %v before the rewrite, %v after; want %v", results["before"], results["after"], want)
	}
}
