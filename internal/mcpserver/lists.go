package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
)

// listMethods are the requests whose answer depends only on the catalog
// in service and on the request itself: answered once by the SDK, they
// are answered again from its answer (see listAnswers).
var listMethods = map[string]bool{
	"tools/list":               true,
	"prompts/list":             true,
	"resources/list":           true,
	"resources/templates/list": true,
}

// catalogVersion counts the catalogs the SDK has been brought to (sync):
// an answer made under one version is not given under another.
type catalogVersion struct{ n atomic.Uint64 }

// current is the version of the catalog the SDK serves now.
func (v *catalogVersion) current() uint64 { return v.n.Load() }

// bump marks the SDK brought to a new catalog. It is called after sync
// has returned, never before: an answer the SDK made while sync ran is
// tagged with the version before, and so never given again.
func (v *catalogVersion) bump() { v.n.Add(1) }

// listAnswers keeps a connection's answers to list requests, as the SDK
// wrote them, keyed by the request's method and params and tagged with the
// catalog version they were made under. A request with the same method and
// params, under the same version, in the same connection, is answered with
// that answer and its own id, without the SDK: the SDK's answer is a
// function of those alone, as a session's state only moves forward: the
// SDK refuses a second initialize, and a list that carries no revision
// before the first gets an error, which is never kept. A
// list request is the one a client repeats most, and the SDK's path costs
// goroutine hand-offs and several decodings of the same bytes.
//
// Over HTTP, where 2026-07-28 requests carry all the state there is, one
// listAnswers serves every client, and the key holds the request's header
// fields too (httpListKey).
//
// Only answers are kept, never errors, and only a bounded number of
// bytes: a client that sends many distinct list requests fills it, and
// the rest go to the SDK.
type listAnswers struct {
	version *catalogVersion
	// off leaves every request to the SDK, for the differential test.
	off bool

	mu      sync.Mutex
	answers map[[sha256.Size]byte]listAnswer
	bytes   int
	// waiting holds the list requests handed to the SDK, by the id the
	// SDK sees, until their answers come back.
	waiting map[jsonrpc.ID]listRequest
}

// listAnswer is one kept answer: the SDK's response message, and over
// HTTP the response around it.
type listAnswer struct {
	version uint64
	msg     []byte
	// status, header, and the body before and after msg (an event
	// stream's framing), for an answer over HTTP.
	status        int
	header        http.Header
	before, after []byte
	// flushed: the SDK flushed the answer as it wrote it, as a stream,
	// so that it went without a Content-Length.
	flushed bool
}

func (a listAnswer) size() int { return len(a.msg) + len(a.before) + len(a.after) }

// listRequest is a list request on its way through the SDK.
type listRequest struct {
	key     [sha256.Size]byte
	version uint64
}

// maxListAnswerBytes bounds the answers a connection keeps: a catalog of
// 256 tools with large schemas lists in a few hundred KiB.
const maxListAnswerBytes = 4 << 20

func newListAnswers(v *catalogVersion) *listAnswers {
	return &listAnswers{version: v, answers: map[[sha256.Size]byte]listAnswer{}, waiting: map[jsonrpc.ID]listRequest{}}
}

