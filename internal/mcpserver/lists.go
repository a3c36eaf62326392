package mcpserver

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// listAnswer is one kept answer: the SDK's whole response message.
type listAnswer struct {
	version uint64
	msg     []byte
}

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

// lookup returns the SDK's answer to a list request with method and
// params under the catalog in service, if one is kept.
func (l *listAnswers) lookup(method string, params []byte) ([]byte, bool) {
	if l.off || !listMethods[method] {
		return nil, false
	}
	k := listKey(method, params)
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.answers[k]
	if !ok || a.version != l.version.current() {
		return nil, false
	}
	return a.msg, true
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
// if that was a list request, it succeeded, and the catalog is the one
// it was made under.
func (l *listAnswers) answered(id jsonrpc.ID, msg []byte, failed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	req, ok := l.waiting[id]
	if !ok {
		return
	}
	delete(l.waiting, id)
	if failed || req.version != l.version.current() {
		return
	}
	if old, ok := l.answers[req.key]; ok {
		l.bytes -= len(old.msg)
	}
	if l.bytes+len(msg) > maxListAnswerBytes {
		// Answers of older versions go first; if that is not enough,
		// this one is not kept.
		for k, a := range l.answers {
			if a.version != req.version {
				l.bytes -= len(a.msg)
				delete(l.answers, k)
			}
		}
		if l.bytes+len(msg) > maxListAnswerBytes {
			return
		}
	}
	l.answers[req.key] = listAnswer{version: req.version, msg: msg}
	l.bytes += len(msg)
}
