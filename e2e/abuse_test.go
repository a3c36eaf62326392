package e2e

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestBusyServerSaysSoAndRecovers fills the only run slot with a call that
// spins until cancelled: the next call is answered "busy" as a tool error,
// and once the slot is free calls work again.
func TestBusyServerSaysSoAndRecovers(t *testing.T) {
	writeSpin(t)
	s := startHTTP(t, "--log-level", "debug", "--timeout", "1h", "--concurrency", "1", "--queue-timeout", "50ms")
	cs := connectHTTP(t, s, "2026-07-28")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "spin"})
		done <- err
	}()
	s.waitLog(t, "run started", "tool=spin")
	res := callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"})
	if !res.IsError || !strings.Contains(text(res), "busy") {
		t.Fatalf("call while the slot is taken = %q (isError %v); want busy", text(res), res.IsError)
	}
	cancel()
	<-done
	s.waitLog(t, "msg=call", "tool=spin", "outcome=cancelled")
	if res := callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
		t.Fatalf("after the slot is free, calculate = %q", text(res))
	}
}

// writeSpin serves the loop module as "spin", with no time limit of its
// own, so that only the server's ceiling or a cancellation ends it.
func writeSpin(t *testing.T) {
	t.Helper()
	writeHostile(t)
	path := filepath.Join(toolsDir, "spin.manifest.json")
	if _, err := os.Stat(path); err == nil {
		return
	}
	copyFile(t, filepath.Join(toolsDir, "loop.wasm"), filepath.Join(toolsDir, "spin.wasm"))
	manifest := `{"abi":1,"tools":[{"name":"spin","description":"spins until stopped","inputSchema":{"type":"object"}}],"limits":{"timeout":"1h"}}`
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSlowClientsAreCutOff opens connections that send their headers, or
// their body, slower than the server's read timeout: the server closes
// each, and goes on serving.
func TestSlowClientsAreCutOff(t *testing.T) {
	s := startHTTP(t, "--read-timeout", "1s")
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	for name, partial := range map[string]string{
		"headers": "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: appl",
		"body":    "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, partial); err != nil {
				t.Fatal(err)
			}
			// A hang guard, far beyond the 1s the server allows.
			conn.SetReadDeadline(time.Now().Add(time.Minute))
			_, err = io.ReadAll(conn)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the server kept a slow connection open")
			}
		})
	}
	cs := connectHTTP(t, s, "2026-07-28")
	if res := callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 2, "operation": "add"}); text(res) != "3.0" {
		t.Errorf("after slow clients, calculate = %q", text(res))
	}
}

