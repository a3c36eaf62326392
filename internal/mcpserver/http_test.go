package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRouterSendsEachEraToItsHandler(t *testing.T) {
	var got string
	rt := &router{
		stateful:    http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = "stateful" }),
		stateless:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = "stateless" }),
		log:         sdkLogger(discard()),
		sessions:    func() int { return 0 },
		maxSessions: 1,
		bodyTimeout: time.Minute,
		ids:         newIDSwaps(),
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name, body string
		header     map[string]string
		want       string
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil, "stateful"},
		{"modern meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, nil, "stateless"},
		{"modern header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, "stateless"},
		{"legacy header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, "stateful"},
		{"session wins", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, map[string]string{"Mcp-Session-Id": "abc"}, "stateful"},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, "stateful"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = ""
			req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rt.ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Fatalf("routed to %q; want %q", got, tc.want)
			}
		})
	}
}

// TestStatelessCallEndsWithItsHTTPRequest closes the response stream of a
// 2026-07-28 call, the way MCP cancels over HTTP: the call's context ends.
func TestStatelessCallEndsWithItsHTTPRequest(t *testing.T) {
	s := newTestServer(t, nil)
	started, ended, stop := make(chan struct{}), make(chan struct{}), make(chan struct{})
	s.mcp.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(started)
		select {
		case <-ctx.Done():
			close(ended)
		case <-stop: // the test failed
		}
		return &mcp.CallToolResult{}, nil
	})
	srv := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	defer srv.Close()
	defer close(stop)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{},`+modernMeta+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "block",
	} {
		req.Header.Set(k, v)
	}
	called := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		called <- err
	}()
	<-started
	cancel()
	<-called
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the call ran on after its HTTP request ended")
	}
}

func TestRouterRefusesSessionsPastTheLimit(t *testing.T) {
	served := false
	rt := &router{
		stateful:    http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }),
		log:         discard(),
		sessions:    func() int { return 3 },
		maxSessions: 3,
		bodyTimeout: time.Minute,
		ids:         newIDSwaps(),
	}
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`)))
	if served || rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("initialize at the limit: served %v, status %d, Retry-After %q", served, rec.Code, rec.Header().Get("Retry-After"))
	}
	var reply struct {
		ID    int
		Error struct{ Code int }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil || reply.ID != 7 || reply.Error.Code != -32603 {
		t.Errorf("reply = %s", rec.Body)
	}
	// Requests within existing sessions still pass.
	req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`))
	req.Header.Set("Mcp-Session-Id", "s1")
	rt.ServeHTTP(httptest.NewRecorder(), req)
	if !served {
		t.Error("a request in an existing session was refused")
	}
}

func TestBearerTokenIsRequired(t *testing.T) {
	h := RequireBearer("s3cret", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tc := range []struct {
		header string
		want   int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer s3cret ", http.StatusUnauthorized},
		{"Basic s3cret", http.StatusUnauthorized},
		{"Bearer s3cret", http.StatusTeapot},
	} {
		req := httptest.NewRequest(http.MethodPost, Path, nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Authorization %q: status %d; want %d", tc.header, rec.Code, tc.want)
		}
		if rec.Code == http.StatusUnauthorized && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without a Bearer challenge")
		}
	}
}

func TestUnknownNotificationsAreAcceptedAndDropped(t *testing.T) {
	reached := false
	rt := &router{
		stateful:  http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }),
		stateless: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }),
		log:       discard(),
		sessions:  func() int { return 0 }, maxSessions: 1, bodyTimeout: time.Minute, ids: newIDSwaps(),
	}
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/whatever"}`)))
	if rec.Code != http.StatusAccepted || reached || rec.Body.Len() != 0 {
		t.Fatalf("unknown notification: status %d, forwarded %v, body %q; want an empty 202", rec.Code, reached, rec.Body)
	}
	rt.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)))
	if !reached {
		t.Error("notifications/cancelled was not passed to the SDK")
	}
}
