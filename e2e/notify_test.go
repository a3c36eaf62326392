package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notes collects the notifications a client receives.
type notes struct {
	mu       sync.Mutex
	logs     []*mcp.LoggingMessageParams
	progress []*mcp.ProgressNotificationParams
}

func (n *notes) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.logs = append(n.logs, r.Params)
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.progress = append(n.progress, r.Params)
		},
	}
}

func (n *notes) snapshot() ([]*mcp.LoggingMessageParams, []*mcp.ProgressNotificationParams) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*mcp.LoggingMessageParams(nil), n.logs...), append([]*mcp.ProgressNotificationParams(nil), n.progress...)
}

// connectWithNotes connects a client that records notifications.
func connectWithNotes(t *testing.T, tr mcp.Transport, version string) (*mcp.ClientSession, *notes) {
	t.Helper()
	n := &notes{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wasmcp-e2e", Version: "1"}, n.options()).
		Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, n
}

// forEachNotingClient is forEachClient for clients that record
// notifications. The log level is chosen as each revision allows: by
// logging/setLevel in a 2025-11-25 session, by each request's _meta in
// 2026-07-28 (the returned meta must be sent with every call).
func forEachNotingClient(t *testing.T, level mcp.LoggingLevel, f func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta)) {
	writeHostile(t)
	s := startHTTP(t)
	for _, v := range versions {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(tr+"/"+v, func(t *testing.T) {
				var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: s.url}
				if tr == "stdio" {
					transport = &mcp.CommandTransport{Command: stdioCommand()}
				}
				cs, n := connectWithNotes(t, transport, v)
				meta := mcp.Meta{}
				if v == "2025-11-25" {
					if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: level}); err != nil {
						t.Fatal(err)
					}
				} else {
					meta["io.modelcontextprotocol/logLevel"] = string(level)
				}
				f(t, cs, n, meta)
			})
		}
	}
}

func TestToolLogsReachTheClient(t *testing.T) {
	forEachNotingClient(t, "info", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
			Meta:      meta,
			Name:      "search_invoices",
			Arguments: map[string]any{"startDate": "2026-01-01", "endDate": "2026-12-31"},
		})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %v", err, res)
		}
		// Notifications for a request are sent before its response.
		logs, _ := n.snapshot()
		if len(logs) != 1 || logs[0].Level != "info" || logs[0].Logger != "search_invoices" || !strings.Contains(logs[0].Data.(string), "invoices match") {
			t.Fatalf("logs = %+v; want one info message from search_invoices", logs)
		}
	})
}

func TestLogLevelFiltersToolLogs(t *testing.T) {
	forEachNotingClient(t, "error", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		callWithMeta(t, cs, meta, "search_invoices", map[string]any{"startDate": "2026-01-01", "endDate": "2026-12-31"})
		// A later call that fails proves the earlier one's notifications
		// (had there been any) were delivered: they precede its response.
		callWithMeta(t, cs, meta, "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"})
		if logs, _ := n.snapshot(); len(logs) != 0 {
			t.Fatalf("an info message passed an error-level filter: %+v", logs)
		}
	})
}

func callWithMeta(t *testing.T, cs *mcp.ClientSession, meta mcp.Meta, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}
