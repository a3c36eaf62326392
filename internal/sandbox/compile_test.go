package sandbox

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmbin"
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

func TestWorkerCompilesIntoTheCache(t *testing.T) {
	cache := wattest.CacheDir(t)
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

// compiledSize is the size of what a worker is given for wasm.
func compiledSize(t *testing.T, wasm []byte) int {
	t.Helper()
	wasm, err := wasmbin.StripCustom(wasm)
	if err == nil {
		wasm, _, err = wasmbin.CapTables(wasm, maxTableElements)
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(wasm)
}

// stallingWorker is wattest.StallingWorker as a Worker, stalling over
// wasm.
func stallingWorker(t *testing.T, wasm []byte) (*Worker, func() string) {
	t.Helper()
	path, args, next := wattest.StallingWorker(t, compiledSize(t, wasm))
	return &Worker{Path: path, Args: args}, next
}

func TestACompilationMadeAheadGivesItsSlotToOneSomeoneWaitsFor(t *testing.T) {
	ahead, wanted := wasmgen.Command{}.Bytes(), wattest.Build(t, "echo")
	w, next := stallingWorker(t, ahead)
	e := workerEngine(t, w, CompileLimits{Concurrency: 1}, "")
	needed := make(chan struct{})
	aheadDone := make(chan error, 1)
	go func() {
		_, err := e.CompileWith(context.Background(), ahead, CompileOptions{Schedule: Schedule{Name: "ahead", Needed: needed}})
		aheadDone <- err
	}()
	if got := next(); got != strconv.Itoa(compiledSize(t, ahead)) {
		t.Fatalf("first worker had a module of %s bytes; want the one made ahead", got)
	}
	if _, err := e.Compile(context.Background(), wanted); err != nil {
		t.Fatalf("the module someone waits for: %v", err)
	}
	select {
	case err := <-aheadDone:
		t.Fatalf("the module made ahead finished (%v) before the one someone waits for", err)
	default:
	}
	if got := next(); got != strconv.Itoa(compiledSize(t, wanted)) {
		t.Fatalf("second worker had a module of %s bytes; want the one someone waits for", got)
	}
	// The module made ahead starts over.
	if got := next(); got != strconv.Itoa(compiledSize(t, ahead)) {
		t.Fatalf("third worker had a module of %s bytes; want the one made ahead, again", got)
	}
	e.Close(context.Background())
	if err := <-aheadDone; !errors.Is(err, ErrEngineClosed) {
		t.Fatalf("the module made ahead: %v; want it stopped by Close", err)
	}
}

// A compilation whose Schedule.Stop closes ends at once, waiting for a
// slot or running, gives its slot back, and is not started over.
func TestAStoppedCompilationEndsAtOnce(t *testing.T) {
	running, waiting, after := wasmgen.Command{}.Bytes(), wattest.Build(t, "trap"), wattest.Build(t, "echo")
	w, next := stallingWorker(t, running)
	e := workerEngine(t, w, CompileLimits{Concurrency: 1}, "")
	compile := func(wasm []byte, stop chan struct{}) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := e.CompileWith(context.Background(), wasm, CompileOptions{Schedule: Schedule{Needed: make(chan struct{}), Stop: stop}})
			done <- err
		}()
		return done
	}
	stopRunning, stopWaiting := make(chan struct{}), make(chan struct{})
	runningDone := compile(running, stopRunning)
	if got := next(); got != strconv.Itoa(compiledSize(t, running)) {
		t.Fatalf("first worker had a module of %s bytes; want the one that stalls", got)
	}
	// Made ahead too, it waits behind the one that runs.
	waitingDone := compile(waiting, stopWaiting)
	close(stopWaiting)
	if err := <-waitingDone; !errors.Is(err, ErrStopped) {
		t.Fatalf("the compilation stopped as it waited: %v; want ErrStopped", err)
	}
	close(stopRunning)
	if err := <-runningDone; !errors.Is(err, ErrStopped) {
		t.Fatalf("the compilation stopped as it ran: %v; want ErrStopped", err)
	}
	// The only slot is free, and neither starts over.
	if _, err := e.Compile(context.Background(), after); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != strconv.Itoa(compiledSize(t, after)) {
		t.Fatalf("the next worker had a module of %s bytes; want the one compiled after the others stopped", got)
	}
}

