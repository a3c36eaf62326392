package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawClient sends raw JSON-RPC to a server over one transport: stdio, a
// 2025-11-25 HTTP session, or 2026-07-28 stateless HTTP.
type rawClient struct {
	name    string
	stdio   *stdioPeer
	srv     *server // the process, for its log
	url     string
	session string // for 2025-11-25 over HTTP
}

// rawClients starts a stdio server and an HTTP server with extra flags, and
// returns a client for each transport and revision.
func rawClients(t *testing.T, extra ...string) []*rawClient {
	t.Helper()
	p := startStdio(t, extra...)
	p.send(initialize)
	if r := p.recv(); r.Error != nil {
		t.Fatalf("initialize over stdio: %+v", r.Error)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h := startHTTP(t, extra...)
	return []*rawClient{
		{name: "stdio", stdio: p, srv: p.srv},
		{name: "http/2025-11-25", srv: h, url: h.url, session: rawSession(t, h.url)},
		{name: "http/2026-07-28", srv: h, url: h.url},
	}
}

// rawSession initializes a 2025-11-25 session over HTTP and returns its id.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	status, r, h := post(t, url, initialize, nil)
	if status != http.StatusOK || r.Error != nil || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize over HTTP: status %d, error %+v", status, r.Error)
	}
	session := h.Get("Mcp-Session-Id")
	post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
	return session
}

// request sends a request with this id, method and params members (without
// their braces) and returns the HTTP status (0 over stdio) and the reply. A
// tools/call or prompts/get names its tool or prompt in its first member,
// a resources/read its URI.
func (c *rawClient) request(t *testing.T, id, method, params string) (int, rpcReply) {
	t.Helper()
	var header map[string]string
	switch {
	case c.session != "":
		header = map[string]string{"Mcp-Session-Id": c.session, "Mcp-Protocol-Version": "2025-11-25"}
	case c.url != "":
		header = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
		var name string
		switch method {
		case "tools/call", "prompts/get":
			fmt.Sscanf(params, `"name":%q`, &name)
		case "resources/read":
			fmt.Sscanf(params, `"uri":%q`, &name)
		}
		if name != "" {
			header["Mcp-Name"] = name
		}
		params = strings.TrimPrefix(params+","+modernMeta, ",")
	}
	msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params + `}}`
	if c.stdio != nil {
		p := c.peer(t)
		p.send(msg)
		return 0, p.recvReply()
	}
	status, r, _ := post(t, c.url, msg, header)
	return status, r
}

// peer is the stdio peer, failing t on a broken connection: t may be a
// subtest of the test that started the server.
func (c *rawClient) peer(t *testing.T) *stdioPeer {
	c.stdio.t = t
	return c.stdio
}

// recvReply reads the next reply, passing over the server's notifications
// (the tool list may change as other tests write modules).
func (p *stdioPeer) recvReply() rpcReply {
	p.t.Helper()
	for {
		if r := p.recv(); r.Result != nil || r.Error != nil {
			return r
		}
	}
}

// callCalculate calls calculate with id, and checks that the answer is its
// result with the id it was sent with.
func (c *rawClient) callCalculate(t *testing.T, id string) {
	t.Helper()
	status, r := c.request(t, id, "tools/call", `"name":"calculate","arguments":{"a":2,"b":3,"operation":"add"}`)
	if r.Error != nil || !strings.Contains(string(r.Result), `"5.0"`) || string(r.ID) != id {
		t.Fatalf("%s: calculate with id %s: status %d, id %s, result %s, error %+v", c.name, id, status, r.ID, r.Result, r.Error)
	}
}

// TestRefusalsTheSDKCouldNotGive sends what the SDK cannot read (nesting
// past its depth limit, a number beyond float64) or would refuse in plain
// text (a notification with an id), over every transport. Each gets a
// JSON-RPC error with its id, and the connection goes on.
func TestRefusalsTheSDKCouldNotGive(t *testing.T) {
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	for _, c := range rawClients(t) {
		t.Run(c.name, func(t *testing.T) {
			for _, tc := range []struct {
				name, id, method, params string
				code                     int
			}{
				{"arguments nested 1,000 deep", "11", "tools/call", `"name":"calculate","arguments":{"a":` + deep + `,"b":1,"operation":"add"}`, -32600},
				{"a number beyond float64", "12", "tools/call", `"name":"calculate","arguments":{"a":1e400,"b":1,"operation":"add"}`, -32602},
				{"a notification with an id", "13", "notifications/initialized", ``, -32600},
			} {
				status, r := c.request(t, tc.id, tc.method, tc.params)
				checkReply(t, tc.name, r, tc.code, tc.id)
				if c.stdio == nil && status != http.StatusBadRequest {
					t.Errorf("%s: status %d; want 400", tc.name, status)
				}
				c.callCalculate(t, "14")
			}
		})
	}
}

