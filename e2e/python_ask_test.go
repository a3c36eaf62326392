package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPythonAsks is TestJavaScriptAsks for a Python tool, through the
// SDK's wasmcp.elicit: on 2025-11-25 the call waits for the answer on the
// session, on 2026-07-28 it ends in an InputRequiredResult and runs again
// with the answer. The runtime imports ask_all for every tool it carries,
// so a module that declares no "client" loads, and its ask is refused
// with code 7 (AskError).
func TestPythonAsks(t *testing.T) {
	dir := t.TempDir()
	buildPython(t, dir, "ask_py", "testdata/ask_py",
		`{"abi":1,"start":"reactor","tools":[{"name":"py_confirm","description":"Asks the user to confirm the removal of a note.","inputSchema":{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]},"output":"json","client":["elicitation"]}],"limits":{"memory":"64MiB"}}`)
	buildPython(t, dir, "noask_py", "testdata/noask_py",
		`{"abi":1,"start":"reactor","tools":[{"name":"py_undeclared","description":"Asks without declaring it.","inputSchema":{"type":"object"},"output":"json"}],"limits":{"memory":"64MiB"}}`)
	s := startHTTPIn(t, dir)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			var asks atomic.Int32
			cs := connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, v, s,
				elicitingClient(&asks, func(context.Context) *mcp.ElicitResult {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
				}))
			if got := text(callTool(t, cs, "py_confirm", map[string]any{"note": "a.txt"})); got != `{"action":"accept","confirm":true}` {
				t.Errorf("py_confirm = %s; want the user's answer", got)
			}
			if n := asks.Load(); n != 1 {
				t.Errorf("the client was asked %d times; want once", n)
			}
			if got := text(callTool(t, cs, "py_undeclared", map[string]any{})); !strings.Contains(got, `"code":7`) {
				t.Errorf("py_undeclared = %s; want its ask refused with code 7", got)
			}
		})
	}
}