// listKey is the key of a request's answer.
func listKey(method string, params []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write(params)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// get returns the answer kept under k for the catalog in service.
func (l *listAnswers) get(k [sha256.Size]byte) (listAnswer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.answers[k]
	if !ok || a.version != l.version.current() {
		return listAnswer{}, false
	}
	return a, true
}

// keep keeps a under k, if the catalog is still the one it was made
// under, and there is room.
func (l *listAnswers) keep(k [sha256.Size]byte, a listAnswer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a.version != l.version.current() {
		return
	}
	if old, ok := l.answers[k]; ok {
		l.bytes -= old.size()
		delete(l.answers, k)
	}
	if l.bytes+a.size() > maxListAnswerBytes {
		// Answers of older versions go first; if that is not enough,
		// this one is not kept.
		for k, old := range l.answers {
			if old.version != a.version {
				l.bytes -= old.size()
				delete(l.answers, k)
			}
		}
		if l.bytes+a.size() > maxListAnswerBytes {
			return
		}
	}
	l.answers[k] = a
	l.bytes += a.size()
}

// lookup returns the SDK's answer to a list request with method and
// params under the catalog in service, if one is kept.
func (l *listAnswers) lookup(method string, params []byte) ([]byte, bool) {
	if l.off || !listMethods[method] {
		return nil, false
	}
	a, ok := l.get(listKey(method, params))
	return a.msg, ok
}

// handing notes a list request the SDK is given under id, so that its
// answer is kept when it comes (answered).
func (l *listAnswers) handing(id jsonrpc.ID, method string, params []byte) {
	if l.off || !listMethods[method] {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting[id] = listRequest{key: listKey(method, params), version: l.version.current()}
}

// answered keeps msg, the SDK's response to the request it knows by id,
// if that was a list request and it succeeded.
func (l *listAnswers) answered(id jsonrpc.ID, msg []byte, failed bool) {
	l.mu.Lock()
	req, ok := l.waiting[id]
	delete(l.waiting, id)
	l.mu.Unlock()
	if ok && !failed {
		l.keep(req.key, listAnswer{version: req.version, msg: msg})
	}
}

// ignoredHeaders are the request header fields that no answer depends on:
// the SDK reads none of them, and they vary between clients that send the
// same request.
var ignoredHeaders = map[string]bool{
	"Content-Length": true, "User-Agent": true, "Accept-Encoding": true, "Connection": true,
	"Authorization": true, "Traceparent": true, "Tracestate": true, "X-Forwarded-For": true,
}

// httpListKey is the key of the answer to a list request over HTTP: its
// method and params, its Host and target, and every header field of the
// request but those in ignoredHeaders, names and values in order.
func httpListKey(method string, params []byte, r *http.Request) [sha256.Size]byte {
	d := sha256.New()
	d.Write([]byte(method))
	d.Write([]byte{0})
	d.Write(params)
	d.Write([]byte{0})
	d.Write([]byte(r.Host))
	d.Write([]byte{0})
	d.Write([]byte(r.URL.RequestURI()))
	h := r.Header
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if ignoredHeaders[name] {
			continue
		}
		for _, v := range h[name] {
			d.Write([]byte{0})
			d.Write([]byte(name))
			d.Write([]byte{':'})
			d.Write([]byte(v))
		}
	}
	var k [sha256.Size]byte
	d.Sum(k[:0])
	return k
}

// answerHTTP answers a 2026-07-28 list request over HTTP, whose id the SDK
// would get as wireID, from the SDK's answer to the same request, if one
// is kept. If none is, sdk answers the request sdkReq makes, and its
// answer is kept if it is one.
func (l *listAnswers) answerHTTP(w http.ResponseWriter, r *http.Request, v guard.Verdict, wireID json.RawMessage, sdk http.Handler, sdkReq func() *http.Request) {
	k := httpListKey(v.Method, v.Params, r)
	if a, ok := l.get(k); ok && !l.off {
		msg, _ := guard.WithMember(a.msg, "id", wireID)
		a.write(w, msg)
		return
	}
	rec := &listRecorder{ResponseWriter: w, version: l.version.current()}
	sdk.ServeHTTP(rec, sdkReq())
	if a, ok := rec.answer(); ok && !l.off {
		l.keep(k, a)
	}
}

// write writes msg as the SDK wrote a's message: with a's status and
// header fields, in a's framing, flushed as a was.
func (a listAnswer) write(w http.ResponseWriter, msg []byte) {
	for name, values := range a.header {
		w.Header()[name] = values
	}
	body := slices.Concat(a.before, msg, a.after)
	if a.header.Get("Content-Length") != "" {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(a.status)
	w.Write(body)
	// One flush makes the framing the SDK's (no Content-Length, chunks),
	// as its flushes before and after the body did: the bytes are the
	// same, in one write rather than two.
	if a.flushed {
		http.NewResponseController(w).Flush()
	}
}

// listRecorder passes the SDK's answer to a list request on, and keeps a
// copy of it.
type listRecorder struct {
	http.ResponseWriter
	version uint64
	status  int
	header  http.Header
	body    []byte
	over    bool // the body is too large to keep
	flushed bool
}

func (r *listRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *listRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if !r.over {
		if r.over = len(r.body)+len(p) > maxListAnswerBytes; r.over {
			r.body = nil
		} else {
			r.body = append(r.body, p...)
		}
	}
	return r.ResponseWriter.Write(p)
}

// Flush passes a flush on: the SDK flushes each event of a stream.
func (r *listRecorder) Flush() {
	r.flushed = true
	http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *listRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// answer is what was recorded, if it is an answer to keep: a 200 whose
// body is one JSON-RPC response with a result, as JSON or as the one
// event of a stream.
func (r *listRecorder) answer() (listAnswer, bool) {
	if r.status != http.StatusOK || r.over {
		return listAnswer{}, false
	}
	a := listAnswer{version: r.version, status: r.status, header: r.header, msg: r.body, flushed: r.flushed}
	if mediaType(r.header.Get("Content-Type")) == "text/event-stream" {
		start := bytes.Index(r.body, []byte("data: "))
		if start < 0 || bytes.Count(r.body, []byte("data: ")) != 1 {
			return listAnswer{}, false
		}
		start += len("data: ")
		end := start + bytes.IndexByte(r.body[start:], '\n')
		if end < start {
			return listAnswer{}, false
		}
		a.before, a.msg, a.after = r.body[:start], r.body[start:end], r.body[end:]
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if _, ok := guard.ResponseID(a.msg); !ok || json.Unmarshal(a.msg, &m) != nil || m.Result == nil || m.Error != nil {
		return listAnswer{}, false
	}
	return a, true
}