// TestEveryIDComesBack sends requests with ids the SDK would change on its
// own (integers past 2^53, which it holds as float64; -0; strings it spells
// otherwise) over every transport, in answers with results and with
// errors, as JSON and as event streams. Each comes back byte for byte.
func TestEveryIDComesBack(t *testing.T) {
	ids := []string{`9007199254740993`, `9223372036854775807`, `-9223372036854775808`, `-0`, `"\u0061"`, `"a\/b"`, `"é<&>"`, `"wasmcp-id:1"`, `42`, `"plain"`}
	for _, c := range rawClients(t) {
		t.Run(c.name, func(t *testing.T) {
			for _, id := range ids {
				c.callCalculate(t, id)
				// An unknown method: a JSON error over HTTP in 2026-07-28, a
				// plain-text refusal turned JSON-RPC in 2025-11-25 sessions.
				status, r := c.request(t, id, "no/such", ``)
				if string(r.ID) != id || r.Error == nil || r.Error.Code != -32601 {
					t.Errorf("unknown method with id %s: status %d, id %s, error %+v", id, status, r.ID, r.Error)
				}
			}
		})
	}
}

// TestCancellingARequestWithABigID cancels a call whose id the server
// swapped, by notifications/cancelled naming the client's id: the call
// stops.
func TestCancellingARequestWithABigID(t *testing.T) {
	writeSpin(t)
	for _, c := range rawClients(t, "--log-level", "debug", "--timeout", "1h") {
		if c.session == "" && c.stdio == nil {
			continue // 2026-07-28 cancels by closing the stream; see TestCancellationStopsTheInstance
		}
		t.Run(c.name, func(t *testing.T) {
			const id = `9223372036854775807`
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			spin := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"spin","arguments":{}}}`
			cancelled := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`
			if c.stdio != nil {
				c.peer(t).send(spin)
				c.srv.waitLog(t, "run started", "tool=spin")
				c.peer(t).send(cancelled)
			} else {
				header := map[string]string{"Mcp-Session-Id": c.session, "Mcp-Protocol-Version": "2025-11-25"}
				go postContext(ctx, c.url, spin, header)
				c.srv.waitLog(t, "run started", "tool=spin")
				if status, _, _ := post(t, c.url, cancelled, header); status != http.StatusAccepted {
					t.Fatalf("notifications/cancelled: status %d; want 202", status)
				}
			}
			c.srv.waitLog(t, "msg=call", "tool=spin", "outcome=cancelled")
			if c.stdio != nil {
				// The cancelled call draws no answer, and its id is free
				// again once that answer is dropped.
				c.srv.waitLog(t, "answer dropped: the client cancelled the request")
			}
			c.srv.stderr.reset()
			c.callCalculate(t, id)
		})
	}
}

