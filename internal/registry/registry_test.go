package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// A reload end to end, on real files: what plan decides is put in service,
// listeners hear of it before unused modules are freed, and the policy
// file is read again with the directory.
func TestReloadAppliesThePlan(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "keep")
	writeSidecar(t, dir, "keep", manifestFor("keep"))
	wattest.Write(t, dir, "echo", "gone")
	writeSidecar(t, dir, "gone", manifestFor("gone"))
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policyFile, []byte("modules: {}\n"))
	r, err := Open(Options{Dir: dir, PolicyFile: policyFile, LoadOptions: LoadOptions{Engine: newEngine(t), Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Current()
	_, gone, err := r.Acquire("gone") // a run in progress on gone's module
	if err != nil {
		t.Fatal(err)
	}

	var changes []Change
	r.OnChange(func(c Change) { changes = append(changes, c) })
	if err := os.Remove(filepath.Join(dir, "gone.wasm")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, policyFile, []byte("modules:\n  keep: {}\n"))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	next := r.Current()
	if len(changes) != 1 || changes[0].Old != first || changes[0].New != next || !changes[0].PolicyChanged() {
		t.Fatalf("changes %+v", changes)
	}
	if len(changes[0].Unused) != 1 || changes[0].Unused[0] != gone.Module {
		t.Fatalf("unused %v; want gone's module", changes[0].Unused)
	}
	if _, ok := next.Lookup("gone"); ok {
		t.Fatal("a removed module's tool is still served")
	}
	if k1, _ := first.Lookup("keep"); func() bool { k2, _ := next.Lookup("keep"); return k1 != k2 }() {
		t.Fatal("an unchanged module was loaded anew")
	}
	// The run in progress still holds its module, which is freed when it
	// ends and can no longer be acquired.
	gone.Module.Release()
	if gone.Module.Acquire() {
		t.Fatal("a retired module whose last run ended can still be acquired")
	}

	writeFile(t, policyFile, []byte("modules: [not, a, map]\n"))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if r.Current().Policy != next.Policy {
		t.Fatal("a broken policy file replaced the policy in service")
	}
	if errs := r.Current().Errors; len(errs) != 1 || errs[0].Path != policyFile || !strings.Contains(errs[0].Error(), "keeps granting") {
		t.Fatalf("errors %v; want the policy's, saying the previous one serves", errs)
	}
}

func TestOpenRefusesABrokenPolicy(t *testing.T) {
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policyFile, []byte("grants: everything\n"))
	_, err := Open(Options{Dir: t.TempDir(), PolicyFile: policyFile, LoadOptions: LoadOptions{Engine: newEngine(t)}})
	if err == nil || !strings.Contains(err.Error(), "policy") {
		t.Fatalf("Open = %v; want the policy refused", err)
	}
}

func TestAcquireFindsTheSuccessorOfARetiredModule(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "tool")
	writeSidecar(t, dir, "tool", manifestFor("tool"))
	r, err := Open(Options{Dir: dir, LoadOptions: LoadOptions{Engine: newEngine(t), Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	_, old, _ := r.Acquire("tool")
	old.Module.Release()
	wattest.Write(t, dir, "shout", "tool") // a new version
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	cat, t2, err := r.Acquire("tool")
	if err != nil || t2 == old || cat != r.Current() {
		t.Fatalf("Acquire after a reload: %v (same tool %v)", err, t2 == old)
	}
	t2.Module.Release()
	if _, err := t2.Module.Compiled(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// seed runs a reactor test module's tool and returns the seed its start-up
// drew (see wattest's reactor.wat).
func seed(t *testing.T, r *Registry, tool string) string {
	t.Helper()
	_, tl, err := r.Acquire(tool)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Module.Release()
	prog, err := tl.Module.Compiled(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !prog.Snapshotted() {
		t.Fatal("the reactor was not snapshotted")
	}
	out := prog.Run(context.Background(), sandbox.Run{Args: []string{"r", tool}, Limits: tl.Module.Limits})
	if out.Failure != nil {
		t.Fatal(out.Failure)
	}
	return string(out.Stdout[bytes.LastIndexByte(out.Stdout, '|')+1:])
}

// A snapshot is made when a reactor compiles, and made again when its
// limits (a new manifest) or its grants (the policy) change.
func TestSnapshotsAreRemadeWhenLimitsOrGrantsChange(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "reactor", "r")
	manifest := func(memory string) string {
		return `{"abi":1,"start":"reactor","limits":{"memory":"` + memory + `"},"tools":[{"name":"show","description":"d","inputSchema":{"type":"object"}}]}`
	}
	writeSidecar(t, dir, "r", manifest("8MiB"))
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policyFile, []byte("modules: {}\n"))
	r, err := Open(Options{Dir: dir, PolicyFile: policyFile, LoadOptions: LoadOptions{Engine: newEngine(t), Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	first := seed(t, r, "show")
	if again := seed(t, r, "show"); again != first {
		t.Fatalf("two calls from one snapshot drew %s and %s", first, again)
	}
	// A reload that finds the module as it was keeps it, snapshot and all.
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if kept := seed(t, r, "show"); kept != first {
		t.Fatalf("a reload that changed nothing remade the snapshot: %s, then %s", first, kept)
	}

	writeFile(t, policyFile, []byte("modules:\n  r: {env: {X: \"1\"}}\n"))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	r.snapshotting.Wait()
	granted := seed(t, r, "show")
	if granted == first {
		t.Error("the snapshot was not remade when the grants changed")
	}

	writeSidecar(t, dir, "r", manifest("16MiB"))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if limited := seed(t, r, "show"); limited == granted {
		t.Error("the snapshot was not remade when the limits changed")
	}
}

// logWatch is a log's destination that keeps what is written, and closes
// seen once a line holding want is.
type logWatch struct {
	syncBuffer
	want string
	seen chan struct{}
	once sync.Once
}

func (l *logWatch) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(l.want)) {
		l.once.Do(func() { close(l.seen) })
	}
	return l.syncBuffer.Write(p)
}

// Retiring a module stops the snapshot being made of it: a run that still
// holds the module goes on without it, and the module is not taken for
// one whose start-up failed.
func TestRetiringAModuleStopsItsSnapshot(t *testing.T) {
	dir := t.TempDir()
	wasm, err := wasmbin.SetCustomSection(wattest.Build(t, "reactor"), abi.InitSection, []byte("L")) // its start-up loops
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "r.wasm"), wasm)
	writeSidecar(t, dir, "r", `{"abi":1,"start":"reactor","tools":[{"name":"spin","description":"d","inputSchema":{"type":"object"}}]}`)
	logs := &logWatch{want: "snapshot started", seen: make(chan struct{})}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE"), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	r, err := Open(Options{Dir: dir, LoadOptions: LoadOptions{Engine: engine, Ceilings: ceilings, Logger: log}})
	if err != nil {
		t.Fatal(err)
	}
	_, tool, err := r.Acquire("spin") // a run, which waits for the module
	if err != nil {
		t.Fatal(err)
	}
	defer tool.Module.Release()
	type result struct {
		prog *sandbox.Compiled
		err  error
	}
	compiled := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		prog, err := tool.Module.Compiled(ctx)
		compiled <- result{prog, err}
	}()
	select {
	case <-logs.seen:
	case res := <-compiled:
		t.Fatalf("Compiled = %v before the snapshot started", res.err)
	}
	if err := os.Remove(filepath.Join(dir, "r.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	res := <-compiled
	if res.err != nil {
		t.Fatalf("the run's module: %v", res.err)
	}
	if res.prog.Snapshotted() {
		t.Error("the stopped snapshot is in service")
	}
	if out := logs.String(); !strings.Contains(out, "snapshot stopped: the module was replaced or removed") || strings.Contains(out, "start-up failed") {
		t.Fatalf("the log does not say the snapshot was stopped, or says the start-up failed:\n%s", out)
	}
}

// Retiring a module no run holds stops its compilation made ahead of
// need, and the warm-up goes on without taking it for one that failed.
func TestRetiringAModuleStopsItsCompilation(t *testing.T) {
	dir := slowAndEcho(t)
	engine, next := stallingEngine(t, len(uncompilable()), "")
	r, err := Open(Options{Dir: dir, LoadOptions: LoadOptions{Engine: engine, Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	slow := r.Current().Modules[1]
	var logs syncBuffer
	warmed := r.Current().Warm(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)))
	// slow is the smaller module, so the warm-up compiles it first.
	if got := next(); got != fmt.Sprint(len(uncompilable())) {
		t.Fatalf("the warm-up's first worker had a module of %s bytes; want slow's", got)
	}
	if err := os.Remove(slow.Path); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-slow.done:
	case <-time.After(hangGuard):
		t.Fatal("the compilation of a removed module went on")
	}
	if !errors.Is(slow.err, sandbox.ErrStopped) {
		t.Fatalf("the removed module's compilation: %v; want it stopped", slow.err)
	}
	<-warmed
	if out := logs.String(); strings.Contains(out, "module does not compile") {
		t.Fatalf("the warm-up took the stopped compilation for a failed one:\n%s", out)
	}
}

// Sources' directories are served with the tool directory's; a stem
// served already is refused naming both, a source's error is recorded
// under its name, and neither keeps the rest from serving.
func TestSources(t *testing.T) {
	dir, first, second := t.TempDir(), t.TempDir(), t.TempDir()
	wattest.Write(t, dir, "echo", "local")
	writeSidecar(t, dir, "local", manifestFor("local"))
	wattest.Write(t, first, "echo", "pulled")
	writeSidecar(t, first, "pulled", manifestFor("pulled"))
	wattest.Write(t, second, "echo", "local")
	writeSidecar(t, second, "local", manifestFor("other"))
	failed := errors.New("the registry is down")
	sources := []Source{
		{Name: "oci://r/first:v1", Dir: first},
		{Name: "oci://r/second:v1", Dir: second},
		{Name: "oci://r/down:v1", Err: failed},
	}
	r, err := Open(Options{Dir: dir, Sources: func() []Source { return sources }, LoadOptions: LoadOptions{Engine: newEngine(t), Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	cat := r.Current()
	for _, name := range []string{"local", "pulled"} {
		if _, ok := cat.Lookup(name); !ok {
			t.Errorf("tool %q is not served", name)
		}
	}
	if _, ok := cat.Lookup("other"); ok {
		t.Error("a source's module whose stem the tool directory serves is served")
	}
	if len(cat.Errors) != 2 {
		t.Fatalf("errors %v; want the duplicate's and the failed source's", cat.Errors)
	}
	dup, down := cat.Errors[0], cat.Errors[1]
	if dup.Path != filepath.Join(second, "local.wasm") || !strings.Contains(dup.Error(), "oci://r/second:v1") || !strings.Contains(dup.Error(), filepath.Join(dir, "local.wasm")) {
		t.Errorf("duplicate's error %q; want one naming both", dup)
	}
	if down.Path != "oci://r/down:v1" || !errors.Is(down.Err, failed) {
		t.Errorf("failed source's error %v", down)
	}

	// A source whose directory cannot be read is an error of its own.
	sources[0].Dir = filepath.Join(first, "absent")
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Current().Lookup("local"); !ok {
		t.Error("a source that cannot be read took the tool directory's tool")
	}
	if errs := r.Current().Errors; len(errs) != 3 || errs[0].Path != "oci://r/first:v1" {
		t.Errorf("errors %v; want the unreadable source's first", errs)
	}
}
