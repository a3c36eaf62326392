// Package e2e tests the real wasmcp binary through real MCP clients: the
// official Go SDK's client over stdio and Streamable HTTP, in both protocol
// revisions, and raw JSON-RPC for what a well-behaved client never sends.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

var (
	binary   string // the wasmcp binary under test
	toolsDir string // examples and hostile modules
	cacheDir string // compiled-code cache shared by every server of the run
)

// hostile lists the WAT modules served beside the examples, each as a tool
// of the same name with small limits.
var hostile = []string{"loop", "grow", "hugemem", "recurse", "spam", "trap", "fail", "probe", "shout", "report", "flood"}

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	work, err := os.MkdirTemp("", "wasmcp-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	binary = filepath.Join(work, "wasmcp")
	toolsDir = filepath.Join(work, "tools")
	cacheDir = filepath.Join(work, "cache")
	// WASMCP_ENGINE, which every server started here inherits, picks the
	// engine; wasmtime needs a binary built with its tag.
	build := []string{"build", "-o", binary}
	if os.Getenv("WASMCP_ENGINE") == "wasmtime" {
		build = append(build, "-tags", "wasmtime")
	}
	if out, err := exec.Command("go", append(build, "../cmd/wasmcp")...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("building wasmcp: %v\n%s", err, out)
	}
	if out, err := exec.Command("../scripts/build-tools", toolsDir, binary).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("building example tools: %v\n%s", err, out)
	}
	return m.Run(), nil
}

// hostileOnce writes the hostile modules and their sidecar manifests. It
// needs a testing.TB to assemble them, so the first test to need them does
// it.
var hostileReady = make(chan struct{}, 1)

func writeHostile(t testing.TB) {
	t.Helper()
	select {
	case hostileReady <- struct{}{}:
	default:
		return
	}
	for _, name := range hostile {
		wattest.Write(t, toolsDir, name, name)
		// Only loop is meant to meet its time limit; the others get room to
		// fail for their own reasons on a loaded machine.
		timeout := "10s"
		if name == "loop" {
			timeout = "500ms"
		}
		manifest := fmt.Sprintf(`{"abi":1,"tools":[{"name":%q,"description":"hostile test module %s","inputSchema":{"type":"object"}}],
			"limits":{"timeout":%q,"memory":"16MiB","output":"64KiB"}}`, name, name, timeout)
		if err := os.WriteFile(filepath.Join(toolsDir, name+".manifest.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// server is a running wasmcp process.
type server struct {
	cmd    *exec.Cmd
	url    string // for --http servers
	stderr *lockedBuffer
}

// startHTTP starts `wasmcp serve --http` on a free loopback port and waits
// for it to say where it listens.
func startHTTP(t testing.TB, extra ...string) *server {
	t.Helper()
	writeHostile(t)
	return startHTTPIn(t, toolsDir, extra...)
}

// startHTTPIn is startHTTP on another tool directory.
func startHTTPIn(t testing.TB, dir string, extra ...string) *server {
	t.Helper()
	return startBinary(t, binary, append([]string{"--tools", dir, "--cache-dir", cacheDir}, extra...)...)
}

// startBinary starts bin as `serve --http` on a free loopback port, with
// the arguments given, and waits for it to say where it listens.
func startBinary(t testing.TB, bin string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--http", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &lockedBuffer{}}
	t.Cleanup(func() { s.stop(t) })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.WriteString(line + "\n")
			if _, after, ok := strings.Cut(line, "url="); ok {
				select {
				case found <- strings.Fields(after)[0]:
				default:
				}
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("server exited before listening:\n%s", s.stderr.String())
		}
		s.url = url
	case <-time.After(time.Minute):
		t.Fatalf("server did not report its address:\n%s", s.stderr.String())
	}
	return s
}

// stop interrupts the server, as an operator's Ctrl-C would, and checks that
// it exits cleanly.
func (s *server) stop(t testing.TB) {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exited with %v\n%s", err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		t.Errorf("server did not stop on interrupt")
	}
}

// connectStdio starts `wasmcp serve` over stdio with the SDK's client.
func connectStdio(t testing.TB, version string, extra ...string) *mcp.ClientSession {
	cs, _ := connectStdioLog(t, version, append([]string{"--log-level", "warn"}, extra...)...)
	return cs
}

// stdioCommand is `wasmcp serve` over stdio on the test's tool directory.
func stdioCommand(extra ...string) *exec.Cmd {
	return exec.Command(binary, append([]string{"serve", "--tools", toolsDir, "--cache-dir", cacheDir}, extra...)...)
}

// connectStdioLog is connectStdio that also returns the server's stderr.
func connectStdioLog(t testing.TB, version string, extra ...string) (*mcp.ClientSession, *server) {
	t.Helper()
	writeHostile(t)
	cmd := stdioCommand(extra...)
	s := &server{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	return connect(t, &mcp.CommandTransport{Command: cmd}, version, s), s
}

func connectHTTP(t testing.TB, s *server, version string) *mcp.ClientSession {
	t.Helper()
	return connect(t, &mcp.StreamableClientTransport{Endpoint: s.url}, version, s)
}

// connect connects a client over tr; the stderr of s, the server on the
// other end, is shown if it fails.
func connect(t testing.TB, tr mcp.Transport, version string, s *server) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, tr, version, s, nil)
}

// connectWith is connect with a client made with opts: its handlers of
// what the server asks, and the capabilities they declare.
func connectWith(t testing.TB, tr mcp.Transport, version string, s *server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "wasmcp-e2e", Version: "1"}, opts)
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting (%s): %v\nserver's stderr:\n%s", version, err, s.stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol %q; want %q", got, version)
	}
	return cs
}

