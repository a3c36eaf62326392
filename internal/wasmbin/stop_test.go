package wasmbin

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// stopModule has a body of each kind StopChecks tells apart: a leaf, a
// body without calls whose path does more than a segment's work, one that
// calls directly (recursively, so that a call runs through the countdown
// many times), one that calls indirectly, one that enters a loop before
// anything else, one that may branch past its loop, one that loops for as
// long as it is asked to, one with a bulk instruction, and one whose
// paths join after an if and else.
func stopModule(t *testing.T) []byte {
	return wattest.Text(t, `(module
  (type $un (func (param i32) (result i32)))
  (memory 1)
  (table 1 funcref)
  (elem (i32.const 0) $fib)
  (global $g (mut i32) (i32.const 5))
  (func $leaf (param i32) (result i32) (i32.add (local.get 0) (global.get $g)))
  (func $long (param i32) (result i32) `+strings.Repeat("(drop (i32.load (i32.const 0))) ", 65)+` (local.get 0))
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
    (local.get 0))
  (func $sum (export "sum") (param $n i32) (result i32) (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (i32.add (local.get $s) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $s))
  (func $fillsum (export "fillsum") (param $n i32) (result i32) (local $x i32)
    (memory.fill (i32.const 0) (i32.const 7) (local.get $n))
    (local.set $x (i32.load8_u (i32.const 5)))
    (i32.add (local.get $x) (local.get $n)))
  (func $joins (param i32) (result i32)
    (if (local.get 0)
      (then `+strings.Repeat("(drop (i32.load (i32.const 0))) ", 40)+`)
      (else `+strings.Repeat("(drop (i32.load (i32.const 4))) ", 40)+`))
    `+strings.Repeat("(drop (i32.load (i32.const 8))) ", 40)+` (local.get 0)))`)
}

// Every loop, and every body but a leaf that does not enter a loop
// first, gets a check, and so does every path that would pass a segment's
// work, or leave its body with more than exitWork since its last check
// (fib's after its two calls); a leaf is left as it was. The module gains the countdown and the stop global after its own
// global, the stop point after its own functions, and the stop export.
func TestStopChecksGoWhereCodeCanRunLong(t *testing.T) {
	orig := stopModule(t)
	checked, err := StopChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(checked)
	if err != nil {
		t.Fatalf("the rewritten module does not parse: %v", err)
	}
	if m.Shape.Globals != 3 || m.Shape.Functions != 11 || !m.HasExport(StopExport, KindGlobal) {
		t.Errorf("the rewritten module has %d globals, %d functions, the stop export %v; want 3, 11, true",
			m.Shape.Globals, m.Shape.Functions, m.HasExport(StopExport, KindGlobal))
	}
	g := stopGlobals{countdown: 1, stop: 2, point: 9, tick: 10}
	before, after := bodiesOf(t, orig), bodiesOf(t, checked)
	if want := g.pointBody(); !bytes.Equal(after[9], want) {
		t.Errorf("the stop point is % x; want % x", after[9], want)
	}
	if want := g.tickBody(); !bytes.Equal(after[10], want) {
		t.Errorf("tick is % x; want % x", after[10], want)
	}
	call := binary.AppendUvarint([]byte{0x10}, g.point)
	for i, want := range []struct {
		name   string
		checks int
	}{{"leaf", 0}, {"long", 2}, {"fib", 2}, {"viaTable", 2}, {"looped", 1}, {"skips", 2}, {"sum", 1}, {"fillsum", 1}, {"joins", 3}} {
		b, a := before[i], after[i]
		if got := bytes.Count(a, call); got != want.checks {
			t.Errorf("%s: %d checks in % x; want %d", want.name, got, a, want.checks)
		}
		if want.checks == 0 && !bytes.Equal(a, b) {
			t.Errorf("%s: rewritten to % x; want it as it was", want.name, a)
		}
	}
	// fib declares no locals: its check is its first instruction.
	if check := g.check(); !bytes.HasPrefix(after[2][1:], check) {
		t.Errorf("fib begins % x; want the check % x", after[2], check)
	}
	// fillsum's one local declaration (one i32) gains another, the bulk
	// check's, which is local 2 after the parameter and $x.
	if !bytes.HasPrefix(after[7], []byte{0x02, 0x01, 0x7f, 0x01, 0x7f}) || !bytes.Contains(after[7], g.bulkCheck(2)) {
		t.Errorf("fillsum is % x; want a second i32 local, and the bulk check % x", after[7], g.bulkCheck(2))
	}
}

