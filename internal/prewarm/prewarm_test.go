package prewarm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

var limits = sandbox.Limits{Timeout: 30 * time.Second, Memory: 16 << 20, Output: 64 << 10}

// tools loads a directory of the named WAT modules, one tool each, and
// returns its tools by name with their compiled modules.
func tools(t *testing.T, wats map[string]string) (map[string]*registry.Tool, map[string]*sandbox.Compiled) {
	t.Helper()
	dir := t.TempDir()
	for name, wat := range wats {
		wattest.Write(t, dir, wat, name)
		m := fmt.Sprintf(`{"abi":1,"tools":[{"name":%q,"description":"d","inputSchema":{"type":"object"}}]}`, name)
		if err := os.WriteFile(filepath.Join(dir, name+abi.SidecarSuffix), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	reg, err := registry.Open(registry.Options{Dir: dir, LoadOptions: registry.LoadOptions{Engine: engine, Ceilings: limits}})
	if err != nil {
		t.Fatal(err)
	}
	ts, progs := map[string]*registry.Tool{}, map[string]*sandbox.Compiled{}
	for _, tl := range reg.Current().Tools {
		ts[tl.Spec.Name] = tl
		p, err := tl.Module.Compiled(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		progs[tl.Spec.Name] = p
	}
	return ts, progs
}

// page is what an instance of echo holds: one page of memory.
const page = 64 << 10

// newPool returns a pool of max instances holding at most memory, whose
// timers run when the test fires them, and which counts its give-backs.
func newPool(t *testing.T, max int, memory int64) (*Pool, *timers, *atomic.Int32) {
	p := New(max, memory, slog.New(slog.DiscardHandler), func(*registry.Tool) bool { return true })
	clock, gave := &timers{}, &atomic.Int32{}
	p.after = clock.after
	p.giveBack = func() { gave.Add(1) }
	t.Cleanup(p.Close)
	return p, clock, gave
}

// timers stands in for time.AfterFunc: it keeps each function with the
// duration it was given, and runs it when the test says the time is up.
type timers struct {
	mu      sync.Mutex
	pending []*timer
}

type timer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (ts *timers) after(d time.Duration, f func()) func() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tm := &timer{d: d, f: f}
	ts.pending = append(ts.pending, tm)
	return func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		was := !tm.stopped
		tm.stopped = true
		return was
	}
}

// fire runs the i-th function given, as its timer would, unless it was
// stopped.
func (ts *timers) fire(i int) {
	ts.mu.Lock()
	tm := ts.pending[i]
	run := !tm.stopped
	tm.stopped = true
	ts.mu.Unlock()
	if run {
		tm.f()
	}
}

// armed returns the indexes of the timers of duration d that have not
// fired or been stopped.
func (ts *timers) armed(d time.Duration) []int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []int
	for i, tm := range ts.pending {
		if tm.d == d && !tm.stopped {
			out = append(out, i)
		}
	}
	return out
}

func TestPreparedInstanceIsTakenOnce(t *testing.T) {
	ts, progs := tools(t, map[string]string{"echo": "echo"})
	p, _, _ := newPool(t, 1, page)
	if !p.Prepare(ts["echo"], progs["echo"], sandbox.Run{Limits: limits}, true) || !p.Ready(ts["echo"]) {
		t.Fatal("echo was not prepared")
	}
	if p.Wanted(ts["echo"]) || p.Room() {
		t.Fatal("the pool wants a second instance of echo, or has room beyond its budget")
	}
	inst := p.Take(ts["echo"])
	if inst == nil || p.Take(ts["echo"]) != nil {
		t.Fatal("an instance was not taken exactly once")
	}
	out := inst.Start(context.Background(), sandbox.Run{Stdin: []byte(`{"a":1}`)})
	ts["echo"].Module.Release()
	if out.Failure != nil || string(out.Stdout) != `{"a":1}` {
		t.Fatalf("the prepared instance ran: %+v %q", out.Failure, out.Stdout)
	}
}

