package mcpserver

import (
	"log/slog"
	"net/http"
	"time"
)

// stallChunk is the most of an answer written under one deadline, so that
// the stall bound asks a client to take this much each bound, not a whole
// answer of up to --output at once.
const stallChunk = 64 << 10

// withWriteStall closes the connection of a client that stops reading its
// answer. Responses have no deadline of their own, since an event stream
// may rightly stay open for as long as its client likes, so without one a
// write to a client that reads nothing waits for ever, and its handler
// with it, holding its request's share of the budget and its encoded
// answer. So each write gets bound to complete, and no more: the deadline
// is lifted once the write is done, so an idle stream, which writes
// nothing, is never cut (on HTTP/2 a deadline ends the stream when it
// passes, written to or not). After the handler, what net/http still has
// buffered is flushed under one more deadline; at the start of a request
// the last one's is lifted, as HTTP/1.1 keeps it on the connection.
func withWriteStall(bound time.Duration, log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &stallBound{ResponseWriter: w, rc: http.NewResponseController(w), bound: bound}
		_ = sw.rc.SetWriteDeadline(time.Time{})
		next.ServeHTTP(sw, r)
		sw.arm()
		if sw.stalled {
			log.Info("closed a connection whose client stopped reading its answer", "stall_bound", bound, "remote", r.RemoteAddr)
		}
	})
}

// stallBound is a ResponseWriter whose every write must complete within
// bound; see withWriteStall. It is an http.Flusher, as the SDK's event
// streams need, and unwraps for http.ResponseController.
type stallBound struct {
	http.ResponseWriter
	rc      *http.ResponseController
	bound   time.Duration
	stalled bool // a write failed at its deadline
}

func (w *stallBound) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), stallChunk)]
		deadline := w.arm()
		m, err := w.ResponseWriter.Write(chunk)
		w.lift(deadline, err)
		n += m
		if err != nil {
			return n, err
		}
		p = p[m:]
	}
	return n, nil
}

func (w *stallBound) Flush() {
	deadline := w.arm()
	w.lift(deadline, w.rc.Flush())
}

func (w *stallBound) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// arm sets the deadline of a write about to begin, and returns it.
func (w *stallBound) arm() time.Time {
	deadline := time.Now().Add(w.bound)
	_ = w.rc.SetWriteDeadline(deadline)
	return deadline
}

// lift lifts the deadline of a write that has ended with err, and notes a
// write that failed once its deadline had passed. A failed write is
// final: net/http closes the connection after the handler returns, and
// the SDK ends the handler as the request's context ends with it.
func (w *stallBound) lift(deadline time.Time, err error) {
	if err != nil {
		w.stalled = w.stalled || !time.Now().Before(deadline)
		return
	}
	_ = w.rc.SetWriteDeadline(time.Time{})
}
