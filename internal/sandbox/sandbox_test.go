package sandbox

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// newEngine starts the engine WASMCP_ENGINE names (the default when
// unset): the same tests run against each engine a build has.
func newEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func compile(t testing.TB, e *Engine, name string) *Compiled {
	t.Helper()
	c, err := e.Compile(context.Background(), wattest.Build(t, name))
	if err != nil {
		t.Fatalf("Compile(%s): %v", name, err)
	}
	return c
}

// small is the limits of most runs here: small memory and output, and a
// time limit roomy enough for a loaded machine under -race, so that only
// the tests of the time limit meet it.
var small = Limits{Timeout: time.Minute, Memory: 16 << 20, Output: 64 << 10}

// slack is how far past its time limit a stopped run may end. It is a bound
// on hanging, not a performance figure: runs usually stop within
// milliseconds of the limit.
const slack = 5 * time.Second

func TestHostileModulesFailWithTheirCause(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		module string
		kind   FailureKind
		detail string
	}{
		{"loop", TimeLimit, "300ms time limit"},
		{"startloop", TimeLimit, "300ms time limit"},
		{"fanout", TimeLimit, "300ms time limit"},
		{"bulkfill", TimeLimit, "300ms time limit"},
		{"grow", MemoryLimit, "limit is 16 MiB"},
		{"hugemem", MemoryLimit, "needs 3750 MiB"},
		{"recurse", StackOverflow, "call stack"},
		{"spam", OutputLimit, "more than 64 KiB to stdout"},
		{"trap", Trap, "integer divide by zero"},
		{"fail", Exit, "status 3"},
	} {
		t.Run(tc.module, func(t *testing.T) {
			c := compile(t, e, tc.module)
			lim := small
			if tc.kind == TimeLimit {
				lim.Timeout = 300 * time.Millisecond
			}
			out := c.Run(context.Background(), Run{Args: []string{tc.module, "t"}, Limits: lim})
			if out.Failure == nil {
				t.Fatalf("run succeeded; want a %s failure", tc.kind)
			}
			if out.Failure.Kind != tc.kind {
				t.Fatalf("failure = %s (%s); want %s", out.Failure.Kind, out.Failure.Detail, tc.kind)
			}
			if !strings.Contains(out.Failure.Detail, tc.detail) {
				t.Errorf("detail %q does not mention %q", out.Failure.Detail, tc.detail)
			}
			if out.Duration > lim.Timeout+slack {
				t.Errorf("run took %v, far past its %v limit", out.Duration, lim.Timeout)
			}
			// The engine still works after each failure.
			ok := compile(t, e, "echo").Run(context.Background(), Run{Stdin: []byte("ping"), Limits: small})
			if ok.Failure != nil || string(ok.Stdout) != "ping" {
				t.Fatalf("echo after %s: %+v %q", tc.module, ok.Failure, ok.Stdout)
			}
		})
	}
}

// A recursion checked on the way down does its work on the way back up,
// each frame after its call returns, under one segment's worth a frame
// (about 13 us of square roots): the time limit must stop it, as it would
// not if a frame's unchecked tail were left out of the count (600,000
// frames: 7.9 s without -race).
//
// It tests the checks wazero runs get (wasmbin.StopChecks); wasmtime's
// epochs need no count, and its stack holds fewer frames.
func TestAnUnwindingRecursionIsStopped(t *testing.T) {
	if os.Getenv("WASMCP_ENGINE") == "wasmtime" {
		t.Skip("tests the checks of wazero runs")
	}
	e := newEngine(t)
	src := `(module
  (memory (export "memory") 1)
  (func $f (param $n i32) (param $x f64) (result f64)
    (if (i32.eqz (local.get $n)) (then (return (local.get $x))))
    (call $f (i32.sub (local.get $n) (i32.const 1)) (local.get $x))
    ` + strings.Repeat("f64.sqrt ", 3700) + `)
  (func (export "_start") (drop (call $f (i32.const 600000) (f64.const 2)))))`
	c, err := e.Compile(context.Background(), wattest.Text(t, src))
	if err != nil {
		t.Fatal(err)
	}
	lim := small
	lim.Timeout = 300 * time.Millisecond
	out := c.Run(context.Background(), Run{Limits: lim})
	if out.Failure == nil || out.Failure.Kind != TimeLimit {
		t.Fatalf("failure = %+v; want the time limit", out.Failure)
	}
	if out.Duration > lim.Timeout+slack {
		t.Errorf("run took %v, far past its %v limit", out.Duration, lim.Timeout)
	}
}

