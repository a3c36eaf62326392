package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJavaScriptAsks runs a JavaScript tool that elicits, through the
// SDK's elicit(), on both revisions: on 2025-11-25 the call waits for the
// answer on the session, on 2026-07-28 it ends in an InputRequiredResult
// and runs again with the answer (the SDK client does both). The runtime
// imports ask_all for every tool it carries, so a module that declares no
// "client" loads, and its tool's ask is refused with code 7.
func TestJavaScriptAsks(t *testing.T) {
	dir := buildJS(t, "ask_js")
	copyFile(t, filepath.Join(buildJS(t, "noask_js"), "noask_js.wasm"), filepath.Join(dir, "noask_js.wasm"))
	checkAsks(t, startHTTPIn(t, dir), "js_confirm", "js_undeclared")
}

// checkAsks calls confirm, a tool that elicits a confirmation of a note's
// removal, and undeclared, one whose module declares no "client" and asks
// all the same, on both revisions: the first gets the user's answer, once
// asked; the second's ask is refused with code 7.
func checkAsks(t *testing.T, s *server, confirm, undeclared string) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			var asks atomic.Int32
			cs := connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, v, s,
				elicitingClient(&asks, func(context.Context) *mcp.ElicitResult {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
				}))
			if got := text(callTool(t, cs, confirm, map[string]any{"note": "a.txt"})); got != `{"action":"accept","confirm":true}` {
				t.Errorf("%s = %s; want the user's answer", confirm, got)
			}
			if n := asks.Load(); n != 1 {
				t.Errorf("the client was asked %d times; want once", n)
			}
			if got := text(callTool(t, cs, undeclared, map[string]any{})); !strings.Contains(got, `"code":7`) {
				t.Errorf("%s = %s; want its ask refused with code 7", undeclared, got)
			}
		})
	}
}
