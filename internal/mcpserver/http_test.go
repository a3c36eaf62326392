package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"
)

// newTestRouter is a router to the handlers given, with no sessions open,
// room for one, and the default request budget and stream cap.
func newTestRouter(stateful, stateless http.Handler) *router {
	return &router{
		stateful:    stateful,
		stateless:   stateless,
		log:         discard(),
		sessions:    newSessionUse(func() iter.Seq[session] { return slices.Values([]session(nil)) }, 1, discard()),
		bodyTimeout: time.Minute,
		ids:         newIDSwaps(),
		budget:      semaphore.NewWeighted(DefaultRequestBudget),
		budgetSize:  DefaultRequestBudget,
		streams:     semaphore.NewWeighted(DefaultMaxStreams),
		maxStreams:  DefaultMaxStreams,
		lists:       newListAnswers(&catalogVersion{}),
		srv:         &Server{sdkOnly: true},
	}
}

func TestRouterSendsEachEraToItsHandler(t *testing.T) {
	var got string
	rt := newTestRouter(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = "stateful" }),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = "stateless" }))
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name, body string
		header     map[string]string
		want       string
	}{
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil, "stateful"},
		{"modern meta", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, nil, "stateless"},
		{"modern header", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, "stateless"},
		{"legacy header", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, "stateful"},
		{"legacy request without a session", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, ""},
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

// A 2025-11-25 request without a session is refused as the revision says,
// with 400 and a standard code, and the answer says how to get a session.
func TestRouterRefusesLegacyRequestsWithoutASession(t *testing.T) {
	rt := newTestRouter(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("reached the stateful handler") }),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Error("reached the stateless handler") }))
	req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	var got struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("answer %q is not JSON-RPC: %v", rec.Body, err)
	}
	if rec.Code != http.StatusBadRequest || got.Error.Code != -32600 || string(got.ID) != "7" {
		t.Errorf("status %d, code %d, id %s; want 400, -32600, 7", rec.Code, got.Error.Code, got.ID)
	}
	for _, want := range []string{"tools/list needs a session", "send initialize first", "Mcp-Session-Id", "MCP-Protocol-Version: 2026-07-28"} {
		if !strings.Contains(got.Error.Message, want) {
			t.Errorf("message %q does not say %q", got.Error.Message, want)
		}
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
	rt := newTestRouter(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), nil)
	// Three sessions still being initialized: none may be closed.
	live := []session{&fakeSession{id: "a"}, &fakeSession{id: "b"}, &fakeSession{id: "c"}}
	rt.sessions = newSessionUse(func() iter.Seq[session] { return slices.Values(live) }, 3, discard())
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
	reach := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })
	rt := newTestRouter(reach, reach)
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

// TestRouterRefusesBodiesBeyondTheBudget holds most of the request budget
// with a request whose handler waits: a request whose declared length
// does not fit is refused busy before its body is read, and so is one that
// declares none, as it might be as large as any; once the first request
// ends, both are served and give their bytes back.
func TestRouterRefusesBodiesBeyondTheBudget(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hold") != "" {
			entered <- struct{}{}
			<-release
		}
	})
	rt := newTestRouter(handler, handler)
	rt.budget, rt.budgetSize = semaphore.NewWeighted(MaxMessageSize), MaxMessageSize
	held := make(chan struct{})
	go func() {
		req, _ := bodyRequest(3<<20, 3<<20)
		req.Header.Set("X-Hold", "1")
		rt.ServeHTTP(httptest.NewRecorder(), req)
		close(held)
	}()
	<-entered

	for _, tc := range []struct {
		name     string
		declared int
		status   int
	}{
		{"too large for what is left", 2 << 20, http.StatusServiceUnavailable},
		{"of undeclared length", -1, http.StatusServiceUnavailable},
		{"over the size limit", MaxMessageSize + 1, http.StatusRequestEntityTooLarge},
	} {
		req, body := bodyRequest(2<<20, tc.declared)
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, req)
		var reply reply
		json.Unmarshal(rec.Body.Bytes(), &reply)
		if rec.Code != tc.status || reply.Error == nil || rec.Header().Get("Connection") != "close" {
			t.Errorf("a body %s: status %d, Connection %q, body %s; want %d, a JSON-RPC error and the connection closed",
				tc.name, rec.Code, rec.Header().Get("Connection"), rec.Body, tc.status)
		}
		if tc.status == http.StatusServiceUnavailable && (rec.Header().Get("Retry-After") == "" || !strings.Contains(reply.Error.Message, "busy")) {
			t.Errorf("a body %s: Retry-After %q, message %+v; want the server busy", tc.name, rec.Header().Get("Retry-After"), reply.Error)
		}
		if body.read {
			t.Errorf("a body %s was read before it was refused", tc.name)
		}
	}

	close(release)
	<-held
	for _, declared := range []int{2 << 20, -1} {
		rec := httptest.NewRecorder()
		req, _ := bodyRequest(2<<20, declared)
		rt.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("a body of declared length %d once the budget is free: status %d, %s", declared, rec.Code, rec.Body)
		}
	}
	// A body that fails half way gives its bytes back too.
	req := httptest.NewRequest(http.MethodPost, Path, io.MultiReader(strings.NewReader(`{"jsonrpc":`), iotest.ErrReader(iotest.ErrTimeout)))
	req.ContentLength = 2 << 20
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("a body that failed: status %d; want 400", rec.Code)
	}
	if !rt.budget.TryAcquire(MaxMessageSize) {
		t.Error("the budget is not whole once every request has ended")
	}
}

