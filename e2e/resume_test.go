package e2e

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resumeCounter counts the requests that resume a stream.
type resumeCounter struct{ resumed atomic.Int32 }

func (c *resumeCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		c.resumed.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// With --poll-interval, the server ends the stream of a 2025-11-25 call
// that outlasts it, and the SDK's client resumes it with Last-Event-ID and
// gets the answer from the server's event store.
func TestPolledCallsAreResumed(t *testing.T) {
	writeSleep(t)
	s := startHTTP(t, "--poll-interval", "50ms")
	counter := &resumeCounter{}
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: counter}}, "2025-11-25", s)
	// sleep takes 300 ms: its stream is ended after 50.
	if got := text(callTool(t, cs, "sleep", nil)); !strings.Contains(got, "slept") {
		t.Fatalf("sleep answered %q", got)
	}
	if counter.resumed.Load() == 0 {
		t.Error("the call's stream was never resumed: the server did not end it")
	}
}
