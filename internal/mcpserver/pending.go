package mcpserver

import (
	"sync"
	"time"
)

// pending counts the requests a stdio connection has taken in and not yet
// answered, so that it can stop taking more and wait for those to be
// answered. The SDK counts them too (in its jsonrpc2 connection) but does
// not say, and its own graceful close drops the answers of requests still
// running rather than wait for them; see ServeStdio.
type pending struct {
	mu      sync.Mutex
	n       int
	closed  bool
	drained chan struct{} // closed once closed and n is 0
}

func newPending() *pending { return &pending{drained: make(chan struct{})} }

// admit reports whether a message just read may still be handled, and if
// it may and is a request, counts it. After close, nothing is admitted.
func (p *pending) admit(request bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if request {
		p.n++
	}
	return true
}

// done records that an admitted request was answered, or will never be.
func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n--
	p.checkDrained()
}

// close admits nothing more. Once it returns, admit returns false.
func (p *pending) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.checkDrained()
	}
}

func (p *pending) checkDrained() {
	if p.closed && p.n == 0 {
		close(p.drained)
	}
}

// wait waits, after close, until every admitted request is done, or for
// timeout. It reports whether all were.
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
