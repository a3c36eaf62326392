package wasmbin

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// stopTrap is how wazero reports the check's trap.
const stopTrap = "integer divide by zero"

// stopSource loops, recurses and starts: sum counts down in a loop,
// fib recurses with no loop at all, and the start function records that
// it ran in a global.
const stopSource = `(module
  (import "env" "g" (global i32))
  (global $started (mut i32) (i32.const 0))
  (global $other i64 (i64.const 5))
  (func $start (global.set $started (i32.const 1)))
  (start $start)
  (func (export "started") (result i32) (global.get $started))
  (func (export "sum") (param $n i32) (result i32) (local $s i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $s (i32.add (local.get $s) (local.get $n)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $s))
  (func $fib (export "fib") (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "forever") (loop $l (br $l)))
  (func (export "other") (result i64) (global.get $other)))`

// TestStopChecksAnswerAsBefore runs the module before and after the
// rewrite on wazero: each function answers the same while the stop
// global is 0, the start function waits for the host to call it, and
// once the global is set, a loop and a loopless recursion both trap at
// their next check.
func TestStopChecksAnswerAsBefore(t *testing.T) {
	orig := wattest.Text(t, stopSource)
	checked, err := StopChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(checked); err != nil {
		t.Fatalf("the rewritten module does not parse: %v", err)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	// The imported global comes from a module of wat: wazero's host
	// modules export no globals.
	if _, err := rt.InstantiateWithConfig(ctx, wattest.Text(t, `(module (global (export "g") i32 (i32.const 9)))`), wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	instantiate := func(name string, b []byte) api.Module {
		mod, err := rt.InstantiateWithConfig(ctx, b, wazero.NewModuleConfig().WithName(name))
		if err != nil {
			t.Fatalf("instantiating the %s module: %v", name, err)
		}
		return mod
	}
	before, after := instantiate("before", orig), instantiate("after", checked)

	call := func(mod api.Module, name string, args ...uint64) (uint64, error) {
		res, err := mod.ExportedFunction(name).Call(ctx, args...)
		if err != nil || len(res) == 0 {
			return 0, err
		}
		return res[0], nil
	}
	if got, _ := call(after, "started"); got != 0 {
		t.Errorf("the start function ran in instantiation after the rewrite")
	}
	if _, err := call(after, StartExport); err != nil {
		t.Fatalf("calling %s: %v", StartExport, err)
	}
	for _, c := range []struct {
		name string
		args []uint64
	}{{"started", nil}, {"sum", []uint64{0}}, {"sum", []uint64{1000}}, {"fib", []uint64{0}}, {"fib", []uint64{15}}, {"other", nil}} {
		want, err1 := call(before, c.name, c.args...)
		got, err2 := call(after, c.name, c.args...)
		if err1 != nil || err2 != nil || got != want {
			t.Errorf("%s%v = %d, %v after the rewrite; want %d, %v", c.name, c.args, got, err2, want, err1)
		}
	}

	stop, ok := after.ExportedGlobal(StopExport).(api.MutableGlobal)
	if !ok {
		t.Fatalf("the rewritten module exports no mutable %s", StopExport)
	}
	stop.Set(0)
	for _, c := range []struct {
		name string
		args []uint64
	}{{"sum", []uint64{30}}, {"fib", []uint64{30}}, {"forever", nil}} {
		if _, err := call(after, c.name, c.args...); err == nil || !strings.Contains(err.Error(), stopTrap) {
			t.Errorf("%s with the stop global set: %v; want the %s trap", c.name, err, stopTrap)
		}
	}
}

// TestStopChecksStopAGuestFromAnotherGoroutine sets the global while the
// guest loops forever, as the host's time limit does.
func TestStopChecksStopAGuestFromAnotherGoroutine(t *testing.T) {
	for _, src := range []string{
		`(module (func (export "run") (loop $l (br $l))))`,
		// Two calls a level, 2^60 calls: no loop, and no end in sight.
		`(module (func $f (export "run") (param i32) (if (local.get 0) (then
		   (call $f (i32.sub (local.get 0) (i32.const 1)))
		   (call $f (i32.sub (local.get 0) (i32.const 1)))))))`,
	} {
		checked, err := StopChecks(wattest.Text(t, src))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		rt := wazero.NewRuntime(ctx)
		mod, err := rt.Instantiate(ctx, checked)
		if err != nil {
			t.Fatal(err)
		}
		stop := mod.ExportedGlobal(StopExport).(api.MutableGlobal)
		run := mod.ExportedFunction("run")
		args := make([]uint64, len(run.Definition().ParamTypes()))
		for i := range args {
			args[i] = 60
		}
		done := make(chan error, 1)
		go func() {
			_, err := run.Call(ctx, args...)
			done <- err
		}()
		stop.Set(0)
		if err := <-done; err == nil || !strings.Contains(err.Error(), stopTrap) {
			t.Errorf("%s: %v; want the %s trap", src, err, stopTrap)
		}
		rt.Close(ctx)
	}
}

// TestStopChecksRefusesTheNamesItAdds keeps a module from exporting a
// global of its own as the stop global, which the host would then set
// to no effect.
func TestStopChecksRefusesTheNamesItAdds(t *testing.T) {
	for _, src := range []string{
		`(module (global (export "wasmcp.stop") (mut i32) (i32.const 0)))`,
		`(module (func $s) (start $s) (func (export "wasmcp.start")))`,
	} {
		if _, err := StopChecks(wattest.Text(t, src)); err == nil || !strings.Contains(err.Error(), "reserves") {
			t.Errorf("%s: %v; want it refused", src, err)
		}
	}
	// Without a start section, the start export is ExportState's.
	if _, err := StopChecks(wattest.Text(t, `(module (func (export "wasmcp.start")))`)); err != nil {
		t.Errorf("a module without a start section that exports %s: %v", StartExport, err)
	}
}

// TestStopChecksBoundWhatTheyAdd checks the growth the doc comment
// promises on the worst case, a body of nothing but empty loops, which
// still compiles: a check adds no block.
func TestStopChecksBoundWhatTheyAdd(t *testing.T) {
	var b strings.Builder
	b.WriteString("(module (func")
	const loops = 10000
	for range loops {
		b.WriteString(" (loop)")
	}
	b.WriteString("))")
	orig := wattest.Text(t, b.String())
	checked, err := StopChecks(orig)
	if err != nil {
		t.Fatal(err)
	}
	if grown, bound := len(checked)-len(orig), 10+3*3*loops+64; grown > bound {
		t.Errorf("the rewrite added %d bytes to %d loops; want at most %d", grown, loops, bound)
	}
	if _, err := wazero.NewRuntime(context.Background()).CompileModule(context.Background(), checked); err != nil {
		t.Errorf("the rewritten module does not compile: %v", err)
	}
}
