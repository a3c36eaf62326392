package mcpserver

import (
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// session is what sessionUse needs of the SDK's *mcp.ServerSession.
type session interface {
	ID() string
	Close() error
}

// sessionUse keeps, for each 2025-11-25 session, how many of its requests
// are in progress (a GET stream among them) and when one last began or
// ended, so that at the session cap a new session can take the place of
// the one idle longest. The SDK keeps no such record and lets no one
// evict a session but by closing it; its list of sessions (live) is the
// truth this table follows.
type sessionUse struct {
	live func() iter.Seq[session]
	max  int
	log  *slog.Logger

	mu   sync.Mutex
	byID map[string]*use
}

// use is what sessionUse knows of one session.
type use struct {
	active int       // requests in progress
	last   time.Time // when one last began or ended
}

func newSessionUse(live func() iter.Seq[session], max int, log *slog.Logger) *sessionUse {
	return &sessionUse{live: live, max: max, log: log, byID: map[string]*use{}}
}

// begin records a request for the session id and returns what records its
// end. An id the table does not know is not recorded: the SDK answers that
// the session is not found, and a client cannot make the table grow.
func (u *sessionUse) begin(id string) (end func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	e := u.byID[id]
	if e == nil {
		return func() {}
	}
	e.active++
	e.last = time.Now()
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		e.active--
		e.last = time.Now()
	}
}

// started records a session an initialize created, as its answer goes
// out, before its client can send a request in it. Until then, the session
// is not evicted.
func (u *sessionUse) started(id string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.byID[id] = &use{last: time.Now()}
}

// makeRoom reports whether a new session may start: below the cap, or
// once the session idle longest is closed to make room. A session with a
// request in progress, or one still being initialized, is never closed.
func (u *sessionUse) makeRoom() bool {
	u.mu.Lock()
	n := 0
	var oldest session
	var since time.Time
	live := make(map[string]bool, len(u.byID))
	for s := range u.live() {
		id := s.ID()
		if id == "" {
			continue // a stateless request's, or stdio's
		}
		n++
		live[id] = true
		if e := u.byID[id]; e != nil && e.active == 0 && (oldest == nil || e.last.Before(since)) {
			oldest, since = s, e.last
		}
	}
	// Sessions the SDK closed (idle, deleted, failed to initialize) are
	// forgotten here.
	for id := range u.byID {
		if !live[id] {
			delete(u.byID, id)
		}
	}
	switch {
	case n < u.max:
		u.mu.Unlock()
		return true
	case oldest == nil:
		u.mu.Unlock()
		return false
	}
	// Forgotten first, so that a request arriving for it from now on is
	// not counted, and the SDK answers it as for any closed session.
	delete(u.byID, oldest.ID())
	u.mu.Unlock()
	oldest.Close()
	u.log.Info("closed the session idle longest to make room for a new one", "limit", u.max, "idle", time.Since(since))
	return true
}

// sessionStarted records, as an initialize's answer goes out, the session
// it created.
type sessionStarted struct {
	http.ResponseWriter
	use         *sessionUse
	wroteHeader bool
}

func (w *sessionStarted) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.wroteHeader = true
		if id := w.Header().Get("Mcp-Session-Id"); id != "" && code < 300 {
			w.use.started(id)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionStarted) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *sessionStarted) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *sessionStarted) Unwrap() http.ResponseWriter { return w.ResponseWriter }