// bodiesOf is a module's function bodies, without their sizes.
func bodiesOf(t *testing.T, b []byte) [][]byte {
	t.Helper()
	m, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range mustSplit(t, b) {
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
// runs out (fib(25) makes 242,785 calls, sum(10^6) a million iterations).
func TestStopChecksLeaveWhatACallComputes(t *testing.T) {
	orig := stopModule(t)
	checked, err := StopChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	results := map[string][]uint64{}
	for name, b := range map[string][]byte{"before": orig, "after": checked} {
		mod := instantiate(t, rt, name, b)
		for _, call := range []struct {
			export string
			arg    uint64
		}{{"fib", 25}, {"viaTable", 20}, {"sum", 1_000_000}, {"fillsum", 4096}} {
			got, err := mod.ExportedFunction(call.export).Call(ctx, call.arg)
			if err != nil {
				t.Fatalf("%s(%d) %s the rewrite: %v", call.export, call.arg, name, err)
			}
			results[name] = append(results[name], got...)
		}
	}
	if want := []uint64{75025, 6770, 1784293664, 4103}; !slices.Equal(results["before"], want) || !slices.Equal(results["after"], want) {
		t.Errorf("fib(25), viaTable(20), sum(10^6), fillsum(4096) = %v before the rewrite, %v after; want %v", results["before"], results["after"], want)
	}
}

func instantiate(t *testing.T, rt wazero.Runtime, name string, b []byte) api.Module {
	t.Helper()
	mod, err := rt.InstantiateWithConfig(context.Background(), b, wazero.NewModuleConfig().WithName(name).WithStartFunctions())
	if err != nil {
		t.Fatalf("instantiating the module %s: %v", name, err)
	}
	return mod
}

// Clearing the stop global, from another goroutine, stops a call however
// it runs: looping (in a body whose checks are inline, and in one of so
// many loops that they call tick), or only calling. The module has no
// memory of its own, and one with a start section has it as an export
// instead.
func TestClearingTheStopGlobalStopsARun(t *testing.T) {
	orig := wattest.Text(t, `(module
  (global $started (export "started") (mut i32) (i32.const 0))
  (func $fan (param $n i64)
    (if (i64.ne (local.get $n) (i64.const 0))
      (then (call $fan (i64.sub (local.get $n) (i64.const 1)))
            (call $fan (i64.sub (local.get $n) (i64.const 1))))))
  (func $init (global.set $started (i32.const 1)))
  (start $init)
  (func (export "spin") (loop (br 0)))
  (memory 256)
  (func (export "fill") (loop (memory.fill (i32.const 0) (i32.const 1) (i32.const 0x1000000)) (br 0)))
  (func (export "spinMany") `+strings.Repeat("(loop (br_if 0 (i32.const 0))) ", maxInlineChecks)+` (loop (br 0)))
  (func (export "fan") (call $fan (i64.const 62))))`)
	checked, err := StopChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(checked)
	if err != nil {
		t.Fatal(err)
	}
	if !m.HasExport(StartExport, KindFunc) || hasSection(mustSplit(t, checked), sectionStart) {
		t.Fatalf("start export %v, start section %v; want the export and no section",
			m.HasExport(StartExport, KindFunc), hasSection(mustSplit(t, checked), sectionStart))
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	for _, export := range []string{"spin", "spinMany", "fan", "fill"} {
		mod := instantiate(t, rt, export, checked)
		if mod.ExportedGlobal("started").Get() != 0 {
			t.Fatal("the start function ran inside instantiation")
		}
		if _, err := mod.ExportedFunction(StartExport).Call(ctx); err != nil || mod.ExportedGlobal("started").Get() != 1 {
			t.Fatalf("the start export: %v", err)
		}
		done := make(chan error)
		go func() {
			_, err := mod.ExportedFunction(export).Call(ctx)
			done <- err
		}()
		mod.ExportedGlobal(StopExport).(api.MutableGlobal).Set(0)
		if err := <-done; err == nil || !strings.Contains(err.Error(), "integer divide by zero") {
			t.Errorf("%s once stopped: %v; want the stop point's trap", export, err)
		}
	}
}

func mustSplit(t *testing.T, b []byte) []rawSection {
	s, err := splitSections(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hasSection(sections []rawSection, id byte) bool {
	return slices.ContainsFunc(sections, func(s rawSection) bool { return s.id == id })
}

// A module that exports a name StopChecks adds is refused.
func TestStopChecksRefuseReservedNames(t *testing.T) {
	b := wattest.Text(t, `(module (global (export "wasmcp.stop") i32 (i32.const 0)))`)
	if _, err := StopChecks(b); err == nil || !strings.Contains(err.Error(), StopExport) {
		t.Errorf("StopChecks = %v; want it refused for exporting %s", err, StopExport)
	}
}

// A module that names a function, global or type past its own is
// invalid, and would not be once StopChecks added its own: it is refused.
func TestStopChecksRefuseModulesThatNameWhatTheyLack(t *testing.T) {
	header := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	oneFunc := []byte{0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00} // type () -> (), one function of it
	withBody := func(body ...byte) []byte {
		code := append([]byte{0x0a, byte(len(body) + 2), 0x01, byte(len(body))}, body...)
		return append(append(slices.Clone(header), oneFunc...), code...)
	}
	for name, b := range map[string][]byte{
		"an export of a function it lacks": append(slices.Clone(header), 0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00),
		"a call of a function it lacks":    withBody(0x00, 0x10, 0x01, 0x0b),
		"a reference to one":               withBody(0x00, 0xd2, 0x01, 0x1a, 0x0b),
		"a global it lacks":                withBody(0x00, 0x23, 0x00, 0x1a, 0x0b),
		"a block of a type it lacks":       withBody(0x00, 0x02, 0x01, 0x0b, 0x0b),
	} {
		if _, err := StopChecks(b); err == nil || !strings.Contains(err.Error(), "it names") && !strings.Contains(err.Error(), "the module has") {
			t.Errorf("%s: StopChecks = %v; want it refused", name, err)
		}
	}
}
