package sandbox

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// workerArg makes this test binary a compile worker, as the wasmcp binary
// is its own.
const workerArg = "compile-worker"

func TestMain(m *testing.M) {
	if i := slices.Index(os.Args, workerArg); i >= 0 {
		os.Exit(RunWorker(os.Args[i+1:], os.Stdin, os.Stderr))
	}
	os.Exit(m.Run())
}

// workerEngine starts an engine whose modules compile in workers.
func workerEngine(t *testing.T, w *Worker, lim CompileLimits, cacheDir string) *Engine {
	t.Helper()
	if w == nil {
		w = &Worker{Path: os.Args[0], Args: []string{workerArg}}
	}
	e, err := NewEngine(context.Background(), Config{Engine: os.Getenv("WASMCP_ENGINE"), CacheDir: cacheDir, Compile: lim, Worker: w})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// shWorker is a worker that runs a shell script instead of compiling; the
// engine's arguments follow the script as $1, $2 and so on.
func shWorker(script string) *Worker {
	return &Worker{Path: "/bin/sh", Args: []string{"-c", script, "worker"}}
}

// engineCache is a cache directory for one test. It is not t.TempDir:
// wasmtime's cache updates its usage statistics from a thread of its own,
// which closing the engine does not wait for, so the directory may gain a
// file while it is removed, and the test would fail for that.
func engineCache(t *testing.T) string {
	dir, err := os.MkdirTemp("", "wasmcp-cache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestWorkerCompilesIntoTheCache(t *testing.T) {
	cache := engineCache(t)
	e := workerEngine(t, nil, CompileLimits{}, cache)
	echo := wattest.Build(t, "echo")
	c, err := e.Compile(context.Background(), echo)
	if err != nil {
		t.Fatal(err)
	}
	if out := c.Run(context.Background(), Run{Stdin: []byte("hi"), Limits: small}); out.Failure != nil || string(out.Stdout) != "hi" {
		t.Fatalf("run after a worker compiled the module: %+v %q", out.Failure, out.Stdout)
	}
	// A module compiled before still goes through a worker: whether its
	// code is still in the cache is the engine's to know. This worker
	// would fail.
	again := workerEngine(t, shWorker("exit 99"), CompileLimits{}, cache)
	if _, err := again.Compile(context.Background(), echo); err == nil {
		t.Fatal("a module compiled before was compiled in the server, not in a worker")
	}
}

func TestACacheOthersMayWriteIsRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := NewEngine(context.Background(), Config{Engine: os.Getenv("WASMCP_ENGINE"), CacheDir: dir})
	if err == nil || !strings.Contains(err.Error(), "others may write to it") {
		t.Fatalf("NewEngine with a world-writable cache: %v", err)
	}
}

func TestAWorkerThatCannotStartIsNamedToTheOperatorOnly(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "deploy", "wasmcp")
	e := workerEngine(t, &Worker{Path: secret}, CompileLimits{}, "")
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"))
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "could not start its compile worker") {
		t.Fatalf("Compile with no worker binary: %v; want a sentence without the path", err)
	}
}

func TestWorkerMemoryBound(t *testing.T) {
	// No worker can do anything within a kilobyte: the bound is what it
	// dies of.
	e := workerEngine(t, nil, CompileLimits{Memory: 1 << 10}, "")
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"))
	if !errors.Is(err, ErrCompileMemory) || !strings.Contains(err.Error(), "memory bound") {
		t.Fatalf("Compile = %v; want the memory bound", err)
	}
}

func TestWorkerTimeBound(t *testing.T) {
	e := workerEngine(t, shWorker("exec sleep 60"), CompileLimits{Timeout: 50 * time.Millisecond}, "")
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"))
	if !errors.Is(err, ErrCompileTime) || !strings.Contains(err.Error(), "50ms compile time limit") {
		t.Fatalf("Compile = %v; want the time limit", err)
	}
}

func TestWorkerReportsTheCompilersVerdict(t *testing.T) {
	e := workerEngine(t, nil, CompileLimits{}, "")
	// i32.add on an empty stack: well formed, but not valid.
	_, err := e.Compile(context.Background(), wasmgen.Command{StartCode: []byte{0x6a}}.Bytes())
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Compile = %v; want the engine's refusal of an invalid module", err)
	}
	if strings.Contains(err.Error(), "backtrace") || strings.Contains(err.Error(), "rayon") {
		t.Fatalf("Compile = %v; the engine's internals leaked into it", err)
	}
}

// What a compiler says of an invalid module reaches a model and the
// operator's log as one line, in or out of a worker: wasmtime says it as
// a chain of causes over several lines. All of it is kept for the debug
// log.
func TestTheCompilersVerdictIsOneLine(t *testing.T) {
	gist := map[string]string{
		"wazero":   "the compiler refused it: invalid function[0] export[\"_start\"]: cannot pop the 1st operand for i32.add: i32 missing",
		"wasmtime": "the compiler refused it: function 0: Invalid input WebAssembly code at offset 49: type mismatch: expected i32 but nothing on stack",
	}
	for name, e := range map[string]*Engine{"in a worker": workerEngine(t, nil, CompileLimits{}, ""), "in process": newEngine(t)} {
		_, err := e.Compile(context.Background(), wasmgen.Command{StartCode: []byte{0x6a}}.Bytes())
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("%s: Compile = %v; want a RefusedError", name, err)
		}
		if want := gist[e.Name()]; err.Error() != want {
			t.Errorf("%s: Compile = %q\nwant %q", name, err, want)
		}
		if e.Name() == "wasmtime" && !strings.Contains(refused.Compiler, "Caused by:") {
			t.Errorf("%s: the compiler's own words are lost: %q", name, refused.Compiler)
		}
	}
}

