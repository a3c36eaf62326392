package prewarm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
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

func newPool(t *testing.T, max int) *Pool {
	p := New(max, slog.New(slog.DiscardHandler), func(*registry.Tool) bool { return true })
	t.Cleanup(p.Close)
	return p
}

func TestPreparedInstanceIsTakenOnce(t *testing.T) {
	ts, progs := tools(t, map[string]string{"echo": "echo"})
	p := newPool(t, 1)
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
	out := inst.Start(context.Background(), []byte(`{"a":1}`), nil, nil)
	ts["echo"].Module.Release()
	if out.Failure != nil || string(out.Stdout) != `{"a":1}` {
		t.Fatalf("the prepared instance ran: %+v %q", out.Failure, out.Stdout)
	}
}

func TestAGuestThatDoesNotWaitIsNotTriedAgain(t *testing.T) {
	ts, progs := tools(t, map[string]string{"probe": "probe"}) // never reads stdin
	p := newPool(t, 1)
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
	p := newPool(t, 1)
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
	p := newPool(t, 2)
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
	p := New(1, slog.New(slog.DiscardHandler), func(*registry.Tool) bool { return false })
	defer p.Close()
	if p.Prepare(ts["a"], progs["a"], sandbox.Run{Limits: limits}, true) || p.Ready(ts["a"]) {
		t.Fatal("an instance was kept for a tool a reload replaced")
	}
}

func TestAClosedPoolPreparesNothing(t *testing.T) {
	ts, progs := tools(t, map[string]string{"a": "echo"})
	p := New(1, slog.New(slog.DiscardHandler), func(*registry.Tool) bool { return true })
	p.Close()
	if p.Wanted(ts["a"]) || p.Prepare(ts["a"], progs["a"], sandbox.Run{Limits: limits}, true) {
		t.Fatal("a closed pool prepared an instance")
	}
}
