package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

// newModule is a module new to any cache, so that calling it needs a
// compile worker.
func newModule(n byte) []byte { return wasmgen.Command{StartCode: []byte{0x41, n, 0x1a}}.Bytes() }

// startDeployed starts a copy of the server's binary from a directory of
// its own, as an operator's deployment; it returns the server and the
// copy's path.
func startDeployed(t *testing.T, extra ...string) (*server, string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "secret-deploy", "bin", "wasmcp")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startBinary(t, bin, extra...)
	s.waitLog(t, "warm-up done")
	return s, bin
}

// An upgrade in place removes the server's binary (or puts another
// version at its path): a module added since still compiles, in workers
// of the server's own code, and its calls answer.
func TestWorkersOutliveTheServersBinary(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "first", newModule(1), "first")
	s, bin := startDeployed(t, "--tools", dir, "--cache-dir", filepath.Join(t.TempDir(), "cache"))
	cs := connectHTTP(t, s, "2025-11-25")
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	writeTool(t, dir, "late", newModule(2), "late")
	s.waitLog(t, "tools reloaded", "tools=2") // "loaded module" comes before it serves
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "late", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("after the binary was removed, a new module's call answers %q", text(res))
	}
}

// A server whose compilation cache is no longer a directory cannot use
// it: a client calling a module added since is told so without a path of
// the host, which only the log names.
func TestClientsAreToldNoHostPath(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(t.TempDir(), "secret-cache")
	writeTool(t, dir, "first", newModule(1), "first")
	s, _ := startDeployed(t, "--tools", dir, "--cache-dir", cache)
	cs := connectHTTP(t, s, "2025-11-25")
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cache, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	writeTool(t, dir, "late", newModule(2), "late")
	s.waitLog(t, "tools reloaded", "tools=2") // "loaded module" comes before it serves
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "late", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	got := text(res)
	if !res.IsError || strings.Contains(got, cache) || strings.Contains(got, "secret-deploy") || !strings.Contains(got, "its log says why") {
		t.Errorf("the client is told %q; want an error naming no path", got)
	}
	s.waitLog(t, "the compile worker failed", cache)
}
