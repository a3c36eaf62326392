package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// listChanges counts notifications/tools/list_changed.
type listChanges chan struct{}

func (c listChanges) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(time.Minute):
		t.Fatalf("no tools/list_changed after %s", what)
	}
}

func connectWatching(t testing.TB, s *server, version string) (*mcp.ClientSession, listChanges) {
	t.Helper()
	changes := make(listChanges, 100)
	opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changes <- struct{}{} }}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, opts).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, changes
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// writeTool puts a module and its sidecar in dir the way a careful operator
// does: written beside, then renamed into place.
func writeTool(t testing.TB, dir, stem string, wasm []byte, tool string) {
	t.Helper()
	manifest := `{"abi":1,"tools":[{"name":"` + tool + `","description":"a tool for reload tests","inputSchema":{"type":"object"}}]}`
	atomicWrite(t, filepath.Join(dir, stem+".manifest.json"), []byte(manifest))
	atomicWrite(t, filepath.Join(dir, stem+".wasm"), wasm)
}

func atomicWrite(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".incoming-"+filepath.Base(path))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestHotReload adds, replaces (while a call runs on the old version),
// breaks, fixes and removes a tool, with clients of both revisions
// watching: each change reaches them as tools/list_changed and a new list,
// and no call fails because of a reload.
func TestHotReload(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(toolsDir, "calculate.wasm"), filepath.Join(dir, "calculate.wasm"))
	s := startHTTPIn(t, dir, "--log-level", "debug")
	legacy, legacyChanges := connectWatching(t, s, "2025-11-25")
	modern, modernChanges := connectWatching(t, s, "2026-07-28")
	waitBoth := func(what string) {
		t.Helper()
		legacyChanges.wait(t, what)
		modernChanges.wait(t, what)
	}
	if names := toolNames(t, legacy); !slices.Equal(names, []string{"calculate"}) {
		t.Fatalf("tools at start = %v", names)
	}

	// Add.
	sleeper, prober := wattest.Build(t, "sleep"), wattest.Build(t, "probe")
	writeTool(t, dir, "slow", sleeper, "slow")
	waitBoth("adding a tool")
	for _, cs := range []*mcp.ClientSession{legacy, modern} {
		if names := toolNames(t, cs); !slices.Equal(names, []string{"calculate", "slow"}) {
			t.Fatalf("tools after adding = %v", names)
		}
	}

	// Replace while a call runs on the old version.
	old := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := legacy.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		old <- res
	}()
	s.waitLog(t, "run started", "tool=slow")
	writeTool(t, dir, "slow", prober, "slow")
	waitBoth("replacing a tool")
	if res := callTool(t, modern, "slow", nil); text(res) != "sealed" {
		t.Errorf("after the replacement, slow = %q; want the new version's answer", text(res))
	}
	if res := <-old; res.IsError || text(res) != "slept" {
		t.Errorf("the call running during the replacement = %q (isError %v); want the old version's answer", text(res), res.IsError)
	}

	// Break: the working version keeps serving, and the status says why.
	atomicWrite(t, filepath.Join(dir, "slow.wasm"), []byte("\x00asm\x01\x00\x00\x00garbage"))
	s.waitLog(t, "keeping the previous version", "slow.wasm")
	if res := callTool(t, modern, "slow", nil); text(res) != "sealed" {
		t.Errorf("with a broken update, slow = %q; want the working version", text(res))
	}
	// The catalog logs the broken update before the host puts it in
	// service, so /status may lag the log line: wait for the reload's
	// own line.
	s.waitLog(t, "tools reloaded", "skipped=1")
	if status := get(t, s, "/status"); !strings.Contains(status, "previous one") {
		t.Errorf("/status does not report the broken update:\n%s", status)
	}

	// Fix.
	writeTool(t, dir, "slow", sleeper, "slow")
	waitBoth("fixing a tool")
	if res := callTool(t, modern, "slow", nil); text(res) != "slept" {
		t.Errorf("after the fix, slow = %q", text(res))
	}

	// Remove.
	for _, f := range []string{"slow.wasm", "slow.manifest.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	waitBoth("removing a tool")
	if names := toolNames(t, modern); !slices.Equal(names, []string{"calculate"}) {
		t.Errorf("tools after removing = %v", names)
	}
	_, err := legacy.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Errorf("calling a removed tool: %v; want -32602", err)
	}
}

func get(t *testing.T, s *server, path string) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// TestWatchCanBeTurnedOff checks that --watch=false promises no list
// changes and makes none: a new file is not served until a restart.
func TestWatchCanBeTurnedOff(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, filepath.Join(toolsDir, "calculate.wasm"), filepath.Join(dir, "calculate.wasm"))
	s := startHTTPIn(t, dir, "--watch=false")
	cs := connectHTTP(t, s, "2025-11-25")
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Fatalf("tools capability = %+v; want no listChanged", caps.Tools)
	}
	writeTool(t, dir, "late", wattest.Build(t, "probe"), "late")
	// A second server on the same directory proves the new file loads;
	// starting it takes longer than a watching server takes to reload.
	if names := toolNames(t, connectHTTP(t, startHTTPIn(t, dir), "2025-11-25")); !slices.Equal(names, []string{"calculate", "late"}) {
		t.Errorf("a restarted server's tools = %v", names)
	}
	if names := toolNames(t, cs); !slices.Equal(names, []string{"calculate"}) {
		t.Errorf("tools without watching = %v", names)
	}
	if strings.Contains(s.stderr.String(), "tools reloaded") {
		t.Error("the server reloaded with --watch=false")
	}
}
