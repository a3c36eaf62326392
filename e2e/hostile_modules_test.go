package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// Modules that would cost the server gigabytes or minutes to compile or to
// instantiate, each refused when it loads, with the limit it passes.
var overLimits = map[string]struct {
	wasm  func() []byte
	limit string
}{
	"locals":  {func() []byte { return wasmgen.Command{StartLocals: [][2]uint64{{1 << 26, wasmgen.I32}}}.Bytes() }, "locals in one function"},
	"nesting": {func() []byte { return wasmgen.Command{StartCode: wasmgen.Nested(60_000)}.Bytes() }, "levels of nested blocks"},
	"brtable": {func() []byte { return wasmgen.Command{StartCode: wasmgen.BrTable(100_000)}.Bytes() }, "targets in one br_table"},
	"brif": {func() []byte {
		return wasmgen.Command{StartCode: wasmgen.Cat([]byte{0x02, 0x40}, wasmgen.Repeat(100_000, 0x41, 0x00, 0x0d, 0x00), []byte{0x0b})}.Bytes()
	}, "branches to one block"},
	"elements": {func() []byte { return wasmgen.Command{PassiveElements: 1 << 24}.Bytes() }, "element segment entries"},
	"tables": {func() []byte {
		ts := make([]wasmgen.TableLimits, 256)
		for i := range ts {
			ts[i] = wasmgen.TableLimits{Min: 1 << 20, Max: 1 << 20}
		}
		return wasmgen.Command{Tables: ts}.Bytes()
	}, "tables"},
	"globals": {func() []byte { return wasmgen.Command{Globals: 1_000_000}.Bytes() }, "globals"},
	"function": {func() []byte {
		return wasmgen.Command{StartCode: wasmgen.Repeat(7_654_321/3, 0x41, 0x00, 0x1a)}.Bytes()
	}, "bytes in one function body"},
}

