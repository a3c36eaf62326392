package mcpserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
)

// idSwaps hands the SDK a fresh string id in place of each request id that
// the SDK would not give back byte for byte (see guard.PlainID): it holds an
// integer id as a float64, so one past 2^53 comes back changed, and it
// spells some strings differently. The client's own id is put back in the
// answer. Plain ids, the common case, are never swapped.
//
// Swaps are kept per scope (a stdio connection, or an HTTP session) so that
// a notifications/cancelled naming the client's id reaches the request by
// its substitute.
type idSwaps struct {
	next atomic.Uint64
	mu   sync.Mutex
	// bySub maps each substitute in use to the client's id, and byClient
	// maps the client's id to its substitute.
	bySub    map[string]swapped
	byClient map[clientID]json.RawMessage
}

// clientID names a client's request id in its scope, by the id's
// guard.IDKey.
type clientID struct{ scope, key string }

// swapped is a client's request id that has a substitute.
type swapped struct {
	clientID
	raw json.RawMessage // as the client wrote it
}

func newIDSwaps() *idSwaps {
	return &idSwaps{bySub: map[string]swapped{}, byClient: map[clientID]json.RawMessage{}}
}

// substitute records a fresh substitute for id, a request id that is not
// plain, in scope, and returns it.
func (s *idSwaps) substitute(scope string, id json.RawMessage) json.RawMessage {
	sub := json.RawMessage(strconv.Quote(guard.SubstitutePrefix + strconv.FormatUint(s.next.Add(1), 10)))
	client := clientID{scope: scope, key: guard.IDKey(id)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bySub[string(sub)] = swapped{clientID: client, raw: bytes.Clone(id)}
	s.byClient[client] = sub
	return sub
}

// answered ends the swap of the request the SDK answered with id, over
// stdio, and returns the client's id for the answer, if id was a
// substitute.
func (s *idSwaps) answered(id jsonrpc.ID) (json.RawMessage, bool) {
	str, ok := id.Raw().(string)
	if !ok || !strings.HasPrefix(str, guard.SubstitutePrefix) {
		return nil, false
	}
	// The SDK holds the substitute decoded; it was printable ASCII, so
	// quoting it gives back the bytes it was handed as.
	sub := strconv.Quote(str)
	s.mu.Lock()
	defer s.mu.Unlock()
	sw, ok := s.bySub[sub]
	if ok {
		s.drop(sub, sw)
	}
	return sw.raw, ok
}

// restoreStored returns data, a message on a stream of the session scope,
// as the event store is to keep it: an answer to a swapped request carries
// the client's id, and the swap ends, as nothing more of the request is to
// come. A replay then gives the client the id it wrote, whether or not the
// request that asked is still connected.
func (s *idSwaps) restoreStored(scope string, data []byte) []byte {
	id, ok := guard.ResponseID(data)
	if !ok || !isSubstitute(id) {
		return data
	}
	s.mu.Lock()
	sw, ok := s.bySub[string(id)]
	if ok && sw.scope == scope {
		s.drop(string(id), sw)
	}
	s.mu.Unlock()
	if !ok || sw.scope != scope {
		return data
	}
	if out, ok := guard.WithMember(data, "id", sw.raw); ok {
		return out
	}
	return data
}

// pending returns the swaps of scope in progress, substitute to client id.
func (s *idSwaps) pending(scope string) map[string]json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]json.RawMessage{}
	for sub, sw := range s.bySub {
		if sw.scope == scope {
			out[sub] = sw.raw
		}
	}
	return out
}

// forgetScope ends every swap of scope, a session that ended.
func (s *idSwaps) forgetScope(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub, sw := range s.bySub {
		if sw.scope == scope {
			s.drop(sub, sw)
		}
	}
}

// forget ends the swap of sub once its HTTP request ends.
func (s *idSwaps) forget(sub json.RawMessage) {
	if !isSubstitute(sub) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sw, ok := s.bySub[string(sub)]; ok {
		s.drop(string(sub), sw)
	}
}

// drop ends the swap of sub; s.mu is held.
func (s *idSwaps) drop(sub string, sw swapped) {
	delete(s.bySub, sub)
	// A later request with the same id in the scope may have its own swap.
	if string(s.byClient[sw.clientID]) == sub {
		delete(s.byClient, sw.clientID)
	}
}

func isSubstitute(id json.RawMessage) bool {
	return strings.HasPrefix(string(id), `"`+guard.SubstitutePrefix)
}

