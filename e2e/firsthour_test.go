package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// exampleDir is a tool directory of the example tools alone, as a new
// user's `make run` serves them.
func exampleDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	examples, err := filepath.Glob("../tools/*/manifest.json")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example tools found: %v", err)
	}
	for _, m := range examples {
		name := filepath.Base(filepath.Dir(m)) + ".wasm"
		copyFile(t, filepath.Join(toolsDir, name), filepath.Join(dir, name))
	}
	return dir
}

// The project's own examples load without a warning: a user's first start
// shows nothing to worry about (fetch_text once asked for a 30s timeout
// over the 10s default ceiling, and was clamped with a warning each time).
func TestExamplesLoadWithoutWarnings(t *testing.T) {
	// Over stdio with no input, the server loads the directory, logs what
	// a start logs, and stops at the end of its input.
	cmd := exec.Command(binary, "serve", "--tools", exampleDir(t), "--cache-dir", cacheDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wasmcp serve on the examples: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tools loaded") {
		t.Fatalf("the server did not load the examples:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("loading the examples warned:\n%s", stderr.String())
	}
}

// ttlMs and cacheScope are 2026-07-28's: a 2025-11-25 client's answers do
// not carry them, over stdio or HTTP, and a 2026-07-28 client's do.
func TestCacheHintsOnlyIn2026(t *testing.T) {
	requests := []struct{ method, params string }{
		{"tools/list", ""},
		{"resources/list", ""},
		{"resources/templates/list", ""},
		{"prompts/list", ""},
		{"resources/read", `"uri":"invoices://about"`},
	}
	for _, c := range rawClients(t) {
		modern := c.url != "" && c.session == ""
		for i, req := range requests {
			_, r := c.request(t, fmt.Sprint(100+i), req.method, req.params)
			if r.Error != nil {
				t.Fatalf("%s: %s: %+v", c.name, req.method, r.Error)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(r.Result, &fields); err != nil {
				t.Fatalf("%s: %s: result %s: %v", c.name, req.method, r.Result, err)
			}
			for _, hint := range []string{"ttlMs", "cacheScope"} {
				if _, has := fields[hint]; has != modern {
					t.Errorf("%s: %s: has %s: %v; want %v", c.name, req.method, hint, has, modern)
				}
			}
		}
	}
}

// A hand-made 2025-11-25 request without a session is refused with 400
// and a standard JSON-RPC code, saying how to get a session.
func TestLegacyRequestWithoutASessionIsRefused(t *testing.T) {
	s := startHTTP(t)
	status, r, _ := post(t, s.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if status != http.StatusBadRequest || r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "1" {
		t.Fatalf("status %d, reply %+v; want 400 and error -32600 with id 1", status, r)
	}
	if !strings.Contains(r.Error.Message, "send initialize first") {
		t.Errorf("message %q does not say how to get a session", r.Error.Message)
	}
}