func TestModulesOverTheLimitsAreRefusedAtLoad(t *testing.T) {
	dir := t.TempDir()
	for stem, m := range overLimits {
		writeTool(t, dir, stem, m.wasm(), stem)
	}
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	s := startHTTPIn(t, dir)
	cs := connectHTTP(t, s, "2026-07-28")
	if names := toolNames(t, cs); len(names) != 1 || names[0] != "echo" {
		t.Fatalf("tools %q; want only echo", names)
	}
	if res := callTool(t, cs, "echo", map[string]any{"x": 1}); res.IsError {
		t.Fatalf("echo beside the refused modules: %s", text(res))
	}
	var status struct {
		Errors []struct {
			File  string `json:"file"`
			Error string `json:"error"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(get(t, s, "/status")), &status); err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, e := range status.Errors {
		refused[strings.TrimSuffix(filepath.Base(e.File), ".wasm")] = e.Error
	}
	for stem, m := range overLimits {
		if msg := refused[stem]; !strings.Contains(msg, "implementation limits") || !strings.Contains(msg, m.limit) {
			t.Errorf("%s: /status says %q; want it refused for %q", stem, msg, m.limit)
		}
	}
	out, err := exec.Command(binary, "list", "--tools", dir, "--cache-dir", "").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "levels of nested blocks") {
		t.Errorf("wasmcp list: %v\n%s\nwant exit 1 and the refusals", err, out)
	}

	// Dropped into the watched directory, the same module is refused the
	// same way, and what served goes on serving.
	writeTool(t, dir, "dropped", overLimits["locals"].wasm(), "dropped")
	s.waitLog(t, "skipping module", "dropped.wasm", "locals in one function")
	if res := callTool(t, cs, "echo", map[string]any{"x": 2}); res.IsError {
		t.Fatalf("echo after a hostile module was dropped in: %s", text(res))
	}
}

// slowModule is within every limit but takes an engine a second or more to
// compile: sixteen functions of a mebibyte of straight-line code, and, to
// stretch wazero, functions nested as deep as the limits allow.
func slowModule() []byte {
	return wasmgen.Command{
		StartCode:      wasmgen.Repeat(349_000, 0x41, 0x00, 0x1a),
		ExtraFunctions: 15,
		ExtraCode:      wasmgen.Repeat(349_000, 0x41, 0x00, 0x1a),
	}.Bytes()
}

// While a module is compiling and hostile calls are running, another tool
// answers as it always does: compiling holds no run slot, and runs a slot
// each.
func TestToolsAnswerWhileModulesCompileAndCallsRun(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	loop := `{"abi":1,"tools":[{"name":"spin","description":"spins until stopped","inputSchema":{"type":"object"}}],"limits":{"timeout":"1m"}}`
	atomicWrite(t, filepath.Join(dir, "spin.manifest.json"), []byte(loop))
	atomicWrite(t, filepath.Join(dir, "spin.wasm"), wattest.Build(t, "loop"))
	s := startHTTPIn(t, dir, "--cache-dir", t.TempDir(), "--concurrency", "4", "--log-level", "debug")
	cs := connectHTTP(t, s, "2026-07-28")
	echo := func() {
		t.Helper()
		if res := callTool(t, cs, "echo", map[string]any{"x": 1}); res.IsError {
			t.Fatalf("echo: %s", text(res))
		}
	}
	echo()

	// Two calls that run until their time limit, or until cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	var spins sync.WaitGroup
	for range 2 {
		spins.Add(1)
		go func() {
			defer spins.Done()
			cs.CallTool(ctx, &mcp.CallToolParams{Name: "spin"})
		}()
	}
	defer func() { cancel(); spins.Wait() }()
	s.waitLogCount(t, 2, "run started", "tool=spin")

	s.stderr.reset()
	writeTool(t, dir, "slow", slowModule(), "slow")
	s.waitLog(t, "compiling module", "slow.wasm")
	calls := 0
	for !s.logged("module compiled", "slow.wasm") && !s.logged("does not compile", "slow.wasm") {
		echo()
		calls++
	}
	if calls == 0 {
		t.Fatal("no call was made while the module compiled")
	}
	t.Logf("%d calls answered while the module compiled", calls)
}

// SIGTERM during a compilation stops it: the server exits within its grace
// period rather than when the compiler is done.
func TestShutdownStopsCompilations(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "slow", slowModule(), "slow")
	s := startHTTPIn(t, dir, "--cache-dir", t.TempDir(), "--log-level", "debug", "--shutdown-grace", "1s")
	s.waitLog(t, "compiling module", "slow.wasm")
	terminate(t, s)
	waitExit(t, s)
	if s.logged("module compiled", "slow.wasm") {
		t.Fatalf("the compilation ran to its end after SIGTERM:\n%s", s.stderr.String())
	}
	s.waitLog(t, "stopped")
}

// The compile limits are the operator's: a module that passes one is
// refused with a message saying which, and the rest serve.
func TestCompileLimitsRefuseModules(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--compile-memory", "1MiB"}, "memory bound of 1.006 MiB (1 MiB, and 32 bytes more for every byte of the module)"},
		{[]string{"--compile-timeout", "1ms"}, "longer than the 1ms compile time limit"},
	} {
		t.Run(tc.flags[0], func(t *testing.T) {
			s := startHTTPIn(t, dir, append([]string{"--cache-dir", t.TempDir()}, tc.flags...)...)
			cs := connectHTTP(t, s, "2026-07-28")
			res := callTool(t, cs, "echo", map[string]any{})
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Fatalf("echo = %q (isError %v); want it refused: %q", text(res), res.IsError, tc.want)
			}
			if names := toolNames(t, cs); len(names) != 1 {
				t.Fatalf("the server stopped serving: tools %q", names)
			}
		})
	}
}

// logged reports whether the server's stderr has a line with every part.
func (s *server) logged(parts ...string) bool {
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if containsAll(line, parts) {
			return true
		}
	}
	return false
}

// waitLogCount waits until n lines of the server's stderr contain every
// part.
func (s *server) waitLogCount(t testing.TB, n int, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		found := 0
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if containsAll(line, parts) {
				found++
			}
		}
		if found >= n {
			return
		}
		s.stderr.wait(time.Second)
	}
	t.Fatalf("server logged %q fewer than %d times:\n%s", parts, n, s.stderr.String())
}

// stuckModule is within every module limit, yet no engine compiles it in
// the time a test runs. Its _start is 174,000 empty blocks one after
// another, then as many reads of a local: wazero looks the local up
// through every block before it at each read, uncached (24,000 of each
// took it 22 s, and the cost grows with their product). Sixteen more
// functions each sum 20,000 loads from distinct addresses: Cranelift
// takes about a minute over them on 2 cores.
func stuckModule() []byte {
	const half = (1<<20 - 64) / 6
	chain := wasmgen.Cat(wasmgen.Repeat(half, 0x02, 0x40, 0x0b), wasmgen.Repeat(half, 0x20, 0x00, 0x1a))
	var loads []byte
	k := 0
	for ; len(loads) < 100_000; k++ {
		loads = append(loads, 0x41, 0x00, 0x28, 0x02) // i32.const 0; i32.load offset=
		loads = append(loads, wasmgen.ULEB(uint64(k*4%60_000))...)
	}
	loads = append(loads, wasmgen.Repeat(k-1, 0x6a)...)                         // i32.add
	loads = append(loads, 0x21, 0x00, 0x41, 0x00, 0x20, 0x00, 0x36, 0x02, 0x00) // local.set 0; i32.store
	return wasmgen.Command{
		StartLocals: [][2]uint64{{1, wasmgen.I32}}, StartCode: chain,
		ExtraFunctions: 16, ExtraLocals: [][2]uint64{{1, wasmgen.I32}}, ExtraCode: loads,
	}.Bytes()
}

// A module that compiles for as long as its limit allows does not delay
// another tool's first call, though the warm-up, smallest module first,
// reaches it first and compile slots are one: the call's module takes the
// slot, and the warm-up starts over once it is done. After a restart, the
// other tool's module is in the cache: it loads in a slot of its own, and
// its first call does not wait even while a call waits for the slow
// module, a compilation that is never stopped.
func TestASlowModuleDoesNotDelayAnotherToolsFirstCall(t *testing.T) {
	dir := t.TempDir()
	stuck := stuckModule()
	writeTool(t, dir, "stuck", stuck, "stuck")
	// echo, padded past stuck's size, is compiled after it by the warm-up.
	echo, err := wasmbin.SetCustomSection(wattest.Build(t, "echo"), "padding", make([]byte, 2*len(stuck)))
	if err != nil {
		t.Fatal(err)
	}
	writeTool(t, dir, "echo", echo, "echo")
	flags := []string{"--cache-dir", t.TempDir(), "--compile-concurrency", "1", "--compile-timeout", "2m", "--log-level", "debug"}
	callEcho := func(s *server, cs *mcp.ClientSession) {
		t.Helper()
		if res := callTool(t, cs, "echo", map[string]any{"x": 1}); res.IsError {
			t.Fatalf("echo: %s", text(res))
		}
		if s.logged("module compiled", "stuck.wasm") || s.logged("does not compile", "stuck.wasm") {
			t.Fatalf("echo's first call waited for stuck's compilation to end:\n%s", s.stderr.String())
		}
	}

	s := startHTTPIn(t, dir, flags...)
	s.waitLog(t, "compilation started", "stuck.wasm")
	callEcho(s, connectHTTP(t, s, "2026-07-28"))
	if !s.logged("compilation stopped for one a call waits for", "stuck.wasm") {
		t.Fatalf("stuck's compilation did not give its slot up:\n%s", s.stderr.String())
	}
	s.stop(t)

	s = startHTTPIn(t, dir, flags...)
	s.waitLog(t, "compilation started", "stuck.wasm")
	cs := connectHTTP(t, s, "2026-07-28")
	ctx, cancel := context.WithCancel(context.Background())
	called := make(chan struct{})
	defer func() { cancel(); <-called }()
	go func() {
		defer close(called)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: "stuck"})
	}()
	s.waitLog(t, "a call waits for this compilation now", "stuck.wasm")
	callEcho(s, cs)
	if !s.logged("compilation started", "echo.wasm", "cached=true") {
		t.Fatalf("after a restart, echo's module did not load from the cache:\n%s", s.stderr.String())
	}
}

// A module that passed a compile limit is refused at once after a
// restart, with the same message, until the limit changes.
func TestACompileRefusalOutlivesARestart(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	cache := t.TempDir()
	call := func(flags ...string) (*server, *mcp.CallToolResult) {
		t.Helper()
		s := startHTTPIn(t, dir, append([]string{"--cache-dir", cache, "--log-level", "debug"}, flags...)...)
		res := callTool(t, connectHTTP(t, s, "2026-07-28"), "echo", map[string]any{"x": 1})
		s.stop(t)
		return s, res
	}
	const want = "longer than the 1ms compile time limit"
	_, first := call("--compile-timeout", "1ms")
	if !first.IsError || !strings.Contains(text(first), want) {
		t.Fatalf("echo = %q (isError %v); want it refused: %q", text(first), first.IsError, want)
	}
	s, again := call("--compile-timeout", "1ms")
	if text(again) != text(first) {
		t.Fatalf("after a restart: %q; want the same refusal: %q", text(again), text(first))
	}
	if s.logged("compilation started") || !s.logged("module refused without compiling", "echo.wasm") {
		t.Fatalf("after a restart, echo was compiled again:\n%s", s.stderr.String())
	}
	if _, res := call("--compile-timeout", "1m"); res.IsError {
		t.Fatalf("with a new limit: %q; want echo compiled and run", text(res))
	}
}

// When the engine's files leave the cache but the server's mark of a
// compiled module stays (the engine's own eviction, a cleaner of old
// files, a cache restored without them), the module still compiles in a
// worker, within --compile-memory, never in the server: no worker
// compiles within 1 MiB, and the server would.
func TestAModuleEvictedFromTheCacheCompilesInAWorker(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	s := startHTTPIn(t, dir, "--cache-dir", cache)
	if res := callTool(t, connectHTTP(t, s, "2026-07-28"), "echo", map[string]any{"x": 1}); res.IsError {
		t.Fatalf("echo: %s", text(res))
	}
	s.stop(t)
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "wasmcp-") {
			if err := os.RemoveAll(filepath.Join(cache, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	s = startHTTPIn(t, dir, "--cache-dir", cache, "--compile-memory", "1MiB", "--log-level", "debug")
	res := callTool(t, connectHTTP(t, s, "2026-07-28"), "echo", map[string]any{"x": 1})
	if !res.IsError || !strings.Contains(text(res), "memory bound of 1.006 MiB") {
		t.Fatalf("echo = %q (isError %v); want its worker's memory bound", text(res), res.IsError)
	}
	if !s.logged("compilation started", "echo.wasm", "cached=true") {
		t.Fatalf("echo was not taken for a module in the cache:\n%s", s.stderr.String())
	}
}
