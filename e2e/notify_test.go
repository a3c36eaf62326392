package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// notes collects the notifications a client receives. The SDK's client may
// run a notification handler after the call's response has been returned,
// so tests wait for what they expect rather than read it at once.
type notes struct {
	mu       sync.Mutex
	logs     []*mcp.LoggingMessageParams
	progress []*mcp.ProgressNotificationParams
	changed  chan struct{} // closed and replaced on every notification
}

func (n *notes) options() *mcp.ClientOptions {
	n.changed = make(chan struct{})
	return &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.logs = append(n.logs, r.Params)
			n.signal()
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.progress = append(n.progress, r.Params)
			n.signal()
		},
	}
}

func (n *notes) signal() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// waitFor waits until done holds for the notifications received so far.
func (n *notes) waitFor(t *testing.T, what string, done func(logs []*mcp.LoggingMessageParams, progress []*mcp.ProgressNotificationParams) bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		n.mu.Lock()
		ok, changed := done(n.logs, n.progress), n.changed
		n.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitLogs waits until at least count log messages have arrived.
func (n *notes) waitLogs(t *testing.T, count int) []*mcp.LoggingMessageParams {
	t.Helper()
	n.waitFor(t, fmt.Sprintf("%d log messages", count), func(logs []*mcp.LoggingMessageParams, _ []*mcp.ProgressNotificationParams) bool {
		return len(logs) >= count
	})
	logs, _ := n.snapshot()
	return logs
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
		logs := n.waitLogs(t, 1)
		if len(logs) != 1 || logs[0].Level != "info" || logs[0].Logger != "search_invoices" || !strings.Contains(logs[0].Data.(string), "invoices match") {
			t.Fatalf("logs = %+v; want one info message from search_invoices", logs)
		}
	})
}

func TestLogLevelFiltersToolLogs(t *testing.T) {
	forEachNotingClient(t, "error", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		callWithMeta(t, cs, meta, "search_invoices", map[string]any{"startDate": "2026-01-01", "endDate": "2026-12-31"})
		// shout logs at error level: once its message is in, the earlier
		// call's info message, had it passed the filter, was sent long
		// before.
		if res := callWithMeta(t, cs, meta, "shout", nil); res.IsError {
			t.Fatalf("shout failed: %s", text(res))
		}
		logs := n.waitLogs(t, 1)
		if len(logs) != 1 || logs[0].Data != "sentinel" || logs[0].Level != "error" {
			t.Fatalf("logs = %+v; want only shout's error-level sentinel", logs)
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

// TestClientThatDoesNotReadHoldsNoSlot asks for progress from a tool that
// sends 8 MiB of it, over a connection that reads nothing: the tool runs
// to its end all the same, and the only run slot is free for the next
// client.
func TestClientThatDoesNotReadHoldsNoSlot(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "bigprogress", "bigprogress")
	sidecar(t, dir, "bigprogress", `{"abi":1,"tools":[{"name":"bigprogress","description":"8 MiB of progress","inputSchema":{"type":"object"}}]}`)
	wattest.Write(t, dir, "echo", "echo")
	sidecar(t, dir, "echo", `{"abi":1,"tools":[{"name":"echo","description":"echoes","inputSchema":{"type":"object"}}]}`)
	s := startHTTPIn(t, dir, "--concurrency", "1", "--queue-timeout", "1s", "--timeout", "1m", "--prewarm", "0")
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// As small a window as the kernel allows: the server's writes fill it
	// at once.
	if err := conn.(*net.TCPConn).SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bigprogress","arguments":{},` +
		`"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: bigprogress\r\nContent-Length: %d\r\n\r\n%s", u.Path, u.Host, len(body), body)
	s.waitLog(t, "msg=call", "tool=bigprogress", "outcome=ok")
	cs := connectHTTP(t, s, "2026-07-28")
	if res := callTool(t, cs, "echo", map[string]any{"a": 1}); res.IsError || text(res) != `{"a":1}` {
		t.Errorf("the next call = %q (isError %v); want its arguments back", text(res), res.IsError)
	}
}
