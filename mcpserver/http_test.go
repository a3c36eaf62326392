package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestRouterSendsEachEraToItsHandler(t *testing.T) {
	var got string
	var sawToken string
	rt := &router{
		stateful: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = "stateful" }),
		stateless: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = "stateless"
			sawToken = r.Header.Get(requestTokenHeader)
		}),
		log:     sdkLogger(discard()),
		streams: &sync.Map{},
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
			got, sawToken = "", ""
			req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
			req.Header.Set(requestTokenHeader, "forged")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rt.ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Fatalf("routed to %q; want %q", got, tc.want)
			}
			if got == "stateless" && (sawToken == "" || sawToken == "forged") {
				t.Errorf("stateless request carried token %q; want a fresh one", sawToken)
			}
		})
	}
	empty := true
	rt.streams.Range(func(any, any) bool { empty = false; return false })
	if !empty {
		t.Error("request tokens outlive their requests")
	}
}

func TestCallContextEndsWithItsHTTPRequest(t *testing.T) {
	s := &Server{}
	httpCtx, endRequest := context.WithCancel(context.Background())
	s.streams.Store("tok", httpCtx)
	ctx, cancel := s.callContext(context.Background(), callRequest("tok"))
	defer cancel()
	if ctx.Err() != nil {
		t.Fatal("call context ended before its request")
	}
	endRequest()
	<-ctx.Done()

	// A token with no live request means the request already ended.
	ctx, cancel = s.callContext(context.Background(), callRequest("gone"))
	defer cancel()
	if ctx.Err() == nil {
		t.Error("a call whose request already ended was not cancelled")
	}
	// Without a token (stdio, sessions), the context is left alone.
	ctx, cancel = s.callContext(context.Background(), callRequest(""))
	defer cancel()
	if ctx.Err() != nil {
		t.Error("a call without a token was cancelled")
	}
}