func TestAGuestThatDoesNotWaitIsNotTriedAgain(t *testing.T) {
	ts, progs := tools(t, map[string]string{"probe": "probe"}) // never reads stdin
	p, _, _ := newPool(t, 1, page)
	if p.Prepare(ts["probe"], progs["probe"], sandbox.Run{Limits: limits}, true) {
		t.Fatal("a guest that never reads stdin was kept prepared")
	}
	if p.Wanted(ts["probe"]) {
		t.Fatal("the pool still wants an instance of a guest that cannot be prepared")
	}
	p.Forget([]*registry.Module{ts["probe"].Module})
	if !p.Wanted(ts["probe"]) {
		t.Fatal("a forgotten module's tool is still marked as not preparable")
	}
}

func TestTheBudgetEvictsTheOldestOrRefusesTheNewest(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo", "b": "echo"})
	p, _, _ := newPool(t, 1, page)
	run := sandbox.Run{Limits: limits}
	p.Prepare(ts["a"], progs["a"], run, true)
	if p.Prepare(ts["b"], progs["b"], run, false) || !p.Ready(ts["a"]) {
		t.Fatal("without evict, a full pool took the new instance")
	}
	if !p.Prepare(ts["b"], progs["b"], run, true) || p.Ready(ts["a"]) || !p.Ready(ts["b"]) {
		t.Fatal("with evict, a full pool did not make room by discarding the oldest")
	}
}

func TestForgettingDiscards(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo", "b": "echo"})
	p, _, _ := newPool(t, 2, 2*page)
	run := sandbox.Run{Limits: limits}
	p.Prepare(ts["a"], progs["a"], run, true)
	p.Prepare(ts["b"], progs["b"], run, true)
	p.Forget([]*registry.Module{ts["a"].Module})
	if p.Ready(ts["a"]) || !p.Ready(ts["b"]) {
		t.Fatal("Forget did not discard exactly the given module's instance")
	}
	p.ForgetAll()
	if p.Ready(ts["b"]) {
		t.Fatal("ForgetAll left an instance")
	}
}

func TestNothingIsKeptForAToolNoLongerServed(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo"})
	p := New(1, page, slog.New(slog.DiscardHandler), func(*registry.Tool) bool { return false })
	defer p.Close()
	if p.Prepare(ts["a"], progs["a"], sandbox.Run{Limits: limits}, true) || p.Ready(ts["a"]) {
		t.Fatal("an instance was kept for a tool a reload replaced")
	}
}

func TestAClosedPoolPreparesNothing(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo"})
	p := New(1, page, slog.New(slog.DiscardHandler), func(*registry.Tool) bool { return true })
	p.Close()
	if p.Wanted(ts["a"]) || p.Prepare(ts["a"], progs["a"], sandbox.Run{Limits: limits}, true) {
		t.Fatal("a closed pool prepared an instance")
	}
}

// TestTheMemoryBudgetEvictsTheOldestOrRefusesTheNewest: instances of one
// page each in a budget of two pages and eight instances: two leave no
// room, a third is refused without evict, and takes the oldest's place
// with it; a taken instance gives its memory back to the budget.
func TestTheMemoryBudgetEvictsTheOldestOrRefusesTheNewest(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo", "b": "echo", "c": "echo"})
	p, _, _ := newPool(t, 8, 2*page)
	run := sandbox.Run{Limits: limits}
	p.Prepare(ts["a"], progs["a"], run, true)
	p.Prepare(ts["b"], progs["b"], run, true)
	if p.Room() {
		t.Error("the pool has room beyond its memory")
	}
	if p.Prepare(ts["c"], progs["c"], run, false) || !p.Ready(ts["a"]) || !p.Ready(ts["b"]) {
		t.Fatal("without evict, a pool without the memory for it took the new instance")
	}
	if !p.Prepare(ts["c"], progs["c"], run, true) || p.Ready(ts["a"]) || !p.Ready(ts["b"]) || !p.Ready(ts["c"]) {
		t.Fatal("with evict, a pool without the memory for it did not make room by discarding the oldest")
	}
	inst := p.Take(ts["b"])
	inst.Discard()
	ts["b"].Module.Release()
	if !p.Room() || !p.Prepare(ts["a"], progs["a"], run, false) {
		t.Fatal("the memory of a taken instance still counts against the budget")
	}
}

