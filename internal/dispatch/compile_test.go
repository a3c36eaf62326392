package dispatch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// A call waiting for its module to compile holds no run slot: with one
// slot, another tool answers meanwhile.
func TestCompilingHoldsNoRunSlot(t *testing.T) {
	dir := t.TempDir()
	for stem, wat := range map[string]string{"first": "echo", "second": "shout"} {
		wattest.Write(t, dir, wat, stem)
		data, _ := json.Marshal(manifest(tool(stem, "", anyObject, "")))
		if err := os.WriteFile(filepath.Join(dir, stem+abi.SidecarSuffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Each compilation's worker says it started, then waits for the test
	// to let it finish; the module then compiles in process.
	fifos := t.TempDir()
	started, gate := filepath.Join(fifos, "started"), filepath.Join(fifos, "gate")
	for _, f := range []string{started, gate} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	worker := &sandbox.Worker{Path: "/bin/sh", Args: []string{"-c", "echo started > " + started + "; read x < " + gate, "worker"}}
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE"), Worker: worker})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	reg, err := registry.Open(registry.Options{Dir: dir, LoadOptions: registry.LoadOptions{Engine: engine, Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(reg, Options{Concurrency: 1, QueueTimeout: hangGuard})
	t.Cleanup(h.Close)

	startedR, gateW := openFIFO(t, started), openFIFO(t, gate)
	lines := bufio.NewScanner(startedR)
	let := func() {
		if _, err := gateW.Write([]byte("go\n")); err != nil {
			t.Fatal(err)
		}
	}
	call := func(name string) <-chan string {
		out := make(chan string, 1)
		go func() {
			res, err := h.Call(context.Background(), name, json.RawMessage(`{}`), nil, nil)
			switch {
			case err != nil:
				out <- err.Error()
			case res.IsError:
				out <- "isError"
			default:
				out <- "ok"
			}
		}()
		return out
	}

	second := call("second")
	if !lines.Scan() {
		t.Fatal("second's compilation did not start")
	}
	let()
	if got := <-second; got != "ok" {
		t.Fatalf("second: %s", got)
	}
	first := call("first")
	if !lines.Scan() {
		t.Fatal("first's compilation did not start")
	}
	// first waits for its module, and second runs in the only slot.
	if got := <-call("second"); got != "ok" {
		t.Fatalf("second, while first compiles: %s", got)
	}
	let()
	if got := <-first; got != "ok" {
		t.Fatalf("first: %s", got)
	}
}

// openFIFO opens a named pipe for the test's end of it. O_RDWR does not
// wait for the other end, and keeps the pipe open across the workers',
// which each open and close it once.
func openFIFO(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// What an engine says of a failure it cannot explain goes to the debug
// log, and the model gets a sentence of the server's: here, a granted
// directory that is gone by the time the call runs.
func TestEngineCausesGoToTheDebugLog(t *testing.T) {
	dir := t.TempDir()
	path := wattest.Write(t, dir, "echo", "echo")
	m := manifest(tool("echo", "", anyObject, ""))
	m.Permissions = &abi.Permissions{Dirs: []abi.DirRequest{{Guest: "/data"}}}
	data, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "echo"+abi.SidecarSuffix), data, 0o644); err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "gone")
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	src := fmt.Sprintf("modules:\n  echo:\n    sha256: %x\n    dirs:\n      /data: {host: %s}\n", sha256.Sum256(wasm), gone)
	if err := os.WriteFile(policyFile, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	reg, err := registry.Open(registry.Options{Dir: dir, PolicyFile: policyFile, LoadOptions: registry.LoadOptions{Engine: engine, Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	h := New(reg, Options{Logger: slog.New(rec)})
	t.Cleanup(h.Close)
	res, err := h.Call(context.Background(), "echo", json.RawMessage(`{}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || strings.Contains(got, gone) || !strings.Contains(got, "/data cannot be opened") {
		t.Fatalf("result %q (isError %v); want the mount named by its guest path only", got, res.IsError)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.records {
		if r.msg == "run failed" && r.attrs["cause"] != "" {
			return
		}
	}
	t.Fatalf("no debug line with the engine's cause; log: %+v", rec.records)
}

// slowAndLoud writes a directory of two tools: slow, the smaller module,
// and loud; and returns it with the size of slow's module as a compile
// worker gets it.
func slowAndLoud(t *testing.T) (string, int) {
	t.Helper()
	dir := t.TempDir()
	slow := wattest.Write(t, dir, "shout", "slow")
	wattest.Write(t, dir, "echo", "loud")
	for _, stem := range []string{"slow", "loud"} {
		data, _ := json.Marshal(manifest(tool(stem, "", anyObject, "")))
		if err := os.WriteFile(filepath.Join(dir, stem+abi.SidecarSuffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wasm, err := os.ReadFile(slow)
	if err == nil {
		wasm, err = wasmbin.StripCustom(wasm)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir, len(wasm)
}

// stallingDispatcher serves dir with one compile slot, compiling in
// wattest.StallingWorker, which stalls over a module of stall bytes, with
// the cache in cacheDir ("" for none).
func stallingDispatcher(t *testing.T, dir, cacheDir string, stall int) (*Dispatcher, func() string) {
	t.Helper()
	path, args, next := wattest.StallingWorker(t, stall)
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE"), CacheDir: cacheDir,
		Compile: sandbox.CompileLimits{Concurrency: 1}, Worker: &sandbox.Worker{Path: path, Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	reg, err := registry.Open(registry.Options{Dir: dir, LoadOptions: registry.LoadOptions{Engine: engine, Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	h := New(reg, Options{QueueTimeout: hangGuard})
	t.Cleanup(h.Close)
	return h, next
}

// callLoud calls loud, which must answer before ctx ends.
func callLoud(t *testing.T, h *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	res, err := h.Call(ctx, "loud", json.RawMessage(`{"x":"hi"}`), nil, nil)
	if err != nil || res.IsError {
		t.Fatalf("loud: %v %+v", err, res)
	}
}

// A call's module compiles at once, even while the warm-up compiles a
// module that takes as long as its limit allows: the warm-up gives its
// compile slot up, and takes it again once the call's module is done.
func TestACallDoesNotWaitForTheWarmUpsCompilation(t *testing.T) {
	dir, stall := slowAndLoud(t)
	h, next := stallingDispatcher(t, dir, "", stall)
	warmed := h.Warm()
	if got := next(); got != fmt.Sprint(stall) {
		t.Fatalf("the warm-up's first worker had a module of %s bytes; want slow's (%d)", got, stall)
	}
	callLoud(t, h)
	select {
	case <-warmed:
		t.Fatal("the warm-up was done before loud's call")
	default:
	}
}

// After a restart, a tool whose module is in the cache answers its first
// call while another call waits for a module that compiles for as long as
// its limit allows, a compilation that is never stopped.
func TestACachedToolDoesNotWaitForAnotherCallsCompilation(t *testing.T) {
	dir, stall := slowAndLoud(t)
	cache := wattest.CacheDir(t)
	first, _ := stallingDispatcher(t, dir, cache, stall)
	callLoud(t, first)
	h, next := stallingDispatcher(t, dir, cache, stall)
	ctx, cancel := context.WithCancel(context.Background())
	slow := make(chan struct{})
	defer func() { cancel(); <-slow }()
	go func() {
		defer close(slow)
		h.Call(ctx, "slow", json.RawMessage(`{}`), nil, nil)
	}()
	if got := next(); got != fmt.Sprint(stall) {
		t.Fatalf("the first worker had a module of %s bytes; want slow's (%d)", got, stall)
	}
	callLoud(t, h)
}