func TestOutputIsKeptUpToTheCap(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "spam").Run(context.Background(), Run{Limits: small})
	if int64(len(out.Stdout)) != small.Output {
		t.Fatalf("kept %d bytes of stdout; want exactly the %d-byte cap", len(out.Stdout), small.Output)
	}
}

func TestStderrIsCapturedOnExit(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "fail").Run(context.Background(), Run{Limits: small})
	if out.Failure == nil || out.Failure.ExitCode != 3 {
		t.Fatalf("failure = %+v; want exit 3", out.Failure)
	}
	if !strings.Contains(string(out.Stderr), "the widget is broken") {
		t.Fatalf("stderr = %q", out.Stderr)
	}
}

func TestArgsAndStdinReachTheGuest(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "argv").Run(context.Background(), Run{Args: []string{"calc", "add"}, Limits: small})
	if out.Failure != nil || string(out.Stdout) != "calc\x00add\x00" {
		t.Fatalf("argv run: %+v %q", out.Failure, out.Stdout)
	}
	in := strings.Repeat(`{"k":"v"}`, 20000) // larger than the guest's read buffer
	out = compile(t, e, "echo").Run(context.Background(), Run{Stdin: []byte(in), Limits: Limits{Timeout: 5 * time.Second, Memory: 1 << 20, Output: 1 << 20}})
	if out.Failure != nil || string(out.Stdout) != in {
		t.Fatalf("echo run: %+v, %d bytes out of %d", out.Failure, len(out.Stdout), len(in))
	}
}

func TestGuestSeesNoEnvironmentOrFiles(t *testing.T) {
	t.Setenv("WASMCP_SECRET", "hunter2")
	e := newEngine(t)
	out := compile(t, e, "probe").Run(context.Background(), Run{Limits: small})
	if out.Failure != nil || string(out.Stdout) != "sealed" {
		t.Fatalf("probe: %+v %q", out.Failure, out.Stdout)
	}
}

func TestCancellationStopsTheRun(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "loop")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome)
	go func() { done <- c.Run(ctx, Run{Limits: Limits{Timeout: time.Hour, Memory: 1 << 20, Output: 1024}}) }()
	cancel()
	select {
	case out := <-done:
		if out.Failure == nil || out.Failure.Kind != Cancelled {
			t.Fatalf("failure = %+v; want cancelled", out.Failure)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancelled run did not stop")
	}
}

// progressSignal is a Reporter that closes started at the guest's first
// progress call.
type progressSignal struct {
	started chan struct{}
	once    sync.Once
}

func (p *progressSignal) Log(int32, string) {}

func (p *progressSignal) Progress(float64, float64, string) { p.once.Do(func() { close(p.started) }) }

// A guest that only calls, never looping, still leaves its native code
// often enough for the Go runtime to stop its thread: a collection (whose
// stop-the-world would otherwise wait for the guest, and every goroutine
// with it) finishes while the guest runs, and the run stops when
// cancelled.
func TestACallingGuestLetsTheCollectorRun(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "fanout")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep := &progressSignal{started: make(chan struct{})}
	done := make(chan Outcome)
	go func() {
		done <- c.Run(ctx, Run{Limits: Limits{Timeout: time.Hour, Memory: 1 << 20, Output: 1024}, Reporter: rep})
	}()
	select {
	case <-rep.started:
	case out := <-done:
		t.Fatalf("the run ended before it fanned out: %+v", out.Failure)
	}
	runtime.GC()
	cancel()
	if out := <-done; out.Failure == nil || out.Failure.Kind != Cancelled {
		t.Fatalf("failure = %+v; want cancelled", out.Failure)
	}
}

