package dispatch

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// padded is a WAT test module made n bytes larger by a custom section, so
// that a test can order modules by size.
func padded(t *testing.T, wat string, n int) []byte {
	t.Helper()
	wasm, err := wasmbin.SetCustomSection(wattest.Build(t, wat), "padding", make([]byte, n))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// one is a manifest of one tool that takes any object.
func one(name string) abi.Manifest { return manifest(tool(name, "", anyObject, "")) }

// warm runs the dispatcher's warm-up to its end.
func (f *fixture) warm(t *testing.T) {
	t.Helper()
	select {
	case <-f.d.Warm():
	case <-time.After(hangGuard):
		t.Fatal("the warm-up never ended")
	}
}

// ready lists the tools that have an instance prepared, by name.
func (f *fixture) ready() []string {
	var names []string
	for _, t := range f.reg.Current().Tools {
		if f.d.pool.Ready(t) {
			names = append(names, t.Spec.Name)
		}
	}
	slices.Sort(names)
	return names
}

// cold reports whether the tool is marked as not worth preparing: the pool
// wants no instance for it, and has none.
func (f *fixture) cold(t *testing.T, name string) bool {
	t.Helper()
	tl, ok := f.reg.Current().Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return !f.d.pool.Wanted(tl) && !f.d.pool.Ready(tl)
}

// warmedUp returns the "prepared" figure of the last "warm-up done" line.
func (r *recorder) warmedUp() string {
	if done := r.last("warm-up done"); done != nil {
		return done["prepared"]
	}
	return "(no warm-up done)"
}

// TestPreparedInstancesHoldAtMostWhatTheCallsMay: the instances prepared
// ahead hold at most the memory Concurrency calls may (one here, of 16
// MiB), whatever their number: of two tools whose start-up holds more than
// 8 MiB, one gets an instance.
func TestPreparedInstancesHoldAtMostWhatTheCallsMay(t *testing.T) {
	m := one("a")
	m.Limits.Memory = 12 << 20
	n := one("b")
	n.Limits.Memory = 12 << 20
	f := newFixture(t, map[string]module{"a": {wat: "growthenread", manifest: m}, "b": {wat: "growthenread", manifest: n}}, Options{Concurrency: 1, Prewarm: 8})
	f.warm(t)
	if got := f.ready(); len(got) != 1 {
		t.Errorf("instances prepared for %q; want one of the two", got)
	}
}

func TestWarmPreparesTheLargestToolsAhead(t *testing.T) {
	f := newFixture(t, map[string]module{
		"small": {wat: "echo", manifest: one("small")},
		"mid":   {wasm: padded(t, "echo", 1000), manifest: one("mid")},
		"big":   {wasm: padded(t, "echo", 2000), manifest: one("big")},
	}, Options{Prewarm: 2})
	f.warm(t)
	if got := f.ready(); !slices.Equal(got, []string{"big", "mid"}) {
		t.Fatalf("prepared at warm-up: %v; want the two largest, big and mid", got)
	}
	if got := f.log.warmedUp(); got != "2" {
		t.Errorf("warm-up done says prepared=%s; want 2", got)
	}
	// The first call of a prepared tool uses its instance, with its own
	// arguments; a tool outside the budget runs cold.
	if got := text(t, call(t, f.d, "big", `{"n":1}`)); got != `{"n":1}` {
		t.Errorf("big = %q", got)
	}
	if n := f.log.count("using a prepared instance"); n != 1 {
		t.Errorf("%d calls used a prepared instance; want big's first", n)
	}
	if got := text(t, call(t, f.d, "small", `{"n":2}`)); got != `{"n":2}` {
		t.Errorf("small = %q", got)
	}
	if n := f.log.count("using a prepared instance"); n != 1 {
		t.Errorf("%d calls used a prepared instance; small had none", n)
	}
}

func TestWarmTriesNoMoreToolsThanTheBudget(t *testing.T) {
	// probe ends without reading stdin, so it cannot be prepared; with a
	// budget of one, the warm-up tries it (it is the larger) and stops.
	f := newFixture(t, map[string]module{
		"probe": {wasm: padded(t, "probe", 1000), manifest: one("probe")},
		"small": {wat: "echo", manifest: one("small")},
	}, Options{Prewarm: 1})
	f.warm(t)
	if got := f.ready(); len(got) != 0 {
		t.Errorf("prepared at warm-up: %v; want none", got)
	}
	if !f.cold(t, "probe") {
		t.Error("probe, which never reads stdin, is not marked cold")
	}
}

func TestWarmKeepsTheInstancesCallsPrepared(t *testing.T) {
	f := newFixture(t, map[string]module{
		"small": {wat: "echo", manifest: one("small")},
		"big":   {wasm: padded(t, "echo", 2000), manifest: one("big")},
	}, Options{Prewarm: 1})
	call(t, f.d, "small", `{}`)
	select {
	case <-f.log.prepared:
	case <-time.After(hangGuard):
		t.Fatal("no instance prepared after the call")
	}
	f.warm(t)
	if got := f.ready(); !slices.Equal(got, []string{"small"}) {
		t.Errorf("prepared after the warm-up: %v; want only small's, which a call prepared", got)
	}
}

func TestWarmLeavesToolsThatMayWriteToTheirCalls(t *testing.T) {
	asks := func(name string, write bool) abi.Manifest {
		m := one(name)
		m.Permissions = &abi.Permissions{Dirs: []abi.DirRequest{{Guest: "/data", Write: write}}}
		return m
	}
	f := newFixture(t, map[string]module{
		"writer": {wasm: padded(t, "echo", 2000), manifest: asks("writer", true)},
		"reader": {wat: "echo", manifest: asks("reader", false)},
	}, Options{Prewarm: 4})
	data := t.TempDir()
	yaml := "modules:\n"
	for _, m := range f.reg.Current().Modules {
		yaml += fmt.Sprintf("  %s:\n    sha256: %s\n    dirs:\n      /data: {host: %s, write: true}\n", m.Stem, m.SHA256, data)
	}
	f.grant(t, yaml)
	f.warm(t)
	want := []string{"reader"}
	if f.engine.Name() == "wasmtime" {
		// wasmtime prepares no run that has mounts (see its backend).
		want = nil
	}
	if got := f.ready(); !slices.Equal(got, want) {
		t.Errorf("prepared at warm-up: %v; want %v (writer may write)", got, want)
	}
	if got := text(t, call(t, f.d, "writer", `{"w":1}`)); got != `{"w":1}` {
		t.Errorf("writer = %q", got)
	}
}

func TestWarmGivesWayToCalls(t *testing.T) {
	modules := map[string]module{"text": {wat: "echo", manifest: one("text")}}

	// With every slot taken (or a call waiting for one: slots.TryAcquire
	// gives way then too), the warm-up prepares nothing.
	f := newFixture(t, modules, Options{Prewarm: 1, Concurrency: 1})
	held := f.d.slots.TryAcquire()
	f.warm(t)
	held.Release()
	if got := f.ready(); len(got) != 0 {
		t.Errorf("prepared with every slot taken: %v", got)
	}
	if f.cold(t, "text") {
		t.Error("a tool the warm-up skipped is marked cold")
	}
}

func TestPreparedInstancesAreKeptOnlyForServedTools(t *testing.T) {
	// A reload may replace a tool while its instance is prepared: the
	// instance of a tool no longer served is discarded, not kept.
	f := newFixture(t, map[string]module{"text": {wat: "echo", manifest: one("text")}}, Options{Prewarm: 1})
	served, _ := f.reg.Current().Lookup("text")
	other, err := registry.Open(registry.Options{Dir: filepath.Dir(served.Module.Path), LoadOptions: registry.LoadOptions{Engine: f.engine, Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	replaced, _ := other.Current().Lookup("text")
	prog, err := replaced.Module.Compiled(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, _ := f.d.runFor(other.Current(), replaced)
	if f.d.pool.Prepare(replaced, prog, r, true) {
		t.Error("an instance was kept for a tool the host does not serve")
	}
	if got := f.ready(); len(got) != 0 {
		t.Errorf("prepared: %v", got)
	}
}

// An instance is prepared with what the policy grants (its mounts and
// environment), so a policy change discards every one; a reload that
// changes only modules discards only theirs.
func TestReloadsDiscardWhatNoLongerHolds(t *testing.T) {
	f := newFixture(t, map[string]module{
		"a": {wat: "echo", manifest: one("a")},
		"b": {wat: "echo", manifest: one("b")},
	}, Options{Prewarm: 2, Concurrency: 2})
	f.warm(t)
	if got := f.ready(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("prepared at warm-up: %v", got)
	}
	// With every slot held, the warm-ups that follow the reloads prepare
	// nothing: what is ready afterwards is what the reloads kept.
	for range 2 {
		defer f.d.slots.TryAcquire().Release()
	}
	wattest.Write(t, filepath.Dir(f.reg.Current().Modules[0].Path), "shout", "a") // a new version of a
	if err := f.reg.Reload(); err != nil {
		t.Fatal(err)
	}
	if old, _ := f.reg.Current().Lookup("b"); !f.d.pool.Ready(old) {
		t.Fatal("b's instance was discarded by a reload that did not change b")
	}
	f.grant(t, "modules:\n  c: {}\n")
	if got := f.ready(); len(got) != 0 {
		t.Fatalf("prepared after the policy changed: %v; want none", got)
	}
}
