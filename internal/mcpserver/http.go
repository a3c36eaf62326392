package mcpserver

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// modernVersion is the first protocol revision without sessions.
const modernVersion = "2026-07-28"

// HTTPOptions configure HTTPHandler. Zero values take the defaults noted.
type HTTPOptions struct {
	Logger *slog.Logger
	// AuthToken, if set, must be presented by every request as
	// "Authorization: Bearer <token>".
	AuthToken string
	// MaxSessions bounds live 2025-11-25 sessions (default 1024). An
	// initialize beyond it closes the session idle longest, one with no
	// request in progress and no stream open, whose client is then told
	// the session is not found and may initialize again; with every session
	// busy, it is answered 503.
	MaxSessions int
	// SessionIdleTimeout closes a session that has seen no request for
	// this long (default 10 minutes), so abandoned sessions do not pile up.
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds how long a client may take to send a request body
	// (default 30 seconds), so a slow sender cannot hold a connection.
	BodyTimeout time.Duration
	// MaxStreams bounds the long-lived streams open at once (default
	// 512): 2025-11-25 sessions' GET streams and 2026-07-28
	// subscriptions/listen streams. A stream beyond it is refused with
	// 503. Keep it below the connections the listener accepts, so that
	// streams, which hold their connections, leave room for the rest.
	MaxStreams int
	// WriteStallTimeout bounds how long one write of an answer, of up to
	// 64 KiB, may wait for the client to take it (default 30 seconds).
	// Past it, the connection is closed and the request ends, so that a
	// client that stops reading cannot hold its request's share of the
	// budget and its answer. An idle stream writes nothing and is not cut.
	WriteStallTimeout time.Duration
	// EventStoreSize bounds the bytes of 2025-11-25 stream events kept so
	// that a client that lost a stream can resume it with Last-Event-ID
	// (default DefaultEventStoreSize, for every session together). Past
	// it, the streams that last had an event longest ago are forgotten.
	EventStoreSize int64
}

// Defaults for HTTPOptions.
const (
	DefaultMaxSessions        = 1024
	DefaultSessionIdleTimeout = 10 * time.Minute
	DefaultBodyTimeout        = 30 * time.Second
	DefaultMaxStreams         = 512
	DefaultWriteStallTimeout  = 30 * time.Second
)

// HTTPHandler serves the server over Streamable HTTP, for clients of both
// protocol eras; mount it at Path.
//
// The SDK serves 2026-07-28 only from a stateless handler and 2025-11-25
// sessions only from a stateful one, so both are built and each POST is
// routed: a request without a session that marks itself modern (by its
// _meta or its MCP-Protocol-Version header) goes to the stateless handler,
// everything else to the stateful one. This is the routing rule of the
// conformance suite's reference server.
//
// In front of both, the guard answers malformed bodies with JSON-RPC errors,
// and a body over MaxMessageSize is refused before it is read whole. The
// SDK's DNS-rebinding protection stays on, and cross-origin browser
// requests are refused. Every refusal, whoever writes it, is a JSON-RPC
// error (see jsonErrors), and every request id comes back as the client
// wrote it (see idSwaps). What clients hold is bounded: the bodies held at
// once by the server's request budget, the long-lived streams by
// MaxStreams, the sessions by MaxSessions (see sessionUse), and how long
// an answer may wait for its client to read it by WriteStallTimeout (see
// withWriteStall).
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts.setDefaults()
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	ids := newIDSwaps()
	base := mcp.StreamableHTTPOptions{
		Logger:              sdkLogger(log),
		MaxRequestBodyBytes: MaxMessageSize,
		SessionTimeout:      opts.SessionIdleTimeout,
	}
	stateless := base
	stateless.Stateless = true
	// Only sessions' streams can be resumed: 2026-07-28 has none.
	base.EventStore = newEventStore(opts.EventStoreSize, ids.restoreStored, func(sessionID string) {
		ids.forgetScope(sessionID)
		s.tasks.endOwner(httpOwner(sessionID))
	})
	// MCP 2026-07-28 cancels a request over HTTP by closing its response
	// stream: the call's context ends with its HTTP request.
	stateless.PropagateRequestCancellation = true
	r := &router{
		stateful:    mcp.NewStreamableHTTPHandler(getServer, &base),
		stateless:   mcp.NewStreamableHTTPHandler(getServer, &stateless),
		log:         log,
		sessions:    newSessionUse(s.sessions, opts.MaxSessions, log),
		bodyTimeout: opts.BodyTimeout,
		ids:         ids,
		budget:      s.budget,
		budgetSize:  s.budgetSize,
		streams:     semaphore.NewWeighted(int64(opts.MaxStreams)),
		maxStreams:  opts.MaxStreams,
		tasks:       s.tasks,
		lists:       newListAnswers(&s.version),
		frames:      newListAnswers(&s.version),
		srv:         s,
		mcpSessions: s.mcp.Sessions,
		idleTimeout: opts.SessionIdleTimeout,
	}
	r.lists.off = s.sdkOnly
	return withWriteStall(opts.WriteStallTimeout, log,
		withJSONErrors(RequireBearer(opts.AuthToken, http.NewCrossOriginProtection().Handler(r))))
}

