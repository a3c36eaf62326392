package mcpserver

import (
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// fakeSession is a session that records whether it was closed.
type fakeSession struct {
	id     string
	closed bool
}

func (s *fakeSession) ID() string   { return s.id }
func (s *fakeSession) Close() error { s.closed = true; return nil }

// fakeSessions are the SDK's sessions to a sessionUse: those not closed.
type fakeSessions []*fakeSession

func (f fakeSessions) live() iter.Seq[session] {
	return func(yield func(session) bool) {
		for _, s := range f {
			if !s.closed && !yield(s) {
				return
			}
		}
	}
}

// TestSessionUseClosesTheSessionIdleLongest fills the cap, in a bubble
// whose clock moves only with the test's sleeps: a new session closes the
// one idle longest, never one with a request in progress or one still
// being initialized, and with none idle there is no room.
func TestSessionUseClosesTheSessionIdleLongest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b, c, d := &fakeSession{id: "a"}, &fakeSession{id: "b"}, &fakeSession{id: "c"}, &fakeSession{id: "d"}
		sessions := fakeSessions{a, b, c}
		u := newSessionUse(sessions.live, 3, discard())
		for _, s := range sessions {
			u.started(s.id)
			time.Sleep(time.Second)
		}
		endA := u.begin("a") // in progress, though it started first
		time.Sleep(time.Second)
		u.begin("b")() // used after c
		u.begin("nobody")()
		if len(u.byID) != 3 {
			t.Errorf("the table has %d sessions; want 3: a request for an unknown id adds none", len(u.byID))
		}
		if !u.makeRoom() || !c.closed || a.closed || b.closed {
			t.Fatalf("at the cap: closed a %v, b %v, c %v; want c, idle longest", a.closed, b.closed, c.closed)
		}
		if len(u.byID) != 2 {
			t.Errorf("the table has %d sessions; want 2: the closed one is not kept", len(u.byID))
		}

		// d is being initialized: it is not yet in the table.
		sessions = append(sessions, d)
		u.live = sessions.live
		endB := u.begin("b")
		if u.makeRoom() || a.closed || b.closed || d.closed {
			t.Fatal("with every session in use or being initialized, a session was closed to make room")
		}
		endB()
		if !u.makeRoom() || !b.closed || a.closed || d.closed {
			t.Errorf("once b is idle: closed a %v, b %v, d %v; want b", a.closed, b.closed, d.closed)
		}
		endA()

		a.closed = true // by the SDK: idle, or deleted
		u.makeRoom()
		if len(u.byID) != 0 {
			t.Errorf("the table keeps %d sessions the SDK has closed", len(u.byID))
		}
	})
}

// TestEvictedSessionIsNotFound fills --max-sessions with sessions of raw
// initialize requests, through the SDK's handler: the next initialize
// closes the one idle longest, whose client is told, as for any session
// the SDK does not know, that it is not found, and may initialize again.
func TestEvictedSessionIsNotFound(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t, nil).HTTPHandler(HTTPOptions{MaxSessions: 2}))
	defer srv.Close()
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		// To its end, as a client does: a stream's priming event comes
		// before its answer.
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	open := func() string {
		resp := post("", initialize)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: status %d, session %q", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
		}
		return resp.Header.Get("Mcp-Session-Id")
	}
	first, second := open(), open()
	if resp := post(first, ping); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping in the first session: status %d", resp.StatusCode)
	}
	open() // closes the second, idle longest
	if resp := post(second, ping); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request in the session closed to make room: status %d; want 404", resp.StatusCode)
	}
	if resp := post(first, ping); resp.StatusCode != http.StatusOK {
		t.Errorf("a request in the session used since: status %d", resp.StatusCode)
	}
	open() // as the closed session's client may
}
