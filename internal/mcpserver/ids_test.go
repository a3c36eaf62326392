package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
)

// clientIDs are request ids a client may send: the first few the SDK gives
// back unchanged, the rest only with the id swap.
var clientIDs = []string{
	`7`, `"plain"`,
	`9007199254740993`, `9223372036854775807`, `-9223372036854775808`, `-0`,
	`"\u0061"`, `"a\/b"`, `"é"`, "\"\u2028\"", `"wasmcp-id:1"`,
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// stdioPeer is a client of an in-process ServeStdio, line by line.
type stdioPeer struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
}

func startStdio(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	p := startStdioBare(t, s)
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.recv()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// startStdioBare is startStdio without the handshake.
func startStdioBare(t *testing.T, s *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW, StdioOptions{DrainTimeout: time.Minute}) }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		if err := <-done; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
	})
	return &stdioPeer{t: t, in: inW, out: bufio.NewReader(outR)}
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// reply is the part of a JSON-RPC response the tests check; ID keeps the
// bytes as they were written.
type reply struct {
	ID     json.RawMessage
	Result json.RawMessage
	Error  *struct {
		Code    int
		Message string
	}
}

func (p *stdioPeer) recv() reply {
	p.t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("reading a reply: %v", err)
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		p.t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

// answer reads lines until a response, and returns it as written.
func (p *stdioPeer) answer() string {
	p.t.Helper()
	all := p.until()
	return all[strings.LastIndex(all[:len(all)-1], "\n")+1:]
}

// until reads lines until a response, and returns them all as written.
func (p *stdioPeer) until() string {
	p.t.Helper()
	var lines strings.Builder
	for {
		line, err := p.out.ReadBytes('\n')
		if err != nil {
			p.t.Fatalf("reading a reply: %v", err)
		}
		lines.Write(line)
		var m struct{ ID json.RawMessage }
		if json.Unmarshal(line, &m) == nil && m.ID != nil {
			return lines.String()
		}
	}
}

func TestServeStdioGivesEveryIDBack(t *testing.T) {
	p := startStdio(t, newTestServer(t, nil))
	for _, id := range clientIDs {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if r := p.recv(); string(r.ID) != id || r.Error != nil {
			t.Errorf("ping with id %s: answered with id %s, error %+v", id, r.ID, r.Error)
		}
		// An error the SDK answers with carries the id too.
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such"}`)
		if r := p.recv(); string(r.ID) != id || r.Error == nil || r.Error.Code != -32601 {
			t.Errorf("unknown method with id %s: answered with id %s, error %+v", id, r.ID, r.Error)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`)
	if r := p.recv(); string(r.ID) != `9223372036854775807` || !strings.Contains(string(r.Result), `{\"n\":1}`) {
		t.Errorf("call with the largest id: id %s, result %s", r.ID, r.Result)
	}
}

// TestServeStdioRefusesWhatTheSDKCannotRead sends what the SDK would close
// the connection on, or fail to decode: each gets a JSON-RPC error with
// its id, and the connection goes on.
func TestServeStdioRefusesWhatTheSDKCannotRead(t *testing.T) {
	p := startStdio(t, newTestServer(t, nil))
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	for _, tc := range []struct {
		id, msg string
		code    int
	}{
		{`1`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":` + deep + `}}}`, -32600},
		{`2`, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":1e400}}}`, -32602},
		{`3`, `{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`, -32600},
		// A response whose error the SDK cannot decode: the guard does not
		// read a response's members.
		{`4`, `{"jsonrpc":"2.0","id":4,"error":1}`, -32600},
	} {
		p.send(tc.msg)
		if r := p.recv(); string(r.ID) != tc.id || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%.60s…: id %s, error %+v; want id %s, code %d", tc.msg, r.ID, r.Error, tc.id, tc.code)
		}
		p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		if r := p.recv(); string(r.ID) != `"after"` || r.Error != nil {
			t.Fatalf("ping after %.60s…: id %s, error %+v", tc.msg, r.ID, r.Error)
		}
	}
}

func TestCancellationNamesTheSwappedID(t *testing.T) {
	ids := newIDSwaps()
	sub := ids.substitute("s1", json.RawMessage(`9223372036854775807`))
	cancel := func(requestID string) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + requestID + `,"reason":"r"}}`)
	}
	params := func(msg []byte) json.RawMessage {
		var m struct{ Params json.RawMessage }
		json.Unmarshal(msg, &m)
		return m.Params
	}
	for _, tc := range []struct {
		name, scope, requestID string
		wantRequestID          string // in the message passed on; "" if dropped
	}{
		{"swapped id", "s1", `9223372036854775807`, string(sub)},
		{"swapped id in another session", "s2", `9223372036854775807`, ""},
		{"id never sent", "s1", `9223372036854775806`, ""},
		{"plain id", "s1", `5`, `5`},
		{"not an id", "s1", `{}`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := cancel(tc.requestID)
			out := ids.cancelled(tc.scope, msg, params(msg))
			if tc.wantRequestID == "" {
				if out != nil {
					t.Fatalf("passed on %s; want it dropped", out)
				}
				return
			}
			var got struct{ RequestID json.RawMessage }
			if err := json.Unmarshal(params(out), &got); err != nil || string(got.RequestID) != tc.wantRequestID || !bytes.Contains(out, []byte(`"reason":"r"`)) {
				t.Fatalf("passed on %s; want requestId %s and the rest unchanged", out, tc.wantRequestID)
			}
		})
	}
	// Once forgotten, the id names no request in flight.
	ids.forget(sub)
	if out := ids.cancelled("s1", cancel(`9223372036854775807`), params(cancel(`9223372036854775807`))); out != nil {
		t.Errorf("after forget, a cancellation naming the id was passed on: %s", out)
	}
	var subID string
	json.Unmarshal(sub, &subID)
	id, _ := jsonrpc.MakeID(subID)
	if _, ok := ids.answered(id); ok {
		t.Error("after forget, the substitute still has a swap")
	}
}

// TestAnsweredGivesTheClientsIDBackOnce answers, as the SDK does over
// stdio, a request whose id was swapped, one whose id was not, and the
// swapped one again.
func TestAnsweredGivesTheClientsIDBackOnce(t *testing.T) {
	ids := newIDSwaps()
	const big = `9223372036854775807`
	var sub string
	if err := json.Unmarshal(ids.substitute("", json.RawMessage(big)), &sub); err != nil {
		t.Fatal(err)
	}
	id := func(v any) jsonrpc.ID {
		id, err := jsonrpc.MakeID(v)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	if got, ok := ids.answered(id(sub)); !ok || string(got) != big {
		t.Fatalf("answered(%s) = %s, %v; want %s", sub, got, ok, big)
	}
	for _, other := range []any{sub, "plain", float64(7), guard.SubstitutePrefix + "99"} {
		if got, ok := ids.answered(id(other)); ok {
			t.Errorf("answered(%v) = %s; want no swap", other, got)
		}
	}
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + big + `}}`)
	if out := ids.cancelled("", cancel, json.RawMessage(`{"requestId":`+big+`}`)); out != nil {
		t.Errorf("after the answer, a cancellation naming the id was passed on: %s", out)
	}
}

func TestRestoreIDRewritesOnlyTheResponse(t *testing.T) {
	const sub, id = `"wasmcp-id:9"`, `9223372036854775807`
	t.Run("event stream", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := &restoreID{ResponseWriter: rec, subs: map[string]json.RawMessage{sub: json.RawMessage(id)}}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Length", "1")
		w.WriteHeader(http.StatusOK)
		events := []string{
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":" + sub + "}}\n\n",
			"event: message\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + sub + ",\"result\":{\"s\":" + sub + "}}\n\n",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + sub + ",\"result\":{}}\n\n",
		}
		all := strings.Join(events, "")
		// Written in pieces that split events and lines.
		for i := 0; i < len(all); i += 7 {
			w.Write([]byte(all[i:min(i+7, len(all))]))
			w.Flush()
		}
		w.finish()
		want := events[0] + strings.Replace(events[1], `"id":`+sub, `"id":`+id, 1) + events[2]
		if got := rec.Body.String(); got != want {
			t.Errorf("stream =\n%s\nwant\n%s", got, want)
		}
		if rec.Header().Get("Content-Length") != "" {
			t.Error("Content-Length kept though the body changed")
		}
	})
	t.Run("JSON body", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := &restoreID{ResponseWriter: rec, subs: map[string]json.RawMessage{sub: json.RawMessage(id)}}
		w.Header().Set("Content-Type", "application/json")
		body := `{"jsonrpc":"2.0","id":` + sub + `,"error":{"code":-32601,"message":"m"}}`
		w.Write([]byte(body[:10]))
		w.Write([]byte(body[10:]))
		w.finish()
		if got, want := rec.Body.String(), strings.Replace(body, sub, id, 1); got != want {
			t.Errorf("body = %s; want %s", got, want)
		}
	})
	t.Run("other bodies", func(t *testing.T) {
		rec := httptest.NewRecorder()
		w := &restoreID{ResponseWriter: rec, subs: map[string]json.RawMessage{sub: json.RawMessage(id)}}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(sub))
		w.finish()
		if rec.Body.String() != sub {
			t.Errorf("body = %s; want it unchanged", rec.Body)
		}
	})
}

