package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// reactorModule is the reactor test module with init as its wasmcp.init
// section.
func reactorModule(t testing.TB, init string) []byte {
	t.Helper()
	wasm, err := wasmbin.SetCustomSection(wattest.Build(t, "reactor"), abi.InitSection, []byte(init))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

func compileReactor(t testing.TB, e *Engine, init string) *Compiled {
	t.Helper()
	c, err := e.CompileWith(context.Background(), reactorModule(t, init), CompileOptions{Start: abi.StartReactor})
	if err != nil {
		t.Fatalf("Compile(reactor): %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// reactorRun is a call of the reactor with stdin, two arguments and two
// environment variables, which its start-up must not see.
func reactorRun(stdin string) Run {
	return Run{Args: []string{"reactor", "tool"}, Env: map[string]string{"A": "1", "B": "2"}, Stdin: []byte(stdin), Limits: small}
}

func TestReactorStartsUpThenRunsTheCall(t *testing.T) {
	e := newEngine(t)
	c := compileReactor(t, e, "bundle")
	out := c.Run(context.Background(), reactorRun(`{"x":1}`))
	if out.Failure != nil {
		t.Fatalf("run failed: %v", out.Failure)
	}
	// The start-up saw the init section, argv[0] alone and no
	// environment; the call saw its own.
	if got, want := string(out.Stdout), `bundle|10|22|11|{"x":1}|`; !strings.HasPrefix(got, want) {
		t.Errorf("stdout = %q, want it to begin %q", got, want)
	}
}

func TestReactorWithoutInitSectionReadsEmptyStdin(t *testing.T) {
	e := newEngine(t)
	c, err := e.CompileWith(context.Background(), wattest.Build(t, "reactor"), CompileOptions{Start: abi.StartReactor})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	out := c.Run(context.Background(), reactorRun("in"))
	if out.Failure != nil || !strings.HasPrefix(string(out.Stdout), "|10|22|11|in|") {
		t.Fatalf("run = %q, %v; want it to begin %q", out.Stdout, out.Failure, "|10|22|11|in|")
	}
}

func TestReactorStartUpFailuresNameTheStartUp(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		init   string
		kind   FailureKind
		detail string
	}{
		{"T", Trap, "start-up (wasmcp_init) failed: the tool trapped: unreachable"},
		{"L", TimeLimit, "start-up (wasmcp_init) failed: the tool ran longer than its 300ms time limit"},
		{"X", Exit, "exited during its start-up (wasmcp_init)"},
		{"G9", MemoryLimit, "start-up (wasmcp_init) failed"},
	} {
		t.Run(tc.init, func(t *testing.T) {
			c := compileReactor(t, e, tc.init)
			r := reactorRun("{}")
			r.Limits.Timeout = 300 * time.Millisecond
			if tc.kind == MemoryLimit {
				// Close enough to the module's one page for wasmtime, which
				// cannot see a refused grow, to blame the limit.
				r.Limits.Memory = pageSize + pageSize/2
			}
			out := c.Run(context.Background(), r)
			if out.Failure == nil || out.Failure.Kind != tc.kind || !strings.Contains(out.Failure.Detail, tc.detail) {
				t.Fatalf("failure = %v; want %s mentioning %q", out.Failure, tc.kind, tc.detail)
			}
		})
	}
}

// What a failed start-up wrote to stderr is the call's stderr when the
// call ran the start-up, and ends the snapshot's failure, which every call
// then reports without running it.
func TestAFailedStartUpSaysWhy(t *testing.T) {
	e := newEngine(t)
	c := compileReactor(t, e, "Tbecause of this")
	if out := c.Run(context.Background(), reactorRun("{}")); out.Failure == nil || string(out.Stderr) != "Tbecause of this" {
		t.Errorf("a run of a failing start-up: %v, stderr %q; want the start-up's", out.Failure, out.Stderr)
	}
	_, err := c.Snapshot(context.Background(), "reactor", small, Schedule{})
	if err == nil || !strings.HasSuffix(err.Error(), "its stderr ended: Tbecause of this") {
		t.Errorf("Snapshot = %v; want the start-up's stderr at its end", err)
	}
}

func TestReactorExitStatusIsTheCalls(t *testing.T) {
	e := newEngine(t)
	c := compileReactor(t, e, "")
	out := c.Run(context.Background(), reactorRun("x"))
	if out.Failure == nil || out.Failure.Kind != Exit || out.Failure.ExitCode != 3 {
		t.Fatalf("failure = %v; want exit status 3", out.Failure)
	}
}

func TestReactorExportsAreChecked(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		module string
		start  abi.Start
		want   string
	}{
		{"echo", abi.StartReactor, `exports no "wasmcp_run" function`},
		{"reactor", abi.StartCommand, `"start": "reactor"`},
	} {
		m, err := wasmbin.Parse(wattest.Build(t, tc.module))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CheckModule(m, tc.start); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckModule(%s, %s) = %v; want an error mentioning %q", tc.module, tc.start, err, tc.want)
		}
	}
	twice := reactorModule(t, "a")
	twice = append(twice, 0, 13, 11)
	twice = append(twice, "wasmcp.init"...)
	twice = append(twice, 'b')
	m, err := wasmbin.Parse(twice)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CheckModule(m, abi.StartReactor); err == nil || !strings.Contains(err.Error(), `2 "wasmcp.init" custom sections`) {
		t.Errorf("CheckModule(two init sections) = %v", err)
	}
}

// seedOf is the start-up's random seed a reactor run printed.
func seedOf(t *testing.T, out Outcome) string {
	t.Helper()
	if out.Failure != nil {
		t.Fatalf("run failed: %v", out.Failure)
	}
	i := strings.LastIndexByte(string(out.Stdout), '|')
	if i < 0 {
		t.Fatalf("stdout %q holds no seed", out.Stdout)
	}
	return string(out.Stdout[i+1:])
}

func snapshotted(t *testing.T, e *Engine, init string) *Compiled {
	t.Helper()
	c := compileReactor(t, e, init)
	if _, err := c.Snapshot(context.Background(), "reactor", small, Schedule{}); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if !c.Snapshotted() {
		t.Fatal("Snapshotted() = false after a snapshot")
	}
	return c
}

func TestSnapshotCallsStartFromOneStartUpInFreshInstances(t *testing.T) {
	e := newEngine(t)
	c := snapshotted(t, e, "bundle")
	var seeds []string
	for range 3 {
		out := c.Run(context.Background(), reactorRun("in"))
		// Each call sees its own arguments and environment, and none of
		// what an earlier call wrote to a global or to memory.
		if want := "bundle|10|22|11|in|"; !strings.HasPrefix(string(out.Stdout), want) {
			t.Fatalf("stdout = %q, want it to begin %q", out.Stdout, want)
		}
		seeds = append(seeds, seedOf(t, out))
	}
	// The start-up ran once: what it drew is the same in every call.
	if seeds[0] != seeds[1] || seeds[1] != seeds[2] {
		t.Errorf("seeds %v differ: the calls did not start from one snapshot", seeds)
	}
	// Made again, the snapshot is another start-up's.
	if _, err := c.Snapshot(context.Background(), "reactor", small, Schedule{}); err != nil {
		t.Fatal(err)
	}
	if again := seedOf(t, c.Run(context.Background(), reactorRun("in"))); again == seeds[0] {
		t.Errorf("seed %s after a new snapshot is the old one's", again)
	}
}

func TestCallsWithMountsRunTheWholeStartUp(t *testing.T) {
	e := newEngine(t)
	c := snapshotted(t, e, "")
	first := seedOf(t, c.Run(context.Background(), reactorRun("")))
	r := reactorRun("")
	r.Mounts = []Mount{{Host: t.TempDir(), Guest: "/data"}}
	if mounted := seedOf(t, c.Run(context.Background(), r)); mounted == first {
		t.Errorf("a call with a mount ran from the snapshot (seed %s)", mounted)
	}
}

// A prepared instance made from a snapshot counts the memory it has, not
// the room for its limit that wazero maps for it, so that the prewarm
// pool's budget (Prepared.Memory) is not spent on address space; the call
// it then runs is the snapshot's.
func TestPreparedSnapshotSaysWhatItHolds(t *testing.T) {
	e := newEngine(t)
	c := snapshotted(t, e, "bundle")
	p := c.Prepare(context.Background(), reactorRun(""))
	if p == nil {
		t.Fatal("a snapshotted reactor, which reads stdin in its call, was not prepared")
	}
	if got, want := p.Memory(), int64(pageSize+c.reserve); got != want {
		t.Errorf("the prepared instance holds %d bytes, it says; want %d (its one page)", got, want)
	}
	out := p.Start(context.Background(), Run{Stdin: []byte("in")})
	if want := "bundle|10|22|11|in|"; !strings.HasPrefix(string(out.Stdout), want) {
		t.Errorf("prepared call: %+v %q, want it to begin %q", out.Failure, out.Stdout, want)
	}
}

func TestSnapshottedCallsKeepEveryLimit(t *testing.T) {
	e := newEngine(t)
	c := snapshotted(t, e, "")
	for _, tc := range []struct {
		stdin  string
		kind   FailureKind
		detail string
	}{
		{"l", TimeLimit, "300ms time limit"},
		{"g", MemoryLimit, "limit is 16 MiB"},
		{"f", OutputLimit, "more than 64 KiB to stdout"},
		{"t", Trap, "unreachable"},
		{"x", Exit, "status 3"},
	} {
		t.Run(tc.stdin, func(t *testing.T) {
			r := reactorRun(tc.stdin)
			r.Limits.Timeout = 300 * time.Millisecond
			out := c.Run(context.Background(), r)
			if out.Failure == nil || out.Failure.Kind != tc.kind || !strings.Contains(out.Failure.Detail, tc.detail) {
				t.Fatalf("failure = %v; want %s mentioning %q", out.Failure, tc.kind, tc.detail)
			}
			if strings.Contains(out.Failure.Detail, "start-up") {
				t.Errorf("a call's failure %q is put down to the start-up", out.Failure.Detail)
			}
		})
	}
	// A call with less memory than the snapshot holds is refused.
	r := reactorRun("")
	r.Limits.Memory = pageSize / 2
	if out := c.Run(context.Background(), r); out.Failure == nil || out.Failure.Kind != MemoryLimit {
		t.Errorf("a call under the snapshot's memory: %v", out.Failure)
	}
}

func TestSnapshotOfAFailingStartUpFailsEveryCall(t *testing.T) {
	e := newEngine(t)
	c := compileReactor(t, e, "G9")
	lim := small
	lim.Memory = pageSize + pageSize/2
	_, err := c.Snapshot(context.Background(), "reactor", lim, Schedule{})
	var f *Failure
	if !errors.As(err, &f) || f.Kind != MemoryLimit || !strings.Contains(f.Detail, "start-up (wasmcp_init) failed") {
		t.Fatalf("Snapshot = %v; want the start-up's memory failure", err)
	}
	r := reactorRun("")
	r.Limits = lim
	if out := c.Run(context.Background(), r); out.Failure == nil || out.Failure.Detail != f.Detail {
		t.Errorf("run after a failed snapshot: %v; want %q", out.Failure, f.Detail)
	}
}

func TestOnlyReactorsAreSnapshotted(t *testing.T) {
	e := newEngine(t)
	if _, err := compile(t, e, "echo").Snapshot(context.Background(), "echo", small, Schedule{}); !errors.Is(err, ErrNoSnapshot) {
		t.Errorf("Snapshot(command) = %v; want ErrNoSnapshot", err)
	}
}

// loopingStartUp is an engine of one compile slot, whose debug log closes
// started.seen as a snapshot starts, and a reactor of it whose start-up
// loops, with limits under which it would loop for 30 s.
func loopingStartUp(t *testing.T) (*Engine, *Compiled, Limits, *logSignal) {
	t.Helper()
	started := &logSignal{want: "snapshot started", seen: make(chan struct{})}
	e, err := NewEngine(context.Background(), Config{
		Engine:  os.Getenv("WASMCP_ENGINE"),
		Compile: CompileLimits{Concurrency: 1},
		Logger:  slog.New(slog.NewTextHandler(started, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	lim := small
	lim.Timeout = 30 * time.Second
	return e, compileReactor(t, e, "L"), lim, started
}

// A snapshot whose Schedule.Stop closes ends at once, gives its slot
// back, and is not taken for a failed start-up, even when someone waits
// for it.
func TestAStoppedSnapshotEndsAtOnceAndRefusesNothing(t *testing.T) {
	e, c, lim, started := loopingStartUp(t)
	stop := make(chan struct{})
	snapped := make(chan error, 1)
	go func() {
		_, err := c.Snapshot(context.Background(), "reactor", lim, Schedule{Name: "reactor", Stop: stop})
		snapped <- err
	}()
	select {
	case <-started.seen:
	case err := <-snapped:
		t.Fatalf("the snapshot ended (%v) without starting in a compile slot", err)
	}
	close(stop)
	if err := <-snapped; !errors.Is(err, ErrStopped) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Snapshot = %v; want ErrStopped", err)
	}
	if _, f := c.planFor(Run{}); f != nil {
		t.Errorf("a stopped snapshot refuses the module: %v", f)
	}
	if c.Snapshotted() {
		t.Error("a stopped snapshot is in service")
	}
	// The only slot is free again.
	if _, err := e.Compile(context.Background(), wattest.Build(t, "echo")); err != nil {
		t.Fatalf("a compilation after the stopped snapshot: %v", err)
	}
}

// logSignal is a log's destination that closes seen when a line holding
// want is written.
type logSignal struct {
	want string
	seen chan struct{}
	once sync.Once
}

func (l *logSignal) Write(p []byte) (int, error) {
	if strings.Contains(string(p), l.want) {
		l.once.Do(func() { close(l.seen) })
	}
	return len(p), nil
}

// A snapshot made at load takes a compile slot as a compilation does: one
// made ahead of need gives its slot to a compilation someone waits for,
// starts over later, and is not taken for a failed start-up when it is
// stopped so, or by the engine's closing.
func TestASnapshotMadeAheadGivesItsSlotToACompilationSomeoneWaitsFor(t *testing.T) {
	e, c, lim, started := loopingStartUp(t)
	snapped := make(chan error, 1)
	go func() {
		_, err := c.Snapshot(context.Background(), "reactor", lim, Schedule{Name: "reactor", Needed: make(chan struct{})})
		snapped <- err
	}()
	select {
	case <-started.seen:
	case err := <-snapped:
		t.Fatalf("the snapshot ended (%v) without starting in a compile slot", err)
	}
	// The only slot is the snapshot's: the compilation has it only if
	// the snapshot gives it up.
	if _, err := e.Compile(context.Background(), wattest.Build(t, "echo")); err != nil {
		t.Fatalf("the module someone waits for: %v", err)
	}
	e.Close(context.Background())
	if err := <-snapped; !errors.Is(err, ErrEngineClosed) {
		t.Fatalf("Snapshot = %v; want it stopped by Close", err)
	}
	if _, f := c.planFor(Run{}); f != nil {
		t.Errorf("a snapshot stopped before its start-up ended refuses the module: %v", f)
	}
}

// A reactor prepared ahead waits before wasmcp_run, so that all of its
// call (here, a log line before it reads stdin) sees the call's reporter
// and runs under the call's time limit; from its snapshot or not.
func TestAPreparedReactorsCallIsAllTheCalls(t *testing.T) {
	e := newEngine(t)
	c, err := e.CompileWith(context.Background(), wattest.Build(t, "logfirst"), CompileOptions{Start: abi.StartReactor})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, snapshot := range []bool{false, true} {
		if snapshot {
			if _, err := c.Snapshot(context.Background(), "logfirst", small, Schedule{}); err != nil {
				t.Fatal(err)
			}
		}
		p := c.Prepare(context.Background(), Run{Args: []string{"logfirst", "logfirst"}, Limits: small})
		if p == nil {
			t.Fatalf("snapshot %v: the reactor was not prepared", snapshot)
		}
		rec := &recorder{}
		out := p.Start(context.Background(), Run{Stdin: []byte("args"), Reporter: rec})
		if out.Failure != nil || string(out.Stdout) != "args" || !slices.Equal(rec.logs, []string{"called"}) {
			t.Errorf("snapshot %v: call = %v %q, logs %q; want the call's log and stdin", snapshot, out.Failure, out.Stdout, rec.logs)
		}
	}
}

// The snapshots kept hold at most Config.SnapshotMemory together: one that
// would pass it is not made, and its module's calls run the whole start-up;
// a snapshot freed gives its share back.
func TestSnapshotsKeepWithinTheirMemory(t *testing.T) {
	e, err := NewEngine(context.Background(), Config{Engine: os.Getenv("WASMCP_ENGINE"), SnapshotMemory: 3 * keptPage})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	first, second := compileReactor(t, e, "bundle"), compileReactor(t, e, "bundle")
	// Each start-up leaves two pages that are not all zeroes: the data
	// segment and random seed in the first, the init section in the next.
	if _, err := first.Snapshot(context.Background(), "reactor", small, Schedule{}); err != nil {
		t.Fatal(err)
	}
	_, err = second.Snapshot(context.Background(), "reactor", small, Schedule{})
	if !errors.Is(err, ErrNoSnapshot) || !strings.Contains(err.Error(), "--snapshot-memory") {
		t.Fatalf("a second snapshot past the budget: %v", err)
	}
	if second.Snapshotted() {
		t.Error("a snapshot past the budget was kept")
	}
	if out := second.Run(context.Background(), reactorRun("in")); out.Failure != nil || !strings.HasPrefix(string(out.Stdout), "bundle|") {
		t.Errorf("a call of the module without its snapshot: %v %q", out.Failure, out.Stdout)
	}
	first.Close(context.Background())
	// Freed in the background, once no instance uses it.
	for e.snapshotHeld.Load() != 0 {
		runtime.Gosched()
	}
	if _, err := second.Snapshot(context.Background(), "reactor", small, Schedule{}); err != nil {
		t.Errorf("a snapshot once the first was freed: %v", err)
	}
}
