package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestMetricsCountCalls makes a known sequence of calls on a fresh server
// and checks the scraped counts.
func TestMetricsCountCalls(t *testing.T) {
	s := startHTTP(t)
	cs := connectHTTP(t, s, "2026-07-28")
	for i := 0; i < 3; i++ {
		callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 2, "operation": "add"})
	}
	callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 0, "operation": "divide"})
	callTool(t, cs, "calculate", map[string]any{"a": "x"})
	callTool(t, cs, "loop", nil)
	callTool(t, cs, "trap", nil)

	metrics := get(t, s, "/metrics")
	for series, want := range map[string]int{
		`wasmcp_calls_total{outcome="ok",tool="calculate"}`:                3,
		`wasmcp_calls_total{outcome="exit",tool="calculate"}`:              1,
		`wasmcp_calls_total{outcome="invalid_arguments",tool="calculate"}`: 1,
		`wasmcp_calls_total{outcome="timeout",tool="loop"}`:                1,
		`wasmcp_calls_total{outcome="trap",tool="trap"}`:                   1,
		`wasmcp_call_duration_seconds_count{tool="calculate"}`:             5,
		`wasmcp_calls_in_flight`:                                           0,
	} {
		m := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(metrics)
		if m == nil || m[1] != fmt.Sprint(want) {
			t.Errorf("%s = %v; want %d", series, m, want)
		}
	}
	if !regexp.MustCompile(`(?m)^wasmcp_modules_loaded [1-9]`).MatchString(metrics) {
		t.Error("wasmcp_modules_loaded is not reported")
	}
}

func TestHealthAndStatus(t *testing.T) {
	s := startHTTP(t)
	if body := get(t, s, "/healthz"); !strings.Contains(body, "ok") {
		t.Errorf("/healthz = %q", body)
	}
	if body := get(t, s, "/readyz"); !strings.Contains(body, "ready") {
		t.Errorf("/readyz = %q", body)
	}
	status := get(t, s, "/status")
	for _, want := range []string{`"name": "calculate"`, `"sha256"`, `"modules"`} {
		if !strings.Contains(status, want) {
			t.Errorf("/status lacks %s", want)
		}
	}
}

// TestShutdownLetsCallsFinish sends SIGTERM while a call sleeps: the call
// completes, and the server exits 0.
func TestShutdownLetsCallsFinish(t *testing.T) {
	writeHostile(t)
	writeSleep(t)
	t.Run("http", func(t *testing.T) {
		s := startHTTP(t, "--log-level", "debug")
		cs := connectHTTP(t, s, "2026-07-28")
		done := make(chan *mcp.CallToolResult, 1)
		go func() { done <- callTool(t, cs, "sleep", nil) }()
		s.waitLog(t, "run started", "tool=sleep")
		terminate(t, s)
		if res := <-done; res.IsError || text(res) != "slept" {
			t.Errorf("the call in flight at SIGTERM = %q (isError %v)", text(res), res.IsError)
		}
		waitExit(t, s)
	})
	t.Run("stdio", func(t *testing.T) {
		p := startStdio(t, "--log-level", "debug")
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep",` + modernMeta + `}}`)
		p.srv.waitLog(t, "run started", "tool=sleep")
		terminate(t, p.srv)
		if r := p.recv(); r.Error != nil || !strings.Contains(string(r.Result), `"slept"`) {
			t.Errorf("the call in flight at SIGTERM: result %s, error %+v", r.Result, r.Error)
		}
		waitExit(t, p.srv)
	})
}

func writeSleep(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(toolsDir + "/sleep.wasm"); err == nil {
		return
	}
	writeTool(t, toolsDir, "sleep", wattest.Build(t, "sleep"), "sleep")
}

func terminate(t *testing.T, s *server) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// waitExit waits for the server to exit after SIGTERM and checks that it
// exited 0. The cleanup that stops servers then finds it gone.
func waitExit(t *testing.T, s *server) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("server exit: %v\n%s", err, s.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the server did not exit after SIGTERM")
	}
}

// TestShutdownWithStdoutUnread stops a stdio server whose client has
// stopped reading stdout, with an answer larger than the pipe holds (64
// KiB, as Linux pipes do by default) waiting to be written: SIGTERM still
// ends the server, after its grace period, and it says why.
func TestShutdownWithStdoutUnread(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	p := startStdio(t, "--tools", dir, "--shutdown-grace", "1s")
	big := strings.Repeat("x", 256<<10)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"s":"` + big + `"},` + modernMeta + `}}`)
	p.srv.waitLog(t, "msg=call", "tool=echo", "outcome=ok")
	terminate(t, p.srv)
	waitExit(t, p.srv)
	if !strings.Contains(p.srv.stderr.String(), "stdout is not being read") {
		t.Errorf("the server's log does not say why answers were left unwritten:\n%s", p.srv.stderr.String())
	}
}