// TestAnInstanceLargerThanTheBudgetIsNotTriedAgain: a tool whose instance
// holds more than all of them may is never kept, and not prepared again
// until a reload.
func TestAnInstanceLargerThanTheBudgetIsNotTriedAgain(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo"})
	p, _, _ := newPool(t, 8, page/2)
	if p.Prepare(ts["a"], progs["a"], sandbox.Run{Limits: limits}, true) || p.Ready(ts["a"]) {
		t.Fatal("an instance larger than the budget was kept")
	}
	if p.Wanted(ts["a"]) {
		t.Fatal("the pool still wants an instance that cannot fit")
	}
	p.Forget([]*registry.Module{ts["a"].Module})
	if !p.Wanted(ts["a"]) {
		t.Fatal("a forgotten module's tool is still marked as not preparable")
	}
}

// TestAnInstanceNoCallTakesIsDiscardedAfterIdle: an instance no call
// took within Idle is discarded, and its memory given back to the system
// giveBackDelay later.
func TestAnInstanceNoCallTakesIsDiscardedAfterIdle(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo", "b": "echo"})
	p, clock, gave := newPool(t, 2, 2*page)
	run := sandbox.Run{Limits: limits}
	p.Prepare(ts["a"], progs["a"], run, true)
	p.Prepare(ts["b"], progs["b"], run, true)
	idle := clock.armed(Idle)
	if len(idle) != 2 {
		t.Fatalf("%d instances wait for %s; want both", len(idle), Idle)
	}
	clock.fire(idle[0])
	if p.Ready(ts["a"]) || p.Take(ts["a"]) != nil || !p.Ready(ts["b"]) {
		t.Fatal("after its idle time, a's instance is still kept, or b's is not")
	}
	if !p.Room() || !p.Wanted(ts["a"]) || !p.Prepare(ts["a"], progs["a"], run, false) {
		t.Fatal("a discarded instance still takes room in the budget, or its tool is not wanted again")
	}
	giving := clock.armed(giveBackDelay)
	if len(giving) != 1 || gave.Load() != 0 {
		t.Fatalf("after an expiry, %d give-backs are due and %d were made; want one due in %s, none made", len(giving), gave.Load(), giveBackDelay)
	}
	clock.fire(giving[0])
	if gave.Load() != 1 {
		t.Errorf("memory was given back %d times; want once", gave.Load())
	}
}

// TestGiveBacksAreSharedAndSpaced: the expiries before a give-back share
// it, and one while it runs has the next due giveBackDelay on, not at
// once; taking, evicting and forgetting never give back, and closing
// cancels the one due.
func TestGiveBacksAreSharedAndSpaced(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo", "b": "echo", "c": "echo", "d": "echo"})
	p, clock, _ := newPool(t, 3, 3*page)
	entered, release := make(chan struct{}), make(chan struct{})
	var gave atomic.Int32
	p.giveBack = func() {
		if gave.Add(1) == 1 {
			close(entered)
			<-release
		}
	}
	run := sandbox.Run{Limits: limits}
	for _, name := range []string{"a", "b", "c"} {
		p.Prepare(ts[name], progs[name], run, true)
	}
	for _, i := range clock.armed(Idle) {
		clock.fire(i)
	}
	giving := clock.armed(giveBackDelay)
	if len(giving) != 1 {
		t.Fatalf("three expiries made %d give-backs due; want one", len(giving))
	}
	first := make(chan struct{})
	go func() {
		defer close(first)
		clock.fire(giving[0])
	}()
	<-entered // the first give-back is under way
	p.Prepare(ts["a"], progs["a"], run, true)
	clock.fire(clock.armed(Idle)[0])
	if next := clock.armed(giveBackDelay); len(next) != 1 || gave.Load() != 1 {
		t.Errorf("an expiry during a give-back: %d made, %d due; want the next due in %s", gave.Load(), len(next), giveBackDelay)
	}
	close(release)
	<-first
	clock.fire(clock.armed(giveBackDelay)[0])
	if gave.Load() != 2 {
		t.Errorf("memory was given back %d times; want twice", gave.Load())
	}
	for _, name := range []string{"a", "b", "c", "d"} { // d evicts a
		p.Prepare(ts[name], progs[name], run, true)
	}
	p.Take(ts["b"]).Discard()
	ts["b"].Module.Release()
	p.Forget([]*registry.Module{ts["c"].Module})
	if n := len(clock.armed(giveBackDelay)); n != 0 || gave.Load() != 2 {
		t.Errorf("taking, evicting and forgetting made %d give-backs due, %d made; want none", n, gave.Load()-2)
	}
	clock.fire(clock.armed(Idle)[0]) // d's
	p.Close()
	if n := len(clock.armed(giveBackDelay)); n != 0 {
		t.Errorf("after Close, %d give-backs are still due", n)
	}
}