func TestEachRunGetsAFreshInstance(t *testing.T) {
	// A counter in a global would survive between runs if instances were
	// reused; the module exits with the counter's value after incrementing.
	e := newEngine(t)
	c := compile(t, e, "counter")
	for i := 0; i < 3; i++ {
		out := c.Run(context.Background(), Run{Limits: small})
		if out.Failure == nil || out.Failure.ExitCode != 1 {
			t.Fatalf("run %d: %+v; want exit 1 (a fresh counter)", i, out.Failure)
		}
	}
}

func TestCheckModule(t *testing.T) {
	e := newEngine(t)
	for name, want := range map[string]string{
		"badimport":  "env.open_socket",
		"nostart":    "_start",
		"badsig":     "imports wasmcp.log as (i64) -> i64, but wasmcp defines it (docs/abi.md) as (i32, i32, i32) -> i32",
		"badwasisig": "imports wasi_snapshot_preview1.fd_write as (i32) -> (), but WASI preview 1 defines it as (i32, i32, i32, i32) -> i32",
		"memname":    `exports its memory as "mem", not as "memory"`,
	} {
		m, err := wasmbin.Parse(wattest.Build(t, name))
		if err != nil {
			t.Fatal(err)
		}
		err = e.CheckModule(m, abi.StartCommand)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckModule(%s) = %v; want an error naming %q", name, err, want)
		}
	}
	// A function import whose type index names no type: the engine would
	// refuse it; the check must not take it for a type.
	untyped := wasmgen.Module(wasmgen.Section(2, wasmgen.Vec(wasmgen.Cat(wasmgen.Name(abi.HostModule), wasmgen.Name("log"), []byte{0x00, 0x00}))))
	m, err := wasmbin.Parse(untyped)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CheckModule(m, abi.StartCommand); err == nil || !strings.Contains(err.Error(), "imports wasmcp.log with a type index past the module's types") {
		t.Errorf("CheckModule(an import of no type) = %v", err)
	}
	// Between them, these import every host function and the WASI
	// functions guests use most, each with its right type.
	for _, name := range []string{"echo", "report", "httpcall", "wasihostile"} {
		m, err := wasmbin.Parse(wattest.Build(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CheckModule(m, abi.StartCommand); err != nil {
			t.Errorf("CheckModule(%s) = %v", name, err)
		}
	}
}

func TestDefineHostNeedsOneImplementationPerFunction(t *testing.T) {
	impls := map[string]int{}
	for _, f := range abi.HostFunctions {
		impls[f.Name] = 1
	}
	var defined []string
	if err := defineHost(impls, func(f abi.HostFunction, _ int) error {
		defined = append(defined, f.Name)
		return nil
	}); err != nil || len(defined) != len(abi.HostFunctions) {
		t.Fatalf("defineHost defined %v: %v", defined, err)
	}
	nop := func(abi.HostFunction, int) error { return nil }
	delete(impls, "progress")
	if err := defineHost(impls, nop); err == nil {
		t.Error("an engine lacking progress started")
	}
	impls["progress"], impls["extra"] = 1, 1
	if err := defineHost(impls, nop); err == nil {
		t.Error("an engine implementing a function abi does not name started")
	}
	delete(impls, "log")
	if err := defineHost(impls, nop); err == nil || !strings.Contains(err.Error(), "wasmcp.log") {
		t.Errorf("an engine with extra in place of log: %v", err)
	}
}

func TestMeterRefusesGrowthPastLimit(t *testing.T) {
	m := &meter{limit: 4 * pageSize}
	if b := m.Reallocate(pageSize); len(b) != pageSize {
		t.Fatalf("first allocation: %d bytes", len(b))
	}
	b := m.Reallocate(3 * pageSize)
	if len(b) != 3*pageSize {
		t.Fatalf("grow: %d bytes", len(b))
	}
	for _, c := range b {
		if c != 0 {
			t.Fatal("grown memory is not zeroed")
		}
	}
	if m.Reallocate(5*pageSize) != nil {
		t.Fatal("growth past the limit was allowed")
	}
	if m.denied != 5*pageSize || m.max != 3*pageSize {
		t.Fatalf("denied=%d peak=%d", m.denied, m.max)
	}
}

func TestSleepIsRealAndInterruptible(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "sleep")
	out := c.Run(context.Background(), Run{Limits: Limits{Timeout: time.Minute, Memory: 1 << 20, Output: 1024}})
	if out.Failure != nil || string(out.Stdout) != "slept" {
		t.Fatalf("sleep: %+v %q", out.Failure, out.Stdout)
	}
	if out.Duration < 300*time.Millisecond {
		t.Errorf("a 300 ms sleep returned after %v: the clock is not real", out.Duration)
	}
	out = c.Run(context.Background(), Run{Limits: Limits{Timeout: 50 * time.Millisecond, Memory: 1 << 20, Output: 1024}})
	if out.Failure == nil || out.Failure.Kind != TimeLimit {
		t.Fatalf("sleeping past the time limit: %+v", out.Failure)
	}
}