// forEachClientOf runs f with a client made with opts over HTTP and stdio,
// on each revision, against servers of dir started with the flags extra.
func forEachClientOf(t *testing.T, dir string, extra []string, opts *mcp.ClientOptions, run func(t *testing.T, cs *mcp.ClientSession, version string)) {
	t.Helper()
	s := startHTTPIn(t, dir, extra...)
	for _, v := range versions {
		t.Run("http/"+v, func(t *testing.T) {
			run(t, connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, v, s, opts), v)
		})
		t.Run("stdio/"+v, func(t *testing.T) {
			cmd := exec.Command(binary, append([]string{"serve", "--tools", dir, "--cache-dir", cacheDir, "--log-level", "warn"}, extra...)...)
			stdio := &server{cmd: cmd, stderr: &lockedBuffer{}}
			cmd.Stderr = stdio.stderr
			run(t, connectWith(t, &mcp.CommandTransport{Command: cmd}, v, stdio, opts), v)
		})
	}
}

// wantMissingCapability checks the answer to a tools/call from a client
// that did not declare the capability the tool needs: on 2026-07-28 the
// error MissingRequiredClientCapability, on 2025-11-25, which has none, a
// tool error; each saying want.
func wantMissingCapability(t *testing.T, version string, res *mcp.CallToolResult, err error, want string) {
	t.Helper()
	if version == "2026-07-28" {
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(rpc.Message, want) {
			t.Fatalf("tools/call = %v, %v; want error %d saying %q", res, err, mcp.CodeMissingRequiredClientCapabilities, want)
		}
	} else if err != nil || !res.IsError || !strings.Contains(text(res), want) {
		t.Fatalf("tools/call = %v, %v; want a tool error saying %q", res, err, want)
	}
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitLog waits until the server's stderr contains every one of parts on a
// single line. Tests synchronise on the server's own log, never on sleeps.
func (s *server) waitLog(t testing.TB, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if containsAll(line, parts) {
				return
			}
		}
		s.stderr.wait(time.Second)
	}
	t.Fatalf("server never logged %q:\n%s", parts, s.stderr.String())
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