// TestNotificationFlood sends thousands of notifications, over stdio and
// HTTP; the server answers none and still answers the next request.
func TestNotificationFlood(t *testing.T) {
	const n = 5000
	t.Run("stdio", func(t *testing.T) {
		p := startStdio(t)
		p.send(initialize)
		p.recv()
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(`{"jsonrpc":"2.0","method":"notifications/flood","params":{"i":` + fmt.Sprint(i) + "}}\n")
		}
		b.WriteString(`{"jsonrpc":"2.0","id":42,"method":"ping"}`)
		p.send(b.String())
		if r := p.recv(); string(r.ID) != "42" || r.Error != nil {
			t.Fatalf("after the flood: id %s, error %+v; want the ping's reply", r.ID, r.Error)
		}
	})
	t.Run("http", func(t *testing.T) {
		s := startHTTP(t)
		h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "notifications/flood"}
		for i := 0; i < n/5; i++ {
			status, _, _ := post(t, s.url, `{"jsonrpc":"2.0","method":"notifications/flood","params":{`+modernMeta+`}}`, h)
			if status != http.StatusAccepted {
				t.Fatalf("notification %d: status %d; want 202", i, status)
			}
		}
		cs := connectHTTP(t, s, "2026-07-28")
		if res := callTool(t, cs, "calculate", map[string]any{"a": 2, "b": 2, "operation": "add"}); text(res) != "4.0" {
			t.Errorf("after the flood, calculate = %q", text(res))
		}
	})
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestAuthTokenAndTLS serves HTTPS with a bearer token: requests without
// the token get 401 with a Bearer challenge, and a client that has both
// the certificate and the token works in both revisions.
func TestAuthTokenAndTLS(t *testing.T) {
	dir := t.TempDir()
	const token = "a-long-enough-test-token"
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, pool := selfSigned(t, dir)
	s := startHTTP(t, "--auth-token-file", tokenFile, "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("server url %s; want https", s.url)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}

	resp, err := (&http.Client{Transport: transport}).Post(s.url, "application/json", strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("without a token: status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	for _, v := range versions {
		client := &http.Client{Transport: bearer{token: token, next: transport}}
		cs := connect(t, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: client}, v, s)
		if res := callTool(t, cs, "calculate", map[string]any{"a": 3, "b": 4, "operation": "multiply"}); text(res) != "12.0" {
			t.Errorf("%s over HTTPS with the token: calculate = %q", v, text(res))
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns a
// pool that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "wasmcp test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestSessionLimit opens sessions up to --max-sessions with clients that
// keep their streams open, as the SDK's do: every session is in use, so
// the next is refused, and the open ones keep working.
func TestSessionLimit(t *testing.T) {
	s := startHTTP(t, "--max-sessions", "2")
	a := connectHTTP(t, s, "2025-11-25")
	connectHTTP(t, s, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := mcp.NewClient(&mcp.Implementation{Name: "third", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("a third session: err = %v; want the session limit", err)
	}
	if res := callTool(t, a, "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
		t.Errorf("an open session after the refusal: calculate = %q", text(res))
	}
	// Stateless clients need no session and are not limited.
	if res := callTool(t, connectHTTP(t, s, "2026-07-28"), "calculate", map[string]any{"a": 1, "b": 2, "operation": "add"}); text(res) != "3.0" {
		t.Errorf("a stateless client at the session limit: calculate = %q", text(res))
	}
}

// TestRequestBudgetOverHTTP holds most of --request-budget with a call
// that runs until it is cancelled: a request whose declared length does
// not fit is refused busy, with a JSON-RPC error, though its body never
// comes, while a small call and /healthz are answered; once the first call
// ends, the large request is served.
func TestRequestBudgetOverHTTP(t *testing.T) {
	writeSpin(t)
	writeSleep(t)
	s := startHTTP(t, "--log-level", "debug", "--timeout", "1h", "--request-budget", "4MiB", "--read-timeout", "10m")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go postContext(ctx, s.url, padded("spin", 3<<20), modernCall("spin"))
	s.waitLog(t, "run started", "tool=spin")

	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", host, 2<<20)
	c.SetReadDeadline(time.Now().Add(time.Minute)) // against a hang: the body never comes
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("a request beyond the budget, its body unsent: %v", err)
	}
	var r rpcReply
	json.NewDecoder(resp.Body).Decode(&r)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || r.Error == nil || !strings.Contains(r.Error.Message, "busy") {
		t.Errorf("a request beyond the budget: status %d, Retry-After %q, error %+v; want 503 and busy", resp.StatusCode, resp.Header.Get("Retry-After"), r.Error)
	}
	if res := callTool(t, connectHTTP(t, s, "2026-07-28"), "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
		t.Errorf("a small call beside it: %q", text(res))
	}
	if body := get(t, s, "/healthz"); !strings.Contains(body, "ok") {
		t.Errorf("/healthz = %q", body)
	}

	cancel()
	s.waitLog(t, "msg=call", "tool=spin", "outcome=cancelled")
	if status, r, _ := post(t, s.url, padded("sleep", 2<<20), modernCall("sleep")); status != http.StatusOK || !strings.Contains(string(r.Result), "slept") {
		t.Errorf("the large request once the budget is free: status %d, result %s, error %+v", status, r.Result, r.Error)
	}
}

// TestHTTPClosesAConnectionThatStopsReading sends a call whose answer,
// some 12 MiB once encoded, is far more than the sockets hold, and never
// reads it: once a write has waited --read-timeout, the server closes the
// connection and says so, and the request's 2 MiB of the 4 MiB budget come
// back, so that a call of 3 MiB is served.
func TestHTTPClosesAConnectionThatStopsReading(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	s := startHTTPIn(t, dir, "--read-timeout", "1s", "--output", "64MiB", "--request-budget", "4MiB")
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	// Each < is six bytes in the answer (the SDK escapes it for HTML).
	call := strings.Replace(padded("echo", 0), `"pad":""`, `"pad":"`+strings.Repeat("<", 2<<20)+`"`, 1)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s", host, len(call), call)
	s.waitLog(t, "closed a connection whose client stopped reading its answer")

	if status, r, _ := post(t, s.url, padded("echo", 3<<20), modernCall("echo")); status != http.StatusOK || r.Error != nil || len(r.Result) < 3<<20 {
		t.Errorf("a call of 3 MiB after the stalled one: status %d, error %+v, %d bytes of result", status, r.Error, len(r.Result))
	}
}

// padded is a 2026-07-28 tools/call of tool whose arguments are a string
// of n bytes.
func padded(tool string, n int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `",` + modernMeta +
		`,"arguments":{"pad":"` + strings.Repeat("x", n) + `"}}}`
}

// modernCall is the headers of a 2026-07-28 tools/call of tool.
func modernCall(tool string) map[string]string {
	return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

// TestRequestBudgetOverStdio sends a stdio server more requests than
// --request-budget holds, without reading their answers: once the answers
// fill the pipe (64 KiB, as Linux pipes are by default), the requests in
// flight fill the budget, and the server stops reading and says so; once
// the client reads, every request is answered.
func TestRequestBudgetOverStdio(t *testing.T) {
	dir := t.TempDir()
	writeTool(t, dir, "echo", wattest.Build(t, "echo"), "echo")
	p := startStdio(t, "--tools", dir, "--log-level", "debug", "--request-budget", "4MiB")
	// Each request holds at least 64 KiB of the budget, so 64 fill it;
	// the answers to 2,000, of over 100 bytes each, are far more than the
	// pipe holds. The writes wait once the server stops reading.
	const n = 2000
	go func() {
		for i := range n {
			io.WriteString(p.in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`+"\n", i, modernMeta))
		}
	}()
	p.srv.waitLog(t, "input waits", "request budget")
	seen := map[string]bool{}
	for range n {
		seen[string(p.recv().ID)] = true
	}
	if len(seen) != n {
		t.Errorf("%d requests answered; want %d", len(seen), n)
	}
}

// TestStreamsLeaveRoomForOtherClients opens as many subscriptions/listen
// streams, which need no session, as --max-connections allows
// connections: those past half of them are refused with a JSON-RPC error,
// and /healthz and other clients' calls are still answered.
func TestStreamsLeaveRoomForOtherClients(t *testing.T) {
	const max = 8
	s := startHTTP(t, "--max-connections", fmt.Sprint(max))
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/mcp"), "http://")
	listen := `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`
	streams := 0
	for range max {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", host, len(listen), listen)
		c.SetReadDeadline(time.Now().Add(time.Minute)) // against a hang
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a listen stream after %d open: %v", streams, err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			streams++
		case http.StatusServiceUnavailable:
			var r rpcReply
			if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Error == nil || string(r.ID) != `"l"` {
				t.Errorf("a refused stream's answer: %+v, %v; want a JSON-RPC error with its id", r, err)
			}
		default:
			t.Errorf("a listen stream: status %d", resp.StatusCode)
		}
	}
	if streams != max/2 {
		t.Errorf("%d streams open; want %d, half of --max-connections", streams, max/2)
	}
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute} // against a hang
	resp, err := client.Get("http://" + host + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz with the streams open: %v, %v", resp, err)
	}
	resp.Body.Close()
	if res := callTool(t, connectHTTP(t, s, "2026-07-28"), "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
		t.Errorf("a call with the streams open: %q", text(res))
	}
}

// TestIdleSessionsMakeRoom fills --max-sessions with a client that keeps
// no stream open and a bare initialize, as a flood of them would: the
// next initialize closes the session idle longest, the client's, which is
// told its session is not found, and a new client still gets in.
func TestIdleSessionsMakeRoom(t *testing.T) {
	s := startHTTP(t, "--max-sessions", "2")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evicted, err := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer evicted.Close()
	legacy := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	for range 2 {
		if status, r, h := post(t, s.url, initialize, legacy); status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
			t.Fatalf("a bare initialize at the session limit: status %d, error %+v", status, r.Error)
		}
	}
	s.waitLog(t, "closed the session idle longest")
	status, r, _ := post(t, s.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": evicted.ID(), "Mcp-Protocol-Version": "2025-11-25"})
	if status != http.StatusNotFound || r.Error == nil || !strings.Contains(r.Error.Message, "session not found") {
		t.Errorf("a request in the closed session: status %d, error %+v; want 404, session not found", status, r.Error)
	}
	if _, err := evicted.CallTool(ctx, &mcp.CallToolParams{Name: "calculate", Arguments: map[string]any{"a": 1, "b": 1, "operation": "add"}}); err == nil || !strings.Contains(err.Error(), "session not found") {
		t.Errorf("the closed session's client calling: %v; want session not found", err)
	}
	if res := callTool(t, connectHTTP(t, s, "2025-11-25"), "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
		t.Errorf("a new client at the session limit: calculate = %q", text(res))
	}
}
