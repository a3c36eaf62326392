package e2e

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancellationStopsTheInstance starts a call that would spin for an hour
// and cancels it from the client: by notifications/cancelled over stdio and
// in 2025-11-25 HTTP sessions, by closing the response stream in 2026-07-28
// over HTTP. The server must stop the instance and say so in its log.
func TestCancellationStopsTheInstance(t *testing.T) {
	writeSpin(t)
	httpServer := startHTTP(t, "--log-level", "debug", "--timeout", "1h")
	for _, tr := range []string{"stdio", "http"} {
		for _, v := range versions {
			t.Run(tr+"/"+v, func(t *testing.T) {
				s, cs := httpServer, (*mcp.ClientSession)(nil)
				if tr == "stdio" {
					cs, s = connectStdioLog(t, v, "--log-level", "debug", "--timeout", "1h")
				} else {
					cs = connectHTTP(t, s, v)
				}
				cancelSpin(t, s, cs)
			})
		}
	}
}

func cancelSpin(t *testing.T, s *server, cs *mcp.ClientSession) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "spin"})
		done <- err
	}()
	s.waitLog(t, "run started", "tool=spin")
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	s.waitLog(t, "msg=call", "tool=spin", "outcome=cancelled")
	s.stderr.reset()
	if res := callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
		t.Errorf("after cancelling, calculate = %q", text(res))
	}
}