// callOfSize is a tools/call of n bytes.
func callOfSize(n int) string {
	const head, tail = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"`, `"}}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// bodyRequest is a stateless POST of a tools/call of n bytes that declares the
// length declared (-1: none), with its body, which records whether it is
// read.
func bodyRequest(n, declared int) (*http.Request, *watched) {
	body := &watched{r: strings.NewReader(callOfSize(n))}
	req := httptest.NewRequest(http.MethodPost, Path, body)
	req.ContentLength = int64(declared)
	req.Header.Set("Mcp-Protocol-Version", modernVersion) // a request that needs no session
	return req, body
}

// watched is a body that records whether it was read.
type watched struct {
	r    io.Reader
	read bool
}

func (w *watched) Read(p []byte) (int, error) {
	w.read = true
	return w.r.Read(p)
}

// TestRouterCapsLongLivedStreams opens streams up to the cap, a
// subscriptions/listen and a session's GET, whose handlers stay until
// released: the next of either kind is refused with 503 and a JSON-RPC
// error, while other requests are served; once they end, streams open
// again.
func TestRouterCapsLongLivedStreams(t *testing.T) {
	entered := make(chan struct{})
	endListens, endGets := make(chan struct{}), make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet:
			entered <- struct{}{}
			<-endGets
		case strings.Contains(string(body), "subscriptions/listen"):
			entered <- struct{}{}
			<-endListens
		}
	})
	rt := newTestRouter(handler, handler)
	rt.streams, rt.maxStreams = semaphore.NewWeighted(2), 2
	const listen = `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`
	listenReq := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(listen))
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		return req
	}
	getReq := func() *http.Request {
		req := httptest.NewRequest(http.MethodGet, Path, nil)
		req.Header.Set("Mcp-Session-Id", "s")
		return req
	}
	serve := func(req *http.Request) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			rt.ServeHTTP(httptest.NewRecorder(), req)
			close(done)
		}()
		return done
	}
	listened := serve(listenReq())
	<-entered
	got := serve(getReq())
	<-entered

	for _, tc := range []struct {
		name string
		req  *http.Request
		id   string
	}{{"a listen stream", listenReq(), `"l"`}, {"a session's GET stream", getReq(), "null"}} {
		rec := httptest.NewRecorder()
		withJSONErrors(rt).ServeHTTP(rec, tc.req)
		var reply reply
		json.Unmarshal(rec.Body.Bytes(), &reply)
		if rec.Code != http.StatusServiceUnavailable || reply.Error == nil || string(reply.ID) != tc.id || rec.Header().Get("Retry-After") == "" {
			t.Errorf("%s past the cap: status %d, Retry-After %q, body %s; want 503 and a JSON-RPC error with id %s", tc.name, rec.Code, rec.Header().Get("Retry-After"), rec.Body, tc.id)
		}
	}
	rec := httptest.NewRecorder()
	list := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	list.Header.Set("Mcp-Protocol-Version", modernVersion)
	rt.ServeHTTP(rec, list)
	if rec.Code != http.StatusOK {
		t.Errorf("a request at the stream cap: status %d, %s", rec.Code, rec.Body)
	}

	close(endListens)
	<-listened
	close(endGets)
	<-got
	if !rt.streams.TryAcquire(2) {
		t.Error("the streams that ended did not both give their room back")
	}
}

// TestRouterStreamsHoldNoBudget opens a listen stream, which stays open
// for as long as its client likes: it gives its bytes of the request
// budget back as it opens, and one whose request is larger than a
// stream's needs is refused.
func TestRouterStreamsHoldNoBudget(t *testing.T) {
	entered, end := make(chan struct{}), make(chan struct{})
	rt := newTestRouter(nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		entered <- struct{}{}
		<-end
	}))
	rt.budget = semaphore.NewWeighted(MaxMessageSize)
	listen := func(pad int) *http.Request {
		req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"pad":"`+strings.Repeat("x", pad)+`"}}}`))
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		return req
	}
	done := make(chan struct{})
	go func() {
		rt.ServeHTTP(httptest.NewRecorder(), listen(8<<10))
		close(done)
	}()
	<-entered
	if !rt.budget.TryAcquire(MaxMessageSize) {
		t.Error("an open stream holds bytes of the request budget")
	} else {
		rt.budget.Release(MaxMessageSize)
	}
	rec := httptest.NewRecorder()
	withJSONErrors(rt).ServeHTTP(rec, listen(maxStreamRequest))
	var reply reply
	json.Unmarshal(rec.Body.Bytes(), &reply)
	if rec.Code != http.StatusRequestEntityTooLarge || reply.Error == nil || string(reply.ID) != `"l"` {
		t.Errorf("a listen request over %d bytes: status %d, %s; want 413 and a JSON-RPC error with its id", maxStreamRequest, rec.Code, rec.Body)
	}
	close(end)
	<-done
	if !rt.budget.TryAcquire(MaxMessageSize) {
		t.Error("the budget is not whole once the stream has ended")
	}
}
