package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/sync/semaphore"
)

// pending holds the requests a stdio connection has taken in and not yet
// answered, each with its share of the server's request budget, so that
// the connection can bound what they hold, stop taking more in, and wait
// for their handlers to return. The SDK counts its requests too (in its
// jsonrpc2 connection) but does not say, and its own graceful close drops
// the answers of requests still running rather than wait for them; see
// ServeStdio.
type pending struct {
	budget  *semaphore.Weighted
	log     *slog.Logger
	stop    context.Context // ends with close, and with it a wait for the budget
	cancel  context.CancelFunc
	drained chan struct{} // closed once closed and no handler runs

	mu sync.Mutex
	// requests are those whose handler has not returned, by id.
	requests map[jsonrpc.ID]*request
	closed   bool
}

// request is one request taken in.
type request struct {
	charge  int64 // of the budget, until its answer is written
	written chan struct{}
	// cancelled: the client cancelled the request, whose answer is not
	// to be written. Guarded by the pending's mu.
	cancelled bool
}

// minCharge is the least a request over stdio takes of the budget, however
// short its line: what its answer and the SDK's state for it hold. No
// connection cap bounds how many requests a stdio client has in flight;
// this does, at 512 for the default budget.
const minCharge = 64 << 10

// errInFlight is admit's refusal of a request whose id a request taken in
// and not yet answered has.
var errInFlight = errors.New("the id is in use by a request in flight")

// errClosed is admit's answer once nothing more is taken in.
var errClosed = errors.New("no more requests are taken in")

func newPending(budget *semaphore.Weighted, log *slog.Logger) *pending {
	p := &pending{budget: budget, log: log, drained: make(chan struct{}), requests: map[jsonrpc.ID]*request{}}
	p.stop, p.cancel = context.WithCancel(context.Background())
	return p
}

// open reports whether messages are still taken in.
func (p *pending) open() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.closed
}

// admit takes in a request with id, once charge bytes of the budget are
// free: until then, the caller, which reads the client's input, waits, and
// so does the client. It returns a channel closed once the request's answer
// is written, or errInFlight for an id whose request has not been
// answered, or errClosed once close is called.
func (p *pending) admit(id jsonrpc.ID, charge int64) (<-chan struct{}, error) {
	p.mu.Lock()
	_, dup := p.requests[id]
	p.mu.Unlock()
	if dup {
		return nil, errInFlight
	}
	if !p.budget.TryAcquire(charge) {
		p.log.Debug("input waits: the requests in flight hold the whole request budget", "request_bytes", charge)
		if err := p.budget.Acquire(p.stop, charge); err != nil {
			return nil, errClosed
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.budget.Release(charge)
		return nil, errClosed
	}
	r := &request{charge: charge, written: make(chan struct{})}
	p.requests[id] = r
	return r.written, nil
}

// answered records that the handler of the request with id has returned:
// its answer is on its way, and the id free for another request, as the
// client may reuse it once it has read the answer. It returns the request,
// for written, or nil if none has the id.
func (p *pending) answered(id jsonrpc.ID) *request {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.requests[id]
	if r != nil {
		delete(p.requests, id)
		p.checkDrained()
	}
	return r
}

// cancelled marks the request with id, if one is in flight, as cancelled by
// the client. A request already answered is not: its answer went before
// the cancellation, and the id may be another request's by now.
func (p *pending) cancelled(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.requests[id]; r != nil {
		r.cancelled = true
	}
}

// written records that the answer to r, if not nil, was written, or never
// will be, and gives its charge back.
func (p *pending) written(r *request) {
	if r != nil {
		p.budget.Release(r.charge)
		close(r.written)
	}
}

// stopped is closed once close is called.
func (p *pending) stopped() <-chan struct{} { return p.stop.Done() }

// close takes nothing more in, and ends a wait for the budget. Once it
// returns, admit fails and open is false.
func (p *pending) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.cancel()
		p.checkDrained()
	}
}

func (p *pending) checkDrained() {
	if p.closed && len(p.requests) == 0 {
		close(p.drained)
	}
}

// wait waits, after close, until the handler of every request taken in has
// returned, or for timeout. It reports whether all have.
func (p *pending) wait(timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-p.drained:
		return true
	case <-t.C:
		return false
	}
}

// release, once the SDK is done with the connection, gives back the
// charges of the requests it will not answer. Answers still being written
// keep theirs until the write ends.
func (p *pending) release() {
	p.mu.Lock()
	left := p.requests
	p.requests = map[jsonrpc.ID]*request{}
	p.mu.Unlock()
	for _, r := range left {
		p.written(r)
	}
}