func TestPreparedInstanceRunsOneCall(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "echo")
	p := c.Prepare(context.Background(), Run{Args: []string{"echo", "echo"}, Limits: small})
	if p == nil {
		t.Fatal("echo, which reads stdin, could not be prepared")
	}
	out := p.Start(context.Background(), Run{Stdin: []byte(`{"x":1}`)})
	if out.Failure != nil || string(out.Stdout) != `{"x":1}` {
		t.Fatalf("prepared run: %+v %q", out.Failure, out.Stdout)
	}
}

func TestGuestsThatNeverReadStdinAreNotPrepared(t *testing.T) {
	e := newEngine(t)
	for _, name := range []string{"probe", "loop", "fail"} {
		if p := compile(t, e, name).Prepare(context.Background(), Run{Limits: small}); p != nil {
			p.Discard()
			t.Errorf("%s was prepared, though it never waits for stdin", name)
		}
	}
}

func TestPreparedInstanceCanBeDiscarded(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "echo")
	p := c.Prepare(context.Background(), Run{Limits: small})
	if p == nil {
		t.Fatal("not prepared")
	}
	done := make(chan struct{})
	go func() { p.Discard(); close(done) }()
	select {
	case <-done: // Discard returns once the guest has ended
	case <-time.After(time.Minute):
		t.Fatal("a discarded instance did not end")
	}
}

// TestPreparedInstanceSaysWhatItHolds: a prepared instance counts the
// memory the engine holds for it, within its limit, and the output its
// start-up wrote. growthenread grows to 129 pages, a page at a time:
// wazero's meter holds room to grow ahead of it, to the next power of two
// (256 pages, the limit here), and the pooled buffer it started in and
// outgrew, which goes back to the pool only when the instance ends;
// wasmtime, the memory's size.
func TestPreparedInstanceSaysWhatItHolds(t *testing.T) {
	e := newEngine(t)
	grown := int64(129 * pageSize)
	if e.Name() == "wazero" {
		grown = small.Memory + pooledMemory
	}
	for name, want := range map[string]int64{"echo": pageSize, "growthenread": grown + 100} {
		p := compile(t, e, name).Prepare(context.Background(), Run{Limits: small})
		if p == nil {
			t.Fatalf("%s was not prepared", name)
		}
		if got := p.Memory(); got != want {
			t.Errorf("%s holds %d bytes, it says; want %d", name, got, want)
		}
		p.Discard()
	}
}