// cancelled takes msg, a notifications/cancelled with params in scope, and
// returns the message to pass to the SDK: a requestId that was swapped is
// replaced by its substitute. One that is not plain and was not swapped
// names no request in flight, and the SDK would read it as another id (a
// big integer rounds to its neighbour's), so the notification is dropped:
// out is nil. The swap itself lasts until the answer, which the SDK still
// sends for a cancelled request.
func (s *idSwaps) cancelled(scope string, msg []byte, params json.RawMessage) (out []byte) {
	requestID, ok := guard.Member(params, "requestId")
	key := guard.IDKey(requestID)
	if !ok || key == "" {
		// Not an id: the SDK refuses it itself.
		return msg
	}
	s.mu.Lock()
	sub, isSwapped := s.byClient[clientID{scope: scope, key: key}]
	s.mu.Unlock()
	switch {
	case isSwapped:
		newParams, _ := guard.WithMember(params, "requestId", sub)
		out, _ := guard.WithMember(msg, "params", newParams)
		return out
	case guard.PlainID(requestID):
		return msg
	}
	return nil
}

// restoreID gives the client's own ids back in the SDK's answers to
// requests whose ids were swapped: in a JSON body, or in the server-sent
// events that carry the responses. Everything else passes through
// unchanged. The answer's length changes, so Content-Length is dropped.
//
// A POST's has the one request it carries; a resumed stream's has the
// swaps of its session in progress when it was resumed (the answers it
// replays are kept with the client's ids already, see restoreStored).
type restoreID struct {
	http.ResponseWriter
	subs        map[string]json.RawMessage // substitute to the client's id, until its answer is seen
	wroteHeader bool
	streamed    bool // the answer is a stream of events
	form        bodyForm
	held        []byte // a JSON body, or events up to an incomplete one
}

type bodyForm int

const (
	passThrough bodyForm = iota // other bodies, and the rest once the id is restored
	jsonBody
	eventStream
)

func (w *restoreID) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.wroteHeader = true
		switch mediaType(w.Header().Get("Content-Type")) {
		case "application/json":
			w.form = jsonBody
		case "text/event-stream":
			w.form = eventStream
			w.streamed = true
		}
		if w.form != passThrough {
			w.Header().Del("Content-Length")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *restoreID) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	switch w.form {
	case jsonBody:
		w.held = append(w.held, p...)
		return len(p), nil
	case eventStream:
		w.held = append(w.held, p...)
		return len(p), w.writeEvents()
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends the events complete so far.
func (w *restoreID) Flush() {
	if w.form == eventStream {
		w.writeEvents()
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *restoreID) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeEvents writes the complete events held, with the id restored in the
// one that answers the request.
func (w *restoreID) writeEvents() error {
	end := bytes.LastIndex(w.held, []byte("\n\n"))
	if end < 0 {
		return nil
	}
	end += 2
	var out []byte
	for ev := range bytes.SplitAfterSeq(w.held[:end], []byte("\n\n")) {
		out = append(out, w.restoreEvent(ev)...)
	}
	w.held = append(w.held[:0], w.held[end:]...)
	if w.form == passThrough {
		out, w.held = append(out, w.held...), nil
	}
	_, err := w.ResponseWriter.Write(out)
	return err
}

// restoreEvent restores the id in ev if its data is the response.
func (w *restoreID) restoreEvent(ev []byte) []byte {
	at := 0
	for line := range bytes.SplitAfterSeq(ev, []byte("\n")) {
		start := at
		at += len(line)
		data, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\n")), []byte("data: "))
		if !ok {
			continue
		}
		restored, ok := w.restore(data)
		if !ok {
			return ev
		}
		start += len("data: ")
		return slices.Concat(ev[:start], restored, ev[start+len(data):])
	}
	return ev
}

// restore returns msg with the client's id if msg is the response to a
// swapped request.
func (w *restoreID) restore(msg []byte) ([]byte, bool) {
	id, ok := guard.ResponseID(msg)
	if !ok {
		return nil, false
	}
	client, ok := w.subs[string(id)]
	if !ok {
		return nil, false
	}
	out, ok := guard.WithMember(msg, "id", client)
	if ok {
		delete(w.subs, string(id))
		if len(w.subs) == 0 {
			w.form = passThrough
		}
	}
	return out, ok
}

// answered reports whether every answer w waited for was seen.
func (w *restoreID) answered() bool { return len(w.subs) == 0 }

// finish writes a held JSON body, or what is left of an event stream.
func (w *restoreID) finish() {
	if len(w.held) == 0 {
		return
	}
	body := w.held
	if restored, ok := w.restore(body); ok {
		body = restored
	}
	w.ResponseWriter.Write(body)
}

// mediaType is a Content-Type's type and subtype, in lower case.
func mediaType(contentType string) string {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