func TestCompilerText(t *testing.T) {
	for said, want := range map[string]string{
		"failed to compile: wasm[0]::function[3]\n\nCaused by:\n    0: WebAssembly translation error\n    1: Invalid input WebAssembly code at offset 49: type mismatch:\n       expected i32\nStack backtrace:\n   0: anyhow::error\n             at /root/.cargo/registry/src/anyhow-1.0.98/src/error.rs:83:36": "function 3: Invalid input WebAssembly code at offset 49: type mismatch: expected i32",
		"failed to parse WebAssembly module\n\nCaused by:\n    unknown memory 0 (at offset 0x2a)": "failed to parse WebAssembly module: unknown memory 0 (at offset 0x2a)",
		"invalid function[0] export[\"_start\"]: too many results\n\thave (i32)\n\twant ()":       `invalid function[0] export["_start"]: too many results have (i32) want ()`,
		strings.Repeat("é", 400): strings.Repeat("é", 256) + "…",
	} {
		if got := compilerText(said); got != want {
			t.Errorf("compilerText(%q)\n = %q\nwant %q", said, got, want)
		}
	}
}

func TestWorkerCrashIsAFailedCompile(t *testing.T) {
	var logs bytes.Buffer
	e, err := NewEngine(context.Background(), Config{
		Engine: os.Getenv("WASMCP_ENGINE"),
		Worker: shWorker("echo 'panic: at /home/build/src/compiler.go:12' >&2; kill -SEGV $$"),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	_, err = e.Compile(context.Background(), wattest.Build(t, "echo"))
	if err == nil || !strings.Contains(err.Error(), "the compiler failed on this module") || strings.Contains(err.Error(), "/home/build") {
		t.Fatalf("Compile = %v; want a failed compilation, without what the compiler said", err)
	}
	if !strings.Contains(logs.String(), "/home/build/src/compiler.go") {
		t.Fatalf("the log lacks what the compiler said:\n%s", logs.String())
	}
}

// A cache the worker or the engine cannot use is the server's fault, and
// its paths are the operator's business: the log names them, the error a
// model gets does not.
func TestABrokenCacheIsNamedToTheOperatorOnly(t *testing.T) {
	breaks := map[string]func(t *testing.T, cache string){
		// Making the cache, in the worker, fails; so does opening an
		// entry, in the server.
		"the cache is a file": func(t *testing.T, cache string) {
			if err := os.Rename(cache, filepath.Join(t.TempDir(), "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cache, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		// Each engine's directory in it leads where nothing can be
		// written, even by root: storing the code fails.
		"its entries lead to /proc": func(t *testing.T, cache string) {
			entries, err := os.ReadDir(cache)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range entries {
				if !d.IsDir() {
					continue
				}
				dir := filepath.Join(cache, d.Name())
				if err := os.Rename(dir, filepath.Join(t.TempDir(), d.Name())); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/proc", dir); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for how, breakIt := range breaks {
		for _, worker := range []bool{true, false} {
			cache := filepath.Join(t.TempDir(), "secret-cache")
			var logs bytes.Buffer
			cfg := Config{Engine: os.Getenv("WASMCP_ENGINE"), CacheDir: cache, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if worker {
				cfg.Worker = &Worker{Path: os.Args[0], Args: []string{workerArg}}
			}
			e, err := NewEngine(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(context.Background())
			breakIt(t, cache)
			_, err = e.Compile(context.Background(), wattest.Build(t, "echo"))
			switch {
			case err == nil && e.Name() == "wazero":
				t.Errorf("%s, worker %v: Compile succeeded", how, worker)
			case err == nil:
				// wasmtime's own cache carries on without its files.
			case strings.Contains(err.Error(), cache) || !strings.Contains(err.Error(), "its log says why"):
				t.Errorf("%s, worker %v: Compile = %v; want a sentence without the cache's path", how, worker, err)
			case !strings.Contains(logs.String(), cache):
				t.Errorf("%s, worker %v: the log does not name the cache:\n%s", how, worker, logs.String())
			}
		}
	}
}

func TestCloseStopsAWorker(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	e := workerEngine(t, shWorker("echo started > "+fifo+"; exec sleep 60"), CompileLimits{}, "")
	done := make(chan error, 1)
	go func() {
		_, err := e.Compile(context.Background(), wattest.Build(t, "echo"))
		done <- err
	}()
	if b, err := os.ReadFile(fifo); err != nil || !bytes.HasPrefix(b, []byte("started")) {
		t.Fatalf("the worker did not start: %q %v", b, err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("Close with a worker running: %v", err)
	}
	if err := <-done; !errors.Is(err, ErrEngineClosed) {
		t.Fatalf("Compile = %v; want ErrEngineClosed", err)
	}
}

func TestCompilationsTakeTurns(t *testing.T) {
	log := filepath.Join(t.TempDir(), "log")
	// The pause stands for a compilation's work.
	e := workerEngine(t, shWorker("echo start >> "+log+"; sleep 0.2; echo end >> "+log), CompileLimits{Concurrency: 1}, "")
	mods := [][]byte{wattest.Build(t, "echo"), wattest.Build(t, "trap")}
	errs := make(chan error, len(mods))
	for _, m := range mods {
		go func() {
			_, err := e.Compile(context.Background(), m)
			errs <- err
		}()
	}
	for range mods {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(log)
	if got := strings.Fields(string(b)); !slices.Equal(got, []string{"start", "end", "start", "end"}) {
		t.Fatalf("workers ran %q; want one after the other", got)
	}
}
