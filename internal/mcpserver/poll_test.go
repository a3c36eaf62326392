package mcpserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollInterval is the PollInterval of pollingServer.
const pollInterval = 20 * time.Millisecond

// pollingServer serves a tool "block" that answers once release is closed
// and then ten poll intervals have passed, with streams polled after
// pollInterval, and reports on resumed each GET that resumes a stream.
func pollingServer(t *testing.T) (url string, release chan struct{}, resumed chan struct{}) {
	t.Helper()
	s := newTestServerWith(t, Options{Version: "test", PollInterval: pollInterval})
	release, resumed = make(chan struct{}), make(chan struct{}, 16)
	s.mcp.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		// A call that goes on long after its stream was resumed: a stream
		// ended again each interval would make the SDK's client give up.
		time.Sleep(10 * pollInterval)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
	})
	h := s.HTTPHandler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed <- struct{}{}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, release, resumed
}

// A call that outlasts the poll interval has its stream ended by the
// server, and the SDK's client resumes it and gets the answer.
func TestPolledCallIsResumedByTheClient(t *testing.T) {
	url, release, resumed := pollingServer(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	go func() {
		<-resumed
		close(release)
	}()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != "released" {
		t.Errorf("answer %q", text)
	}
}

// sseEvent is one server-sent event, its fields as written.
type sseEvent struct{ id, name, data, retry string }

// readEvent reads the next event of r, or fails at the end of the stream.
func readEvent(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			return ev, nil
		}
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.name = value
		case "data":
			ev.data = value
		case "retry":
			ev.retry = value
		}
	}
}

// rawSession initializes a session of version at url, and returns its id.
func rawSession(t *testing.T, url, version string) string {
	t.Helper()
	init := postTo(t, url, "", version, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, init.Body)
	init.Body.Close()
	session := init.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize answered %s without a session", init.Status)
	}
	postTo(t, url, session, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return session
}

// postTo sends body on session (none for "") as a request of version, and
// returns the response.
func postTo(t *testing.T, url, session, version, body string) *http.Response {
	t.Helper()
	header := map[string]string{"Mcp-Protocol-Version": version}
	if session != "" {
		header["Mcp-Session-Id"] = session
	}
	return postResponse(t, url, body, header)
}

// The stream of a polled call primes with an event id, ends naming a
// retry, and a GET with Last-Event-ID gets the answer, with the client's
// own id even where the SDK was given another (past 2^53, see idSwaps).
func TestPolledStreamResumesWithTheClientsID(t *testing.T) {
	url, release, resumed := pollingServer(t)
	session := rawSession(t, url, "2025-11-25")
	const id = "9007199254740993"
	call := postTo(t, url, session, "2025-11-25", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	prime, err := readEvent(events)
	if err != nil || prime.id == "" || prime.data != "" {
		t.Fatalf("first event %+v, %v; want a priming event with an id and no data", prime, err)
	}
	var closing sseEvent
	for closing.retry == "" {
		if closing, err = readEvent(events); err != nil {
			t.Fatalf("the stream ended without naming a retry: %v", err)
		}
	}
	if _, err := readEvent(events); err != io.EOF {
		t.Fatalf("after the retry: %v; want the stream's end", err)
	}

	// The answer is released once the stream is resumed: a resumed stream
	// that has nothing to replay sends its headers with its first event.
	go func() {
		<-resumed
		close(release)
	}()
	// Should the resumed stream end too, the client resumes again from the
	// last event it saw.
	last := prime.id
	for range 1000 {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", last)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("resuming after %s: %s", last, resp.Status)
		}
		events := bufio.NewReader(resp.Body)
		for {
			ev, err := readEvent(events)
			if err != nil {
				break
			}
			if ev.id != "" {
				last = ev.id
			}
			if strings.Contains(ev.data, `"result"`) {
				resp.Body.Close()
				if !strings.Contains(ev.data, `"id":`+id+`,`) || !strings.Contains(ev.data, "released") {
					t.Errorf("answer %s; want id %s", ev.data, id)
				}
				return
			}
		}
		resp.Body.Close()
	}
	t.Fatal("no answer after 1000 resumptions")
}

// Before 2025-11-25, a stream has no priming event: one ended before its
// answer could not be resumed, so it is not ended.
func TestStreamsOfEarlierRevisionsAreNotPolled(t *testing.T) {
	url, release, _ := pollingServer(t)
	close(release)
	session := rawSession(t, url, "2025-06-18")
	call := postTo(t, url, session, "2025-06-18", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	defer call.Body.Close()
	events := bufio.NewReader(call.Body)
	for {
		ev, err := readEvent(events)
		if err != nil {
			t.Fatalf("the stream ended before its answer: %v", err)
		}
		if ev.retry != "" {
			t.Errorf("the stream names a retry (%s): it is being ended", ev.retry)
		}
		if strings.Contains(ev.data, `"result"`) {
			return
		}
	}
}
