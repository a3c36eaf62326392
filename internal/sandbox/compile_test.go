package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
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
	c, err := e.Compile(context.Background(), echo, abi.StartCommand)
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
	if _, err := again.Compile(context.Background(), echo, abi.StartCommand); err == nil {
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
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"), abi.StartCommand)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "could not start its compile worker") {
		t.Fatalf("Compile with no worker binary: %v; want a sentence without the path", err)
	}
}

func TestWorkerMemoryBound(t *testing.T) {
	// No worker can do anything within a kilobyte: the bound is what it
	// dies of.
	e := workerEngine(t, nil, CompileLimits{Memory: 1 << 10}, "")
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"), abi.StartCommand)
	if !errors.Is(err, ErrCompileMemory) || !strings.Contains(err.Error(), "memory bound") {
		t.Fatalf("Compile = %v; want the memory bound", err)
	}
}

func TestWorkerTimeBound(t *testing.T) {
	e := workerEngine(t, shWorker("exec sleep 60"), CompileLimits{Timeout: 50 * time.Millisecond}, "")
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"), abi.StartCommand)
	if !errors.Is(err, ErrCompileTime) || !strings.Contains(err.Error(), "50ms compile time limit") {
		t.Fatalf("Compile = %v; want the time limit", err)
	}
}

func TestWorkerReportsTheCompilersVerdict(t *testing.T) {
	e := workerEngine(t, nil, CompileLimits{}, "")
	// i32.add on an empty stack: well formed, but not valid.
	_, err := e.Compile(context.Background(), wasmgen.Command{StartCode: []byte{0x6a}}.Bytes(), abi.StartCommand)
	if err == nil || strings.Contains(err.Error(), "compiler failed") || errors.Is(err, ErrCompileMemory) {
		t.Fatalf("Compile = %v; want the engine's refusal of an invalid module", err)
	}
	if strings.Contains(err.Error(), "backtrace") || strings.Contains(err.Error(), "rayon") {
		t.Fatalf("Compile = %v; the engine's internals leaked into it", err)
	}
}

func TestWorkerCrashIsAFailedCompile(t *testing.T) {
	e := workerEngine(t, shWorker("kill -SEGV $$"), CompileLimits{}, "")
	_, err := e.Compile(context.Background(), wattest.Build(t, "echo"), abi.StartCommand)
	if err == nil || !strings.Contains(err.Error(), "the compiler failed on this module") {
		t.Fatalf("Compile = %v; want a failed compilation", err)
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
		_, err := e.Compile(context.Background(), wattest.Build(t, "echo"), abi.StartCommand)
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
			_, err := e.Compile(context.Background(), m, abi.StartCommand)
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
