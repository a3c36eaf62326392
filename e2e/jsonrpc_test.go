package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rpcReply is the part of a JSON-RPC response these tests check.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"` // of a notification
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// malformed lists messages no client should send, with the error each must
// draw and the id it must carry ("null" where the id cannot be read).
var malformed = []struct {
	name, msg string
	code      int
	id        string
}{
	{"not json", `not json`, -32700, "null"},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"},
	{"scalar", `42`, -32600, "null"},
	{"wrong version", `{"jsonrpc":"1.0","id":2,"method":"ping"}`, -32600, "2"},
	{"no version", `{"id":3,"method":"ping"}`, -32600, "3"},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
	{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
	{"no method", `{"jsonrpc":"2.0","id":4}`, -32600, "4"},
	{"numeric method", `{"jsonrpc":"2.0","id":5,"method":7}`, -32600, "5"},
	{"array params", `{"jsonrpc":"2.0","id":"six","method":"tools/call","params":[1]}`, -32602, `"six"`},
}

func checkReply(t *testing.T, name string, got rpcReply, code int, id string) {
	t.Helper()
	if got.Error == nil {
		t.Errorf("%s: no error in reply (result %s)", name, got.Result)
		return
	}
	if got.Error.Code != code {
		t.Errorf("%s: code %d (%s); want %d", name, got.Error.Code, got.Error.Message, code)
	}
	if string(got.ID) != id {
		t.Errorf("%s: id %s; want %s", name, got.ID, id)
	}
}

// stdioPeer drives a stdio server line by line.
type stdioPeer struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Reader
	srv *server // the process and its stderr
}

func startStdio(t *testing.T, extra ...string) *stdioPeer {
	t.Helper()
	if len(extra) == 0 {
		extra = []string{"--log-level", "error"}
	}
	cmd := stdioCommand(extra...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	srv := &server{cmd: cmd, stderr: stderr}
	t.Cleanup(func() {
		in.Close()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &stdioPeer{t: t, in: in, out: bufio.NewReader(out), srv: srv}
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

func (p *stdioPeer) recv() rpcReply {
	p.t.Helper()
	type read struct {
		line []byte
		err  error
	}
	ch := make(chan read, 1)
	go func() { l, err := p.out.ReadBytes('\n'); ch <- read{l, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("reading a reply: %v", r.err)
		}
		var reply rpcReply
		if err := json.Unmarshal(r.line, &reply); err != nil {
			p.t.Fatalf("reply is not JSON-RPC: %q", r.line)
		}
		return reply
	case <-time.After(time.Minute):
		p.t.Fatal("no reply within a minute")
	}
	return rpcReply{}
}

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func TestMalformedJSONRPCOverStdio(t *testing.T) {
	p := startStdio(t)
	p.send(initialize)
	if r := p.recv(); r.Error != nil {
		t.Fatalf("initialize: %+v", r.Error)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range malformed {
		p.send(tc.msg)
		checkReply(t, tc.name, p.recv(), tc.code, tc.id)
	}
	p.send(strings.Repeat(" ", 5<<20) + `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	checkReply(t, "oversized", p.recv(), -32600, "null")

	p.send(`{"jsonrpc":"2.0","id":10,"method":"no/such/method"}`)
	checkReply(t, "unknown method", p.recv(), -32601, "10")

	// A notification, even an unknown one, gets no reply: the next reply
	// read is the ping's.
	p.send(`{"jsonrpc":"2.0","method":"notifications/whatever"}`)
	p.send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if r := p.recv(); string(r.ID) != "11" || r.Error != nil {
		t.Fatalf("after a notification, got %s %+v; want the ping's reply", r.ID, r.Error)
	}
}

func TestStdioAnswersRequestsReadBeforeEOF(t *testing.T) {
	writeHostile(t)
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculate","arguments":{"a":2,"b":2,"operation":"add"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"",
	}, "\n")
	cmd := exec.Command(binary, "serve", "--tools", toolsDir, "--cache-dir", cacheDir, "--log-level", "error")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	var r rpcReply
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || !strings.Contains(string(r.Result), `"4.0"`) {
		t.Fatalf("stdout = %q; want the call's result", out)
	}
}

func post(t *testing.T, url, body string, header map[string]string) (int, rpcReply, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v // net/http ignores a Host header field
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r rpcReply
	json.Unmarshal(reply(resp.Header, raw), &r)
	return resp.StatusCode, r, resp.Header
}

// reply is the JSON-RPC message of a response body. An SSE response
// carries it in a data line; a 2025-11-25 stream's first, its priming
// event, has none.
func reply(h http.Header, body []byte) []byte {
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		for line := range bytes.Lines(body) {
			if data, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\n")), []byte("data: ")); ok && len(data) > 0 {
				return data
			}
		}
	}
	return body
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func TestMalformedJSONRPCOverHTTP(t *testing.T) {
	s := startHTTP(t)
	for _, tc := range malformed {
		status, r, h := post(t, s.url, tc.msg, nil)
		if status != http.StatusBadRequest || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("%s: status %d, Content-Type %q; want 400 with a JSON body", tc.name, status, h.Get("Content-Type"))
		}
		checkReply(t, tc.name, r, tc.code, tc.id)
	}

	status, r, _ := post(t, s.url, `{"jsonrpc":"2.0","id":1,"method":"no/such","params":{`+modernMeta+`}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "no/such"})
	if status != http.StatusNotFound {
		t.Errorf("unknown method (2026-07-28): status %d; want 404", status)
	}
	checkReply(t, "unknown method", r, -32601, "1")

	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5<<20) + `"}}`
	status, r, _ = post(t, s.url, big, nil)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: status %d; want 413", status)
	}
	checkReply(t, "oversized body", r, -32600, "null")

	// The server still serves well-formed requests.
	status, r, _ = post(t, s.url, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"b":2,"operation":"add"},`+modernMeta+`}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "calculate"})
	if status != http.StatusOK || !strings.Contains(string(r.Result), `"3.0"`) {
		t.Errorf("call after malformed input: status %d, result %s, error %+v", status, r.Result, r.Error)
	}
}

func TestHTTPRefusesRebindingAndStrayMethods(t *testing.T) {
	s := startHTTP(t)
	status, _, _ := post(t, s.url, initialize, map[string]string{"Host": "evil.example.com"})
	if status != http.StatusForbidden {
		t.Errorf("foreign Host header: status %d; want 403", status)
	}
	status, _, _ = post(t, s.url, initialize, map[string]string{"Origin": "https://evil.example.com", "Sec-Fetch-Site": "cross-site"})
	if status != http.StatusForbidden {
		t.Errorf("cross-origin request: status %d; want 403", status)
	}
	resp, err := http.Get(s.url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET without a session: status %d; want 405", resp.StatusCode)
	}
	status, r, _ := post(t, s.url, initialize, nil)
	if status != http.StatusOK || r.Error != nil {
		t.Errorf("initialize from the right host: status %d, error %+v", status, r.Error)
	}
}