// A module compiled before loads from the cache in a slot of its own: it
// does not wait for a compilation someone waits for, which is never
// stopped, nor stops one, even when compile slots are one.
func TestACachedModuleDoesNotWaitForACompilation(t *testing.T) {
	cache := wattest.CacheDir(t)
	slow, echo := wasmgen.Command{}.Bytes(), wattest.Build(t, "echo")
	if _, err := workerEngine(t, nil, CompileLimits{}, cache).Compile(context.Background(), echo); err != nil {
		t.Fatal(err)
	}
	// After a restart on the same cache, slow compiles for as long as it
	// is let, for a caller.
	w, next := stallingWorker(t, slow)
	e := workerEngine(t, w, CompileLimits{Concurrency: 1}, cache)
	if !e.Cached(echo) || e.Cached(slow) {
		t.Fatalf("Cached: echo %v, slow %v; want only echo, which compiled before", e.Cached(echo), e.Cached(slow))
	}
	slowDone := make(chan error, 1)
	go func() {
		_, err := e.Compile(context.Background(), slow)
		slowDone <- err
	}()
	if got := next(); got != strconv.Itoa(compiledSize(t, slow)) {
		t.Fatalf("first worker had a module of %s bytes; want slow's", got)
	}
	// ctx bounds only the wait for a slot, so a module that waits for
	// slow's ends with ctx.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.Compile(ctx, echo); err != nil {
		t.Fatalf("echo, compiled before, while slow compiles: %v", err)
	}
	select {
	case err := <-slowDone:
		t.Fatalf("slow's compilation ended (%v) before echo's", err)
	default:
	}
}

// A mark that outlives the engine's files (its own eviction, a cleaner of
// old files, a cache restored without them) changes only the slot: the
// module still compiles in a worker, within its bounds, never in the
// server.
func TestAModuleWhoseCodeLeftTheCacheCompilesInAWorker(t *testing.T) {
	first := wattest.CacheDir(t)
	echo := wattest.Build(t, "echo")
	if _, err := workerEngine(t, nil, CompileLimits{}, first).Compile(context.Background(), echo); err != nil {
		t.Fatal(err)
	}
	// The marks alone, as a cache restored without the engine's files.
	cache := wattest.CacheDir(t)
	if err := os.CopyFS(filepath.Join(cache, marksDir), os.DirFS(filepath.Join(first, marksDir))); err != nil {
		t.Fatal(err)
	}
	e := workerEngine(t, nil, CompileLimits{Memory: 1 << 10}, cache)
	if !e.Cached(echo) {
		t.Fatal("echo's mark is gone with the engine's files")
	}
	// No worker can compile within a kilobyte; the server could.
	if _, err := e.Compile(context.Background(), echo); !errors.Is(err, ErrCompileMemory) {
		t.Fatalf("Compile = %v; want the worker's memory bound", err)
	}
}

