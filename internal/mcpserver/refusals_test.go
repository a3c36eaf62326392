package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// refusal is one way a request over HTTP is refused, and the answer it
// must get: its status, headers, and a JSON-RPC error with this code and
// id.
type refusal struct {
	name    string
	method  string // GET, POST, ...; POST if empty
	body    string
	header  map[string]string
	status  int
	code    int
	id      string            // "null" if the request's id is unknown
	headers map[string]string // headers the answer keeps, by a prefix of their value
}

const ping = `{"jsonrpc":"2.0","id":"p","method":"ping"}`

// refusals lists every refusal path of the MCP endpoint but the bearer
// token's; session is replaced by a live session's id.
func refusals(session string) []refusal {
	s := func(h map[string]string) map[string]string {
		out := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	modern := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	modernList := `{"jsonrpc":"2.0","id":"m","method":"tools/list","params":{` + modernMeta + `}}`
	return []refusal{
		// The router and the guard in front of the SDK.
		{name: "GET without a session", method: http.MethodGet, status: 405, code: -32600, id: "null", headers: map[string]string{"Allow": "POST"}},
		{name: "DELETE without a session", method: http.MethodDelete, status: 405, code: -32600, id: "null", headers: map[string]string{"Allow": "POST"}},
		{name: "body that is not JSON", body: `{"jsonrpc":`, status: 400, code: -32700, id: "null"},
		{name: "body over the size limit", body: `{"pad":"` + strings.Repeat("x", MaxMessageSize) + `"}`, status: 413, code: -32600, id: "null"},
		{name: "notification with an id", body: `{"jsonrpc":"2.0","id":"n","method":"notifications/initialized"}`, status: 400, code: -32600, id: `"n"`},
		{name: "nested too deep", body: `{"jsonrpc":"2.0","id":"d","method":"ping","params":{"a":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}`, status: 400, code: -32600, id: `"d"`},
		{name: "number beyond float64", body: `{"jsonrpc":"2.0","id":"f","method":"ping","params":{"a":1e400}}`, status: 400, code: -32602, id: `"f"`},
		{name: "request without a session", body: `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, header: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}, status: 400, code: -32600, id: `"l"`},
		{name: "cross-origin request", body: ping, header: map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, status: 403, code: -32600, id: "null"},

		// The SDK's own refusals, which it writes in plain text.
		{name: "foreign Host", body: ping, header: map[string]string{"Host": "evil.example"}, status: 403, code: -32600, id: `"p"`},
		{name: "unsupported protocol version", body: ping, header: map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, status: 400, code: -32600, id: `"p"`},
		{name: "wrong Content-Type", body: ping, header: map[string]string{"Content-Type": "text/plain"}, status: 415, code: -32600, id: `"p"`},
		{name: "wrong Content-Type, stateless", body: modernList, header: merge(modern, map[string]string{"Content-Type": "text/plain"}), status: 415, code: -32600, id: `"m"`},
		{name: "Accept without event streams", body: ping, header: map[string]string{"Accept": "application/json"}, status: 400, code: -32600, id: `"p"`},
		{name: "Accept without event streams, stateless", body: modernList, header: merge(modern, map[string]string{"Accept": "application/json"}), status: 400, code: -32600, id: `"m"`},
		{name: "unknown session", body: ping, header: map[string]string{"Mcp-Session-Id": "no-such-session"}, status: 404, code: -32600, id: `"p"`},
		{name: "GET of an unknown session", method: http.MethodGet, header: map[string]string{"Mcp-Session-Id": "no-such-session", "Accept": "text/event-stream"}, status: 404, code: -32600, id: "null"},
		{name: "DELETE of an unknown session", method: http.MethodDelete, header: map[string]string{"Mcp-Session-Id": "no-such-session"}, status: 404, code: -32600, id: "null"},
		{name: "PUT in a session", method: http.MethodPut, header: s(nil), status: 405, code: -32600, id: "null", headers: map[string]string{"Allow": "GET, POST, DELETE"}},
		{name: "GET in a session without event streams", method: http.MethodGet, header: s(map[string]string{"Accept": "application/json"}), status: 400, code: -32600, id: "null"},
		{name: "GET in a session resuming a malformed event", method: http.MethodGet, header: s(map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "x"}), status: 400, code: -32600, id: "null"},
		{name: "GET in a session resuming an event", method: http.MethodGet, header: s(map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "s_1"}), status: 400, code: -32600, id: "null"},
		{name: "POST in a session with Last-Event-ID", body: ping, header: s(map[string]string{"Last-Event-ID": "s_1"}), status: 400, code: -32600, id: `"p"`},
		{name: "unknown method in a session", body: `{"jsonrpc":"2.0","id":"u","method":"no/such"}`, header: s(nil), status: 400, code: -32601, id: `"u"`},
		{name: "request without its params in a session", body: `{"jsonrpc":"2.0","id":"c","method":"tools/call"}`, header: s(nil), status: 400, code: -32600, id: `"c"`},

		// Refusals the SDK already writes as JSON-RPC errors.
		{name: "unknown method, stateless", body: `{"jsonrpc":"2.0","id":"u","method":"no/such","params":{` + modernMeta + `}}`, header: map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "no/such"}, status: 404, code: -32601, id: `"u"`},
		{name: "header mismatch, stateless", body: modernList, header: merge(modern, map[string]string{"Mcp-Method": "tools/call"}), status: 400, code: -32020, id: `"m"`},
		{name: "modern request in a session", body: modernList, header: s(map[string]string{"Mcp-Protocol-Version": "2026-07-28"}), status: 400, code: -32022, id: `"m"`},
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// checkRefusal sends tc to url and checks its answer.
func checkRefusal(t *testing.T, url string, tc refusal) {
	t.Helper()
	method := tc.method
	if method == "" {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, url, strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range tc.header {
		if k == "Host" {
			req.Host = v
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		JSONRPC string
		ID      json.RawMessage
		Error   *struct {
			Code    int
			Message string
		}
	}
	decodeErr := json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != tc.status || mediaType(resp.Header.Get("Content-Type")) != "application/json" || decodeErr != nil {
		t.Fatalf("status %d, Content-Type %q, body error %v; want %d with a JSON body", resp.StatusCode, resp.Header.Get("Content-Type"), decodeErr, tc.status)
	}
	if body.JSONRPC != "2.0" || body.Error == nil || body.Error.Code != tc.code || body.Error.Message == "" || string(body.ID) != tc.id {
		t.Errorf("answer = jsonrpc %q, id %s, error %+v; want a JSON-RPC error %d with id %s", body.JSONRPC, body.ID, body.Error, tc.code, tc.id)
	}
	for k, prefix := range tc.headers {
		if got := resp.Header.Get(k); !strings.HasPrefix(got, prefix) {
			t.Errorf("%s = %q; want %q", k, got, prefix)
		}
	}
}

func TestEveryHTTPRefusalIsJSONRPC(t *testing.T) {
	s := newTestServer(t, nil)
	srv := httptest.NewServer(s.HTTPHandler(HTTPOptions{MaxSessions: 1}))
	defer srv.Close()
	session := startSession(t, srv.URL)
	for _, tc := range refusals(session) {
		t.Run(tc.name, func(t *testing.T) { checkRefusal(t, srv.URL, tc) })
	}
	t.Run("a session past the limit", func(t *testing.T) {
		// The one session has its stream open: it is in use, and not
		// closed to make room.
		stop := openStream(t, srv.URL, session)
		defer stop()
		checkRefusal(t, srv.URL, refusal{
			body:   `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			status: 503, code: -32603, id: `"i"`, headers: map[string]string{"Retry-After": "60"},
		})
	})

	authed := httptest.NewServer(s.HTTPHandler(HTTPOptions{AuthToken: "a-long-enough-token"}))
	defer authed.Close()
	t.Run("no bearer token", func(t *testing.T) {
		checkRefusal(t, authed.URL, refusal{body: ping, status: 401, code: -32600, id: "null", headers: map[string]string{"WWW-Authenticate": "Bearer"}})
	})
	t.Run("a body that fails to arrive", func(t *testing.T) {
		rt := newTestRouter(nil, nil)
		rec := httptest.NewRecorder()
		withJSONErrors(rt).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, iotest.ErrReader(iotest.ErrTimeout)))
		var body struct {
			ID    json.RawMessage
			Error struct{ Code int }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 400 || string(body.ID) != "null" || body.Error.Code != -32600 {
			t.Errorf("status %d, body %s", rec.Code, rec.Body)
		}
	})
}