// postContext posts body and reads the answer to its end, or until ctx
// ends.
func postContext(ctx context.Context, url, body string, header map[string]string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestEveryHTTPRefusalIsJSONRPC walks the ways a request over HTTP is
// refused, before the SDK, by it, and around it (the bearer token, the
// cross-origin check): each answer keeps its status and headers and is a
// JSON-RPC error with the request's id, or null where it is not known.
func TestEveryHTTPRefusalIsJSONRPC(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("a-long-enough-test-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	authed := startHTTP(t, "--auth-token-file", tokenFile)
	s := startHTTP(t, "--max-sessions", "1")
	session := rawSession(t, s.url)
	inSession := func(h map[string]string) map[string]string {
		out := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	// The session's stream stays open: the session is in use, so a new
	// one past --max-sessions is refused rather than closing it.
	stream := send(t, "GET", s.url, "", inSession(map[string]string{"Accept": "text/event-stream"}))
	defer stream.Body.Close()
	const ping = `{"jsonrpc":"2.0","id":"p","method":"ping"}`
	for _, tc := range []struct {
		name, url, method, body string
		header                  map[string]string
		status, code            int
		id                      string
		keep                    map[string]string // headers the answer keeps, by a prefix of their value
	}{
		{"no bearer token", authed.url, "POST", ping, nil, 401, -32600, "null", map[string]string{"WWW-Authenticate": "Bearer"}},
		{"cross-origin request", s.url, "POST", ping, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, -32600, "null", nil},
		{"foreign Host", s.url, "POST", ping, map[string]string{"Host": "evil.example"}, 403, -32600, `"p"`, nil},
		{"GET without a session", s.url, "GET", "", nil, 405, -32600, "null", map[string]string{"Allow": "POST"}},
		{"body over 4 MiB", s.url, "POST", `{"pad":"` + strings.Repeat("x", 5<<20) + `"}`, nil, 413, -32600, "null", nil},
		{"not JSON", s.url, "POST", `{"jsonrpc"`, nil, 400, -32700, "null", nil},
		{"wrong Content-Type", s.url, "POST", ping, map[string]string{"Content-Type": "text/plain"}, 415, -32600, `"p"`, nil},
		{"Accept without event streams", s.url, "POST", ping, map[string]string{"Accept": "application/json"}, 400, -32600, `"p"`, nil},
		{"unsupported protocol version header", s.url, "POST", ping, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, 400, -32600, `"p"`, nil},
		{"unknown session", s.url, "POST", ping, map[string]string{"Mcp-Session-Id": "no-such-session"}, 404, -32600, `"p"`, nil},
		{"DELETE of an unknown session", s.url, "DELETE", "", map[string]string{"Mcp-Session-Id": "no-such-session"}, 404, -32600, "null", nil},
		{"PUT in a session", s.url, "PUT", "", inSession(nil), 405, -32600, "null", map[string]string{"Allow": "GET, POST, DELETE"}},
		{"GET in a session without event streams", s.url, "GET", "", inSession(map[string]string{"Accept": "application/json"}), 400, -32600, "null", nil},
		{"POST in a session with Last-Event-ID", s.url, "POST", ping, inSession(map[string]string{"Last-Event-ID": "s_1"}), 400, -32600, `"p"`, nil},
		{"unknown method in a session", s.url, "POST", `{"jsonrpc":"2.0","id":"u","method":"no/such"}`, inSession(nil), 400, -32601, `"u"`, nil},
		{"a session past --max-sessions", s.url, "POST", strings.Replace(initialize, `"id":0`, `"id":"i"`, 1), nil, 503, -32603, `"i"`, map[string]string{"Retry-After": "60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, tc.method, tc.url, tc.body, tc.header)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var r struct {
				JSONRPC string
				rpcReply
			}
			if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("status %d, Content-Type %q, body %q; want %d with a JSON body", resp.StatusCode, resp.Header.Get("Content-Type"), raw, tc.status)
			}
			if err := json.Unmarshal(raw, &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil || r.Error.Message == "" {
				t.Fatalf("body %q is not a JSON-RPC error", raw)
			}
			checkReply(t, tc.name, r.rpcReply, tc.code, tc.id)
			for k, prefix := range tc.keep {
				if got := resp.Header.Get(k); !strings.HasPrefix(got, prefix) {
					t.Errorf("%s = %q; want %q", k, got, prefix)
				}
			}
		})
	}
}

// send makes one HTTP request to the MCP endpoint, with the headers a
// client sends unless header replaces them.
func send(t *testing.T, method, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestIdleConnectionsDoNotLockOutNewClients fills --max-connections with
// idle keep-alive connections: a new client's request is still answered,
// well before the 2 minutes after which the server closes idle
// connections itself.
func TestIdleConnectionsDoNotLockOutNewClients(t *testing.T) {
	const max = 8
	s := startHTTP(t, "--max-connections", fmt.Sprint(max))
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	for range max {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 4096)
		if n, err := c.Read(buf); err != nil || !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 200")) {
			t.Fatalf("a kept-alive connection's request: %q, %v", buf[:n], err)
		}
	}
	// A fresh client, whose only connection is new; the timeout only
	// guards against a hang, and is shorter than the idle timeout.
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	resp, err := client.Get("http://" + host + "/healthz")
	if err != nil {
		t.Fatalf("a new client with %d idle connections open: %v", max, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a new client's request: status %d; want 200", resp.StatusCode)
	}
}