func (o *HTTPOptions) setDefaults() {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = DefaultSessionIdleTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.WriteStallTimeout <= 0 {
		o.WriteStallTimeout = DefaultWriteStallTimeout
	}
	if o.EventStoreSize <= 0 {
		o.EventStoreSize = DefaultEventStoreSize
	}
}

// sessions lists the SDK's sessions.
func (s *Server) sessions() iter.Seq[session] {
	return func(yield func(session) bool) {
		for ss := range s.mcp.Sessions() {
			if !yield(ss) {
				return
			}
		}
	}
}

// RequireBearer admits only requests that carry the token; an empty token
// admits all. The comparison takes the same time whatever the guess, so the
// token cannot be found byte by byte from response times.
func RequireBearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wasmcp"`)
			http.Error(w, "unauthorized: this server needs a bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientNotifications are the notifications a client may send that the SDK
// acts on; any other is dropped by the router.
var clientNotifications = map[string]bool{
	"notifications/initialized":        true,
	"notifications/cancelled":          true,
	"notifications/progress":           true,
	"notifications/roots/list_changed": true,
}

type router struct {
	stateful, stateless http.Handler
	log                 *slog.Logger
	sessions            *sessionUse
	bodyTimeout         time.Duration
	ids                 *idSwaps
	budget              *semaphore.Weighted // bytes of bodies held at once
	budgetSize          int64
	streams             *semaphore.Weighted // long-lived streams open
	maxStreams          int
	tasks               *taskStore
	// lists answers 2026-07-28 list requests the SDK has answered before,
	// and frames keeps how it framed its answers to 2026-07-28 calls, for
	// the lean call path of srv (leanHTTP).
	lists, frames *listAnswers
	srv           *Server
	mcpSessions   func() iter.Seq[*mcp.ServerSession]
	idleTimeout   time.Duration // the SDK's, of sessions
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sessionID := r.Header.Get("Mcp-Session-Id")
	if sessionID != "" {
		// In use, and not to be closed to make room, while this lasts.
		defer rt.sessions.begin(sessionID)()
	}
	if r.Method != http.MethodPost {
		if sessionID == "" {
			// Only 2025-11-25 sessions have GET streams and DELETE; without a
			// session there is nothing to stream or end.
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed: without an Mcp-Session-Id, only POST is served", http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodGet {
			// A session's stream, which stays open.
			if !rt.openStream(w, r, nil) {
				return
			}
			defer rt.streams.Release(1)
			if r.Header.Get("Last-Event-ID") != "" {
				// A resumed stream: answers still to come name their requests
				// by the ids the SDK was given.
				if subs := rt.ids.pending(sessionID); len(subs) > 0 {
					restore := &restoreID{ResponseWriter: w, subs: subs}
					defer restore.finish()
					w = restore
				}
			}
		}
		rt.stateful.ServeHTTP(w, r)
		return
	}

	body, release, ok := rt.readBody(w, r)
	if !ok {
		return
	}
	defer release()
	v := guard.Inspect(body)
	if v.Kind == guard.Invalid {
		rt.log.Warn("refused malformed message", "code", v.Code, "reason", v.Message, "remote", r.RemoteAddr)
		writeRPCError(w, http.StatusBadRequest, guard.ErrorResponse(v.ID, v.Code, v.Message))
		return
	}
	// From here on, a refusal carries the request's id. It is copied, as
	// nothing here may keep the body once the SDK has its own (see below).
	id := bytes.Clone(v.ID)
	errs := &jsonErrors{ResponseWriter: w, id: id}
	defer errs.finish()
	w = errs

	if v.Kind == guard.Notification && v.Method == "notifications/cancelled" {
		body = rt.ids.cancelled(sessionID, body, v.Params)
	}
	if body == nil || v.Kind == guard.Notification && !clientNotifications[v.Method] {
		// JSON-RPC never answers a notification, and MCP accepts them with
		// 202; the SDK would answer one it does not know with a plain-text
		// 400. It is accepted and dropped here instead, as is a
		// cancellation that names no request.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	modern := sessionID == "" && v.Kind != guard.Response &&
		(guard.HasModernMeta(v.Params) || r.Header.Get("Mcp-Protocol-Version") >= modernVersion)
	if sessionID == "" && !modern && v.Kind == guard.Request && v.Method != "initialize" && v.Method != "ping" {
		// 2025-11-25 has servers that require a session answer any other
		// request without one with 400; the SDK would answer 200 with an
		// error of code 0.
		writeRPCError(w, http.StatusBadRequest, guard.ErrorResponse(id, guard.CodeInvalidRequest, noSession(v.Method)))
		return
	}
	if modern && v.Kind == guard.Request && extensionTaskMethods[v.Method] {
		rt.answerExtensionTask(w, r, id, v)
		return
	}
	if v.Kind == guard.Request && sessionID != "" && rt.tasks.handles(v.Method, v.Params) {
		if ss := rt.session(sessionID); ss != nil {
			rt.answerTask(w, r, id, v, release, ss)
			return
		}
		// The SDK answers that the session is not found, or not
		// initialized.
	}
	wireID := id // as the SDK gets it
	if v.Kind == guard.Request && !guard.PlainID(v.ID) {
		sub := rt.ids.substitute(sessionID, v.ID)
		wireID = sub
		body, _ = guard.WithMember(body, "id", sub)
		restore := &restoreID{ResponseWriter: w, subs: map[string]json.RawMessage{string(sub): id}}
		defer func() {
			// A session's stream that ended before its answer (the client
			// went away, or the server closed it for polling) is resumable:
			// the swap lasts until the answer is stored (restoreStored), or
			// the session ends.
			if restore.answered() || !restore.streamed || sessionID == "" {
				rt.ids.forget(sub)
			}
		}()
		defer restore.finish()
		w = restore
	}
	if sessionID == "" && v.Method == "initialize" {
		if !rt.sessions.makeRoom() {
			rt.log.Warn("refused a new session: at the session limit, with every session in use", "limit", rt.sessions.max, "remote", r.RemoteAddr)
			w.Header().Set("Retry-After", "60")
			writeRPCError(w, http.StatusServiceUnavailable, guard.ErrorResponse(id, guard.CodeInternalError, fmt.Sprintf("the server has its maximum of %d sessions, all in use; try again later", rt.sessions.max)))
			return
		}
		w = &sessionStarted{ResponseWriter: w, use: rt.sessions}
	}

	if v.Kind == guard.Request && v.Method == "subscriptions/listen" {
		// A stream that stays open until the client ends it, with its
		// request held all the while. Held against the budget, a few
		// large ones would lock out every other request for as long as
		// they liked: a stream's request must be small, and is bounded by
		// the stream cap instead.
		if len(body) > maxStreamRequest {
			writeRPCError(w, http.StatusRequestEntityTooLarge, guard.ErrorResponse(id, guard.CodeInvalidRequest,
				fmt.Sprintf("invalid request: a subscriptions/listen request is at most %s", abi.Size(maxStreamRequest))))
			return
		}
		if !rt.openStream(w, r, id) {
			return
		}
		defer rt.streams.Release(1)
		release()
	}

	// The SDK reads the body into a buffer of its own (on the stateless
	// path, twice) and keeps decoded copies of the params for the whole
	// call. It gets the body on a copy of the request, so that net/http's
	// request, which lives as long, does not keep ours as well.
	sdkReq := func() *http.Request {
		req := r.WithContext(r.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		return req
	}
	switch {
	case modern && v.Kind == guard.Request && listMethods[v.Method]:
		rt.lists.answerHTTP(w, r, v, wireID, rt.stateless, sdkReq)
	case modern && v.Kind == guard.Request && v.Method == "tools/call":
		rt.leanHTTP(w, r, v, wireID, sdkReq)
	case modern:
		rt.stateless.ServeHTTP(w, sdkReq())
	default:
		rt.stateful.ServeHTTP(w, sdkReq())
	}
}

// noSession is the refusal of a request that needs a session and has none.
func noSession(method string) string {
	return fmt.Sprintf("invalid request: %s needs a session, and this request has no Mcp-Session-Id header. "+
		"On protocol 2025-11-25, send initialize first and repeat the Mcp-Session-Id of its answer on every later request; "+
		"on %s, which has no sessions, send the MCP-Protocol-Version: %s header and the protocol version in the request's _meta", method, modernVersion, modernVersion)
}

// session returns the initialized 2025-11-25 session id, or nil.
func (rt *router) session(id string) *mcp.ServerSession {
	for ss := range rt.mcpSessions() {
		if ss.ID() == id {
			if ss.InitializeParams() == nil {
				return nil
			}
			return ss
		}
	}
	return nil
}

// answerTask answers v, a request of the tasks protocol in session ss,
// whose id is id. A tasks/result may wait for long, so, like a
// subscriptions/listen, its request must be small, gives its body's share
// of the budget back before it waits, and takes one of the long-lived
// streams.
func (rt *router) answerTask(w http.ResponseWriter, r *http.Request, id json.RawMessage, v guard.Verdict, release func(), ss *mcp.ServerSession) {
	params := v.Params
	if v.Method == "tasks/result" {
		if len(params) > maxStreamRequest {
			writeRPCError(w, http.StatusRequestEntityTooLarge, guard.ErrorResponse(id, guard.CodeInvalidRequest,
				fmt.Sprintf("invalid request: a tasks/result request is at most %s", abi.Size(maxStreamRequest))))
			return
		}
		// A waiting tasks/result holds its connection as a stream does, and
		// is bounded with them, so that waits cannot take every connection.
		if !rt.openStream(w, r, id) {
			return
		}
		defer rt.streams.Release(1)
		params = bytes.Clone(params)
		release()
	}
	// The SDK sees none of this, and would close a session that only polls
	// its tasks as idle, cancelling them: it is told of the request as it
	// begins, while it waits, and as it ends.
	rt.keepAlive(r)
	defer rt.keepAlive(r)
	if v.Method == "tasks/result" && rt.idleTimeout > 0 {
		tick := time.NewTicker(rt.idleTimeout / 2)
		defer tick.Stop()
		waited := make(chan struct{})
		defer close(waited)
		go func() {
			for {
				select {
				case <-tick.C:
					rt.keepAlive(r)
				case <-waited:
					return
				}
			}
		}()
	}
	answer := rt.tasks.taskResponse(id, taskRequest{ctx: r.Context(), owner: httpOwner(ss.ID()), session: ss, method: v.Method, params: params})
	w.Header().Set("Content-Type", "application/json")
	w.Write(answer)
}

// keepAliveBody is what keepAlive hands the SDK: a progress notification
// of no request, which it takes and drops.
const keepAliveBody = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"wasmcp-keepalive","progress":0}}`

// keepAlive has the SDK count a request in r's session, so that its idle
// timeout starts again.
func (rt *router) keepAlive(r *http.Request) {
	req := r.Clone(context.WithoutCancel(r.Context()))
	req.Body = io.NopCloser(strings.NewReader(keepAliveBody))
	req.ContentLength = int64(len(keepAliveBody))
	rt.stateful.ServeHTTP(discardResponse{http.Header{}}, req)
}

// discardResponse is a ResponseWriter that drops what it is given.
type discardResponse struct{ header http.Header }

func (d discardResponse) Header() http.Header         { return d.header }
func (d discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d discardResponse) WriteHeader(int)             {}

// httpOwner is the owner of a 2025-11-25 HTTP session's tasks.
func httpOwner(sessionID string) string { return "http:" + sessionID }

// openStream takes one of the long-lived streams for r, whose id is id
// (nil for a GET), or refuses it, and reports whether it may go on. Each
// stream holds its connection for as long as it is open, so without a cap
// of their own, streams could take every connection the listener accepts
// and lock out every other request, /healthz included.
func (rt *router) openStream(w http.ResponseWriter, r *http.Request, id json.RawMessage) bool {
	if rt.streams.TryAcquire(1) {
		return true
	}
	rt.log.Warn("refused a stream: at the limit of open streams", "limit", rt.maxStreams, "remote", r.RemoteAddr)
	w.Header().Set("Retry-After", "60")
	writeRPCError(w, http.StatusServiceUnavailable, guard.ErrorResponse(id, guard.CodeInternalError,
		fmt.Sprintf("the server has its maximum of %d open streams; try again later, or go on without one", rt.maxStreams)))
	return false
}

// readBody reads r's body, within the request budget, or answers the
// request itself and reports that it did not. A body is held, in copies
// the SDK makes too, until its request ends, when release gives its bytes
// back to the budget. A request whose declared length, or MaxMessageSize
// for one that declares none, does not fit is refused before its body is
// read. release may be called more than once.
func (rt *router) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), ok bool) {
	charge := r.ContentLength
	switch {
	case charge > MaxMessageSize:
		w.Header().Set("Connection", "close")
		writeRPCError(w, http.StatusRequestEntityTooLarge, tooLarge)
		return nil, nil, false
	case charge < 0:
		charge = MaxMessageSize
	}
	if !rt.budget.TryAcquire(charge) {
		rt.log.Warn("refused a request: the request bodies held take the whole budget", "budget", rt.budgetSize, "request_bytes", charge, "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusServiceUnavailable, guard.ErrorResponse(nil, guard.CodeInternalError,
			fmt.Sprintf("the server is busy: the requests it is handling hold all of its %s for request bodies; try again shortly", abi.Size(rt.budgetSize))))
		return nil, nil, false
	}

	// The deadline covers only the body; it is lifted before the SDK takes
	// over, because a response stream may rightly stay open for long. The
	// buffer has the declared size, if there is one: a growing one would
	// allocate several times the body.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(rt.bodyTimeout))
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxMessageSize))
	body = buf.Bytes()
	if r.ContentLength < 0 {
		// Only what came is held.
		rt.budget.Release(charge - int64(len(body)))
		charge = int64(len(body))
	}
	var once sync.Once
	release = func() { once.Do(func() { rt.budget.Release(charge) }) }
	if err != nil {
		release()
		// The deadline stays, and the connection is not reused: the rest of
		// a body that failed is not worth waiting for.
		w.Header().Set("Connection", "close")
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, tooLarge)
			return nil, nil, false
		}
		http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
		return nil, nil, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, release, true
}

// maxStreamRequest bounds the request that opens a long-lived stream:
// flags and _meta, a few hundred bytes.
const maxStreamRequest = 16 << 10

// tooLarge is the refusal of a body over MaxMessageSize.
var tooLarge = guard.ErrorResponse(nil, guard.CodeInvalidRequest, fmt.Sprintf("invalid request: body exceeds %d bytes", MaxMessageSize))

func writeRPCError(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// withJSONErrors makes every refusal next writes a JSON-RPC error; see
// jsonErrors. The id is unknown at this point: null.
func withJSONErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs := &jsonErrors{ResponseWriter: w}
		defer errs.finish()
		next.ServeHTTP(errs, r)
	})
}

// jsonErrors turns a refusal written in plain text (a status of 400 or
// more without a JSON body: the SDK's http.Error calls, RequireBearer's,
// http.CrossOriginProtection's, the router's own) into a JSON-RPC error, so
// that a client always gets an answer it can read. The status and the
// headers stay as they were (WWW-Authenticate, Allow, Retry-After); the
// text becomes the error's message, and the error carries id, or null if
// the request's id is not known. This wraps the SDK's refusals rather than
// copying its checks.
type jsonErrors struct {
	http.ResponseWriter
	id          json.RawMessage
	wroteHeader bool
	status      int    // of a refusal being rewritten, or 0
	text        []byte // its text, up to maxRefusalText bytes
}

// maxRefusalText bounds the text of a refusal kept for its message.
const maxRefusalText = 1 << 10

func (w *jsonErrors) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.wroteHeader = true
		if code >= 400 && mediaType(w.Header().Get("Content-Type")) != "application/json" {
			w.status = code
			w.Header().Set("Content-Type", "application/json")
			w.Header().Del("Content-Length")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrors) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == 0 {
		return w.ResponseWriter.Write(p)
	}
	w.text = append(w.text, p[:min(len(p), maxRefusalText-len(w.text))]...)
	return len(p), nil
}

// Flush passes on any answer but a refusal being rewritten.
func (w *jsonErrors) Flush() {
	if w.status == 0 {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *jsonErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes the JSON-RPC error of a refusal being rewritten.
func (w *jsonErrors) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(string(w.text))
	if msg == "" {
		msg = http.StatusText(w.status)
	}
	w.ResponseWriter.Write(guard.ErrorResponse(w.id, refusalCode(w.status, msg), msg))
}

// sdkNotHandled begins the SDK's refusal of a method it does not serve
// (its jsonrpc2.ErrNotHandled), which it writes in plain text in sessions.
// TestEveryHTTPRefusalIsJSONRPC pins the wording.
const sdkNotHandled = "JSON RPC not handled"

// refusalCode is the JSON-RPC error code for a plain-text refusal.
func refusalCode(status int, text string) int {
	switch {
	case status >= 500:
		return guard.CodeInternalError
	case strings.HasPrefix(text, sdkNotHandled):
		return guard.CodeMethodNotFound
	}
	return guard.CodeInvalidRequest
}