// refusalRecords lists the records of refused modules in a cache.
func refusalRecords(t *testing.T, cache string) []string {
	t.Helper()
	records, err := filepath.Glob(filepath.Join(cache, refusalsDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return records
}

func TestAModuleThatPassedALimitIsRefusedAtOnceAfterARestart(t *testing.T) {
	echo, other := wattest.Build(t, "echo"), wattest.Build(t, "trap")
	// A worker that fails loudly shows whether a compilation was tried.
	tried := shWorker("exit 99")
	for _, tc := range []struct {
		name  string
		first *Worker
		lim   CompileLimits
		kind  error
		other CompileLimits // under which the module is tried again
	}{
		// A second, so that the failing worker is done well within it
		// when it compiles another module under the same limits.
		{"time", shWorker("exec sleep 60"), CompileLimits{Timeout: time.Second}, ErrCompileTime, CompileLimits{Timeout: time.Minute}},
		{"memory", nil, CompileLimits{Memory: 1 << 10}, ErrCompileMemory, CompileLimits{Memory: 2 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := wattest.CacheDir(t)
			_, first := workerEngine(t, tc.first, tc.lim, cache).Compile(context.Background(), echo)
			if !errors.Is(first, tc.kind) {
				t.Fatalf("first compilation: %v; want %v", first, tc.kind)
			}
			restarted := workerEngine(t, tried, tc.lim, cache)
			_, again := restarted.Compile(context.Background(), echo)
			if !errors.Is(again, tc.kind) || again.Error() != first.Error() {
				t.Fatalf("after a restart: %v; want the same refusal, without compiling: %v", again, first)
			}
			for what, compile := range map[string]func() error{
				"another module": func() error { _, err := restarted.Compile(context.Background(), other); return err },
				"other limits": func() error {
					_, err := workerEngine(t, tried, tc.other, cache).Compile(context.Background(), echo)
					return err
				},
			} {
				if err := compile(); err == nil || !strings.Contains(err.Error(), "compiler failed") {
					t.Errorf("%s: %v; want it compiled (by the failing worker)", what, err)
				}
			}
		})
	}
}

func TestARefusalRecordIsTrustedOnlyAsTheServerWroteIt(t *testing.T) {
	echo := wattest.Build(t, "echo")
	// The memory limit, which no worker compiles within, makes the
	// record; the worker that then shows a compilation tried has no
	// time limit to race.
	lim := CompileLimits{Memory: 1 << 10}
	for name, spoil := range map[string]func(record string) error{
		"other content": func(record string) error { return os.WriteFile(record, []byte("run\n"), 0o600) },
		"a link": func(record string) error {
			target := filepath.Join(filepath.Dir(record), "target")
			if err := os.Rename(record, target); err != nil {
				return err
			}
			// Named relatively, the link is as short as a record.
			return os.Symlink(filepath.Base(target), record)
		},
	} {
		t.Run(name, func(t *testing.T) {
			cache := wattest.CacheDir(t)
			workerEngine(t, nil, lim, cache).Compile(context.Background(), echo)
			records := refusalRecords(t, cache)
			if len(records) != 1 {
				t.Fatalf("records %q; want one", records)
			}
			if err := spoil(records[0]); err != nil {
				t.Fatal(err)
			}
			_, err := workerEngine(t, shWorker("exit 99"), lim, cache).Compile(context.Background(), echo)
			if err == nil || !strings.Contains(err.Error(), "compiler failed") {
				t.Fatalf("with the record spoiled: %v; want the module compiled again", err)
			}
		})
	}
}

func TestOnlyLimitsPassedAreRemembered(t *testing.T) {
	for name, w := range map[string]*Worker{
		"the compiler's verdict": nil,
		"a crash":                shWorker("kill -SEGV $$"),
	} {
		t.Run(name, func(t *testing.T) {
			cache := wattest.CacheDir(t)
			// Not valid: i32.add on an empty stack.
			if _, err := workerEngine(t, w, CompileLimits{}, cache).Compile(context.Background(), wasmgen.Command{StartCode: []byte{0x6a}}.Bytes()); err == nil {
				t.Fatal("an invalid module compiled")
			}
			if records := refusalRecords(t, cache); len(records) != 0 {
				t.Fatalf("records %q after a failure that is no limit's", records)
			}
		})
	}
}

func TestARefusalThatCannotBeRecordedIsLogged(t *testing.T) {
	cache := wattest.CacheDir(t)
	// The records' directory cannot be made: a file has its name.
	if err := os.WriteFile(filepath.Join(cache, refusalsDir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	e, err := NewEngine(context.Background(), Config{Engine: os.Getenv("WASMCP_ENGINE"), CacheDir: cache,
		Compile: CompileLimits{Timeout: 50 * time.Millisecond}, Worker: shWorker("exec sleep 60"), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if _, err := e.Compile(context.Background(), wattest.Build(t, "echo")); !errors.Is(err, ErrCompileTime) {
		t.Fatalf("Compile = %v; want the time limit", err)
	}
	if !strings.Contains(log.String(), "cannot record a module's compile refusal") {
		t.Fatalf("log %q; want the failure to record named", log.String())
	}
}
