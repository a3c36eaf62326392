package main

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimit caps the connections open at once. At the cap, a new
// connection gets in by closing the one that has been idle longest: a
// keep-alive connection between requests, or one that has sent nothing
// yet. A connection with a request in progress, an open event stream among
// them, is never closed; with every connection busy, the new one waits
// until one turns idle or closes. A fixed cap alone (netutil.LimitListener)
// would let idle keep-alive connections lock new clients out until their
// idle timeout.
//
// The http.Server reports each connection's state through ConnState, which
// must be set as its ConnState hook.
type connLimit struct {
	net.Listener
	max int
	log *slog.Logger

	mu     sync.Mutex
	cond   *sync.Cond // signalled when a connection closes or turns idle
	conns  map[*limitedConn]connState
	closed bool
}

// connState is what the server last reported of a connection, and when.
type connState struct {
	state http.ConnState
	since time.Time
}

func newConnLimit(l net.Listener, max int, log *slog.Logger) *connLimit {
	cl := &connLimit{Listener: l, max: max, log: log, conns: map[*limitedConn]connState{}}
	cl.cond = sync.NewCond(&cl.mu)
	return cl
}

// Accept accepts a connection, and makes room for it first if the cap is
// reached.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	waited := false
	for len(l.conns) >= l.max && !l.closed {
		if idle := l.idlest(); idle != nil {
			delete(l.conns, idle)
			// Closing the socket is quick, and the server's own Close of
			// it later finds it already gone from conns.
			idle.Conn.Close()
			continue
		}
		if !waited {
			waited = true
			l.log.Warn("at the connection limit with every connection busy; a new connection waits for one to turn idle", "limit", l.max)
		}
		l.cond.Wait()
	}
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	lc := &limitedConn{Conn: c, limit: l}
	l.conns[lc] = connState{state: http.StateNew, since: time.Now()}
	return lc, nil
}

// idlest returns the connection that has been idle, or new, the longest,
// or nil if every connection is busy. l.mu must be held.
func (l *connLimit) idlest() *limitedConn {
	var found *limitedConn
	var since time.Time
	for c, s := range l.conns {
		if (s.state == http.StateIdle || s.state == http.StateNew) && (found == nil || s.since.Before(since)) {
			found, since = c, s.since
		}
	}
	return found
}

// ConnState records a connection's state; it is the http.Server's
// ConnState hook. The server hands it the connection Accept returned, or
// the TLS connection around it.
func (l *connLimit) ConnState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = tc.NetConn()
	}
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, open := l.conns[lc]; !open {
		return
	}
	switch state {
	case http.StateClosed:
		delete(l.conns, lc)
	case http.StateHijacked:
		// The handler owns it now; it counts as busy until it is closed.
		l.conns[lc] = connState{state: http.StateActive, since: time.Now()}
		return
	default:
		l.conns[lc] = connState{state: state, since: time.Now()}
		if state != http.StateIdle {
			return
		}
	}
	l.cond.Broadcast()
}

// Close stops accepting, and ends an Accept waiting for room.
func (l *connLimit) Close() error {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	return l.Listener.Close()
}

// limitedConn is a connection connLimit counts until it is closed.
type limitedConn struct {
	net.Conn
	limit *connLimit
}

func (c *limitedConn) Close() error {
	l := c.limit
	l.mu.Lock()
	if _, open := l.conns[c]; open {
		delete(l.conns, c)
		l.cond.Broadcast()
	}
	l.mu.Unlock()
	return c.Conn.Close()
}