// postResponse posts body to the MCP endpoint at url, with the headers
// given, and returns the response, its body unread.
func postResponse(t *testing.T, url, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// httpPost posts body to the MCP endpoint at url and returns the status,
// the headers and the JSON-RPC message of the answer: the body, or the
// data of its last event.
func httpPost(t *testing.T, url, body string, header map[string]string) (int, http.Header, reply) {
	t.Helper()
	resp := postResponse(t, url, body, header)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		i := bytes.LastIndex(raw, []byte("data: "))
		if i < 0 {
			t.Fatalf("event stream without data: %q", raw)
		}
		raw, _, _ = bytes.Cut(raw[i+len("data: "):], []byte("\n"))
	}
	var r reply
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("answer %q is not JSON-RPC: %v", raw, err)
		}
	}
	return resp.StatusCode, resp.Header, r
}

// startSession initializes a 2025-11-25 session and returns its id.
func startSession(t *testing.T, url string) string {
	t.Helper()
	status, h, r := httpPost(t, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	if status != http.StatusOK || r.Error != nil || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: status %d, error %+v", status, r.Error)
	}
	session := h.Get("Mcp-Session-Id")
	httpPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"})
	return session
}

func TestHTTPGivesEveryIDBack(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t, nil).HTTPHandler(HTTPOptions{}))
	defer srv.Close()
	session := map[string]string{"Mcp-Session-Id": startSession(t, srv.URL), "Mcp-Protocol-Version": "2025-11-25"}
	modern := func(method string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": "echo"}
	}
	for _, id := range clientIDs {
		for _, tc := range []struct {
			name, body string
			header     map[string]string
			wantStatus int
		}{
			{"stateless call (events)", `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{},` + modernMeta + `}}`, modern("tools/call"), http.StatusOK},
			{"stateless unknown method (JSON)", `{"jsonrpc":"2.0","id":` + id + `,"method":"no/such","params":{` + modernMeta + `}}`, modern("no/such"), http.StatusNotFound},
			{"stateless header mismatch (JSON)", `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{` + modernMeta + `}}`, modern("tools/call"), http.StatusBadRequest},
			{"session ping (events)", `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`, session, http.StatusOK},
			{"session unknown method (text the wrapper turns into JSON)", `{"jsonrpc":"2.0","id":` + id + `,"method":"no/such"}`, session, http.StatusBadRequest},
		} {
			status, _, r := httpPost(t, srv.URL, tc.body, tc.header)
			if status != tc.wantStatus || string(r.ID) != id {
				t.Errorf("%s with id %s: status %d, id %s (error %+v); want status %d and the id back", tc.name, id, status, r.ID, r.Error, tc.wantStatus)
			}
		}
	}
}