func TestJSONErrorsLeavesOtherAnswersAlone(t *testing.T) {
	for _, tc := range []struct {
		name        string
		contentType string
		status      int
		body        string
	}{
		{"success", "text/event-stream", 200, "event: message\ndata: {}\n\n"},
		{"accepted", "", 202, ""},
		{"JSON error", "application/json", 400, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}`},
		{"JSON error with parameters", "application/json; charset=utf-8", 404, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := &jsonErrors{ResponseWriter: rec, id: json.RawMessage(`1`)}
			if tc.contentType != "" {
				w.Header().Set("Content-Type", tc.contentType)
			}
			w.WriteHeader(tc.status)
			w.Write([]byte(tc.body))
			w.finish()
			if rec.Code != tc.status || rec.Body.String() != tc.body {
				t.Errorf("answer = %d %q; want %d %q", rec.Code, rec.Body, tc.status, tc.body)
			}
		})
	}
	t.Run("long refusal text is cut", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := &jsonErrors{ResponseWriter: rec}
		http.Error(w, strings.Repeat("x", 10*maxRefusalText), http.StatusBadRequest)
		w.finish()
		var body struct{ Error struct{ Message string } }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || len(body.Error.Message) != maxRefusalText {
			t.Errorf("body of %d bytes, message of %d; want a message of %d", rec.Body.Len(), len(body.Error.Message), maxRefusalText)
		}
	})
}

// openStream opens session's GET stream, and returns what closes it.
func openStream(t *testing.T, url, session string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("opening a session's stream: %v, %v", resp, err)
	}
	return func() {
		cancel()
		resp.Body.Close()
	}
}