// TestATakenInstanceIsNotDiscardedLater: Take stops its instance's timer,
// and a timer that fires anyway discards only its own instance.
func TestATakenInstanceIsNotDiscardedLater(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo"})
	p, clock, _ := newPool(t, 1, page)
	run := sandbox.Run{Limits: limits}
	p.Prepare(ts["a"], progs["a"], run, true)
	first := p.Take(ts["a"])
	first.Discard()
	ts["a"].Module.Release()
	p.Prepare(ts["a"], progs["a"], run, true)
	if slices.Contains(clock.armed(Idle), 0) {
		t.Fatal("Take did not stop its instance's timer")
	}
	// The first instance's timer, had it fired as the call took the
	// instance, must not discard the one prepared since.
	clock.pending[0].f()
	if !p.Ready(ts["a"]) {
		t.Fatal("the timer of a taken instance discarded the next one")
	}
	clock.fire(1)
	if p.Ready(ts["a"]) {
		t.Fatal("the second instance outlived its idle time")
	}
}

// A call that comes while its tool's next instance is being prepared
// takes that instance when it is ready, once the tool's guest has been
// prepared before; before then, or once the call's context ends, it does
// not wait.
func TestACallWaitsForTheInstanceBeingPrepared(t *testing.T) {
	ts, progs := tools(t, map[string]string{"echo": "echo"})
	echo := ts["echo"]
	p, _, _ := newPool(t, 1, page)
	entered, release := make(chan struct{}), make(chan struct{})
	prepare := p.prepare
	p.prepare = func(prog *sandbox.Compiled, r sandbox.Run) *sandbox.Prepared {
		entered <- struct{}{}
		<-release
		return prepare(prog, r)
	}
	run := sandbox.Run{Limits: limits}
	prepared := make(chan bool)
	go func() { prepared <- p.Prepare(echo, progs["echo"], run, true) }()
	<-entered
	if p.Await(context.Background(), echo) != nil {
		t.Fatal("Await took an instance before any was ready")
	}
	release <- struct{}{}
	if !<-prepared {
		t.Fatal("echo was not prepared")
	}
	p.Take(echo).Discard()
	echo.Module.Release()

	go func() { prepared <- p.Prepare(echo, progs["echo"], run, true) }()
	<-entered
	p.awaiting = func() { release <- struct{}{} }
	inst := p.Await(context.Background(), echo)
	if inst == nil {
		release <- struct{}{} // Await did not wait: end the preparation
		<-prepared
		t.Fatal("a call during its tool's preparation did not get the instance prepared")
	}
	if !<-prepared {
		t.Fatal("echo was not prepared")
	}
	inst.Discard()
	echo.Module.Release()

	go func() { prepared <- p.Prepare(echo, progs["echo"], run, true) }()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	p.awaiting = cancel
	if p.Await(ctx, echo) != nil {
		t.Fatal("Await returned an instance after its context ended")
	}
	release <- struct{}{}
	<-prepared
}
