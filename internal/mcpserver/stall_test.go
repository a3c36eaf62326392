package mcpserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHTTPClosesAConnectionThatStopsReading sends a call whose answer is
// far larger than the sockets between server and client hold, and never
// reads it: once one write has waited the stall bound, the connection is
// closed, the request's share of the budget comes back, and a request
// that needs the whole budget is served.
func TestHTTPClosesAConnectionThatStopsReading(t *testing.T) {
	logs := &logWatch{want: "stopped reading its answer", seen: make(chan struct{})}
	s := newTestServerWith(t, Options{Version: "test", RequestBudget: MaxMessageSize})
	srv := httptest.NewUnstartedServer(s.HTTPHandler(HTTPOptions{
		Logger:            slog.New(slog.NewTextHandler(logs, nil)),
		WriteStallTimeout: 50 * time.Millisecond,
	}))
	srv.Listener = smallSendBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4 << 10)
	call := echoCall(512 << 10)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s",
		srv.Listener.Addr(), len(call), call)
	select {
	case <-logs.seen:
	case <-time.After(time.Minute):
		t.Fatalf("the server never closed the connection of a client that reads nothing:\n%s", logs)
	}

	if !s.budget.TryAcquire(s.budgetSize) {
		t.Fatal("the budget is not whole once the stalled request has ended")
	}
	s.budget.Release(s.budgetSize)
	c.SetReadDeadline(time.Now().Add(time.Minute)) // against a hang
	if _, err := io.Copy(io.Discard, c); err != nil && strings.Contains(err.Error(), "timeout") {
		t.Errorf("the stalled connection is still open: %v", err)
	}
	status, _, r := httpPost(t, srv.URL, echoCall(MaxMessageSize-1024), map[string]string{
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
	if status != http.StatusOK || r.Error != nil {
		t.Errorf("a request of the whole budget after the stall: status %d, error %+v", status, r.Error)
	}
}

// echoCall is a 2026-07-28 call of echo of about n bytes, whose answer is
// as large, up to the output limit.
func echoCall(n int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + modernMeta +
		`,"arguments":{"pad":"` + strings.Repeat("x", n) + `"}}}`
}

// smallSendBuffers is a listener whose connections buffer little of what
// the server sends, so that a client that reads nothing stalls its writes
// soon.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// logWatch is a log that closes seen once a line contains want.
type logWatch struct {
	want string
	seen chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
}

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bytes.Contains(p, []byte(l.want)) {
		l.once.Do(func() { close(l.seen) })
	}
	return l.buf.Write(p)
}

func (l *logWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestWriteStallLeavesIdleStreamsOpen keeps an event stream idle, over
// HTTP/2, for longer than the stall bound, which another request on the
// same connection shows by stalling on an answer its client does not
// read: the stream's next event still arrives, as an armed deadline would
// have ended the stream when it passed.
func TestWriteStallLeavesIdleStreamsOpen(t *testing.T) {
	logs := &logWatch{want: "stopped reading its answer", seen: make(chan struct{})}
	next, cut := make(chan struct{}), make(chan struct{})
	srv := httptest.NewUnstartedServer(withWriteStall(50*time.Millisecond, slog.New(slog.NewTextHandler(logs, nil)),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/big" {
				defer close(cut)
				w.Write(make([]byte, 64<<20))
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			<-next
			io.WriteString(w, "data: 2\n\n")
		})))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("the stream is served over %s; want HTTP/2", resp.Proto)
	}
	events := bufio.NewReader(resp.Body)
	if line, err := events.ReadString('\n'); line != "data: 1\n" {
		t.Fatalf("first event: %q, %v", line, err)
	}

	big, err := srv.Client().Get(srv.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer big.Body.Close()
	// The handler's write ends, cut by a deadline. (That it is logged as
	// a stall is best effort over HTTP/2: a deadline that passes just
	// as its write ends can cut the next write before that one's own
	// deadline, which then looks like a client that went away.)
	select {
	case <-cut:
	case <-time.After(time.Minute):
		t.Fatalf("the answer no one read was never cut:\n%s", logs)
	}
	close(next)
	events.ReadString('\n') // the blank line that ends event 1
	if line, err := events.ReadString('\n'); line != "data: 2\n" {
		t.Errorf("the event after the stream was idle past the stall bound: %q, %v", line, err)
	}
}