func TestWASIListMatchesWazero(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	wasi, err := wasi_snapshot_preview1.NewBuilder(rt).Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exported := wasi.ExportedFunctions()
	for name := range exported {
		if !wasiFunctions[name] {
			t.Errorf("wazero provides %s, which wasiFunctions lacks", name)
		}
	}
	for name := range wasiFunctions {
		if _, ok := exported[name]; !ok {
			t.Errorf("wasiFunctions lists %s, which wazero does not provide", name)
		}
	}
}

func TestUnknownEngineIsRefused(t *testing.T) {
	_, err := NewEngine(context.Background(), Config{Engine: "v8"})
	if err == nil || !strings.Contains(err.Error(), "wazero") {
		t.Fatalf("NewEngine(v8) = %v; want an error listing the engines", err)
	}
}

// A mount changes how an engine may connect stdio (wasmtime serves it
// through WASI's own fd_read and fd_write then), so stdio and its cap are
// checked with one too.
func TestMountedRunsKeepStdioAndItsCap(t *testing.T) {
	e := newEngine(t)
	mounts := []Mount{{Host: t.TempDir(), Guest: "/data"}}
	out := compile(t, e, "echo").Run(context.Background(), Run{Stdin: []byte("ping"), Limits: small, Mounts: mounts})
	if out.Failure != nil || string(out.Stdout) != "ping" {
		t.Fatalf("echo with a mount: %+v %q", out.Failure, out.Stdout)
	}
	out = compile(t, e, "spam").Run(context.Background(), Run{Limits: small, Mounts: mounts})
	if out.Failure == nil || out.Failure.Kind != OutputLimit {
		t.Fatalf("spam with a mount: %+v; want an output failure", out.Failure)
	}
	if int64(len(out.Stdout)) != small.Output {
		t.Fatalf("kept %d bytes of stdout; want the %d-byte cap", len(out.Stdout), small.Output)
	}
}

func TestTableGrowthIsCapped(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "tablegrow").Run(context.Background(), Run{Limits: small})
	if out.Failure != nil {
		t.Fatalf("a table grow past %d elements was allowed: %+v", maxTableElements, out.Failure)
	}
}

func TestHostileWASIArgumentsGetErrnos(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "wasibad").Run(context.Background(), Run{Stdin: []byte("x"), Limits: small})
	if out.Failure != nil {
		t.Fatalf("run failed: %+v", out.Failure)
	}
	// EINVAL, EFAULT ×4, then a poll on stdin: errno 0, one event whose
	// own errno is 0.
	want := []byte{28, 21, 21, 21, 21, 0, 1, 0}
	if !bytes.Equal(out.Stdout, want) {
		t.Fatalf("errnos = %v; want %v", out.Stdout, want)
	}
}

// logged is a Reporter that closes seen at the first log line.
type logged struct {
	seen chan struct{}
	once sync.Once
}

func (l *logged) Log(int32, string)                 { l.once.Do(func() { close(l.seen) }) }
func (l *logged) Progress(float64, float64, string) {}

// Close stops the guests still running before it releases the runtime
// (on wasmtime, the epoch ticker that interrupts them goes with it), and
// runs after it are refused.
func TestCloseStopsRunningGuests(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "logloop")
	running := &logged{seen: make(chan struct{})}
	done := make(chan Outcome, 1)
	go func() {
		done <- c.Run(context.Background(), Run{Limits: Limits{Timeout: time.Hour, Memory: 1 << 20, Output: 1024}, Reporter: running})
	}()
	<-running.seen
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if out := <-done; out.Failure == nil || out.Failure.Kind != Cancelled || out.Failure.Detail != shuttingDown {
		t.Errorf("the guest running at Close: %+v; want it stopped as the server shuts down", out.Failure)
	}
	if out := c.Run(context.Background(), Run{Limits: small}); out.Failure == nil || out.Failure.Detail != shuttingDown {
		t.Errorf("a run after Close: %+v; want it refused as the server shuts down", out.Failure)
	}
}
