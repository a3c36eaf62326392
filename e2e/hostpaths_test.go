package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

// A server whose binary was removed on disk (an upgrade in place) cannot
// start compile workers, and one whose compilation cache is no longer a
// directory cannot use it: a client calling a module added since is told
// so without a path of the host, which only the log names.
func TestClientsAreToldNoHostPath(t *testing.T) {
	deploy := filepath.Join(t.TempDir(), "secret-deploy")
	cache := filepath.Join(t.TempDir(), "secret-cache")
	bin := filepath.Join(deploy, "bin", "wasmcp")
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
	dir := t.TempDir()
	// Each module new to the cache, so that each call needs a worker.
	module := func(n byte) []byte { return wasmgen.Command{StartCode: []byte{0x41, n, 0x1a}}.Bytes() }
	writeTool(t, dir, "first", module(1), "first")
	s := startBinary(t, bin, "--tools", dir, "--cache-dir", cache)
	s.waitLog(t, "warm-up done")
	cs := connectHTTP(t, s, "2025-11-25")
	for _, tc := range []struct {
		what, tool, secret string
		spoil              func()
		logged             string
	}{
		{"the binary is removed", "late", deploy, func() {
			if err := os.Remove(bin); err != nil {
				t.Fatal(err)
			}
		}, "the compile worker cannot be started"},
		{"the cache is a file", "later", cache, func() {
			if err := os.RemoveAll(cache); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cache, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			// Workers start again, from the binary put back.
			if err := os.WriteFile(bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "the compile worker failed"},
	} {
		tc.spoil()
		writeTool(t, dir, tc.tool, module(byte(len(tc.tool))), tc.tool)
		s.waitLog(t, "loaded module", tc.tool+".wasm")
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", tc.what, err)
		}
		got := text(res)
		if !res.IsError || strings.Contains(got, tc.secret) || !strings.Contains(got, "its log says why") {
			t.Errorf("%s: the client is told %q; want an error naming no path", tc.what, got)
		}
		s.waitLog(t, tc.logged, tc.secret)
	}
}
