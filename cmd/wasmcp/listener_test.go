package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// logSignal is a slog handler that passes each record's message to a
// channel, so a test can wait for a log line.
type logSignal struct {
	slog.Handler
	messages chan string
}

func newLogSignal() logSignal {
	return logSignal{Handler: slog.DiscardHandler, messages: make(chan string, 16)}
}

func (h logSignal) Enabled(context.Context, slog.Level) bool { return true }

func (h logSignal) Handle(_ context.Context, r slog.Record) error {
	h.messages <- r.Message
	return nil
}

// waitFor waits for a log message containing part.
func (h logSignal) waitFor(t *testing.T, part string) {
	t.Helper()
	for {
		select {
		case m := <-h.messages:
			if strings.Contains(m, part) {
				return
			}
		case <-time.After(time.Minute):
			t.Fatalf("never logged %q", part)
		}
	}
}

// serveLimited serves handler on a loopback listener capped at max
// connections, and returns its address.
func serveLimited(t *testing.T, max int, log *slog.Logger, handler http.Handler) (string, *connLimit) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limit := newConnLimit(ln, max, log)
	hs := &http.Server{Handler: handler, ConnState: limit.ConnState}
	go hs.Serve(limit)
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String(), limit
}

// get makes one request on a client of its own, so on a connection of its
// own, and returns the status; the timeout only guards against a hang.
func get(url string) (int, error) {
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// waitIdle waits until the server has reported n connections idle.
func (l *connLimit) waitIdle(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		idle := 0
		for _, s := range l.conns {
			if s.state == http.StateIdle {
				idle++
			}
		}
		if idle >= n {
			return
		}
		l.cond.Wait()
	}
}

// keepAlive makes a request on a raw connection and reads the answer,
// leaving the connection open and idle.
func keepAlive(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r := bufio.NewReader(c)
	roundTrip(t, c, r)
	return c, r
}

func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader) {
	t.Helper()
	if _, err := io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("reading an answer on a kept-alive connection: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func TestIdleConnectionsMakeRoomForNewOnes(t *testing.T) {
	addr, limit := serveLimited(t, 2, slog.New(slog.DiscardHandler), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	// A client has its answer before the server marks the connection
	// idle, so each is waited for: the order they turned idle in is the
	// order the test means.
	oldest, oldestR := keepAlive(t, addr)
	limit.waitIdle(1)
	newer, newerR := keepAlive(t, addr)
	limit.waitIdle(2)

	if status, err := get("http://" + addr + "/ok"); err != nil || status != http.StatusOK {
		t.Fatalf("a new client at the limit: status %d, %v", status, err)
	}
	// The connection idle longest made the room; the other still serves.
	oldest.SetReadDeadline(time.Now().Add(time.Minute))
	var ne net.Error
	if _, err := oldestR.ReadByte(); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection idle longest is still open (read: %v)", err)
	}
	roundTrip(t, newer, newerR)
}

func TestBusyConnectionsAreNeverClosed(t *testing.T) {
	log := newLogSignal()
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	var released atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/block", func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
	})
	mux.HandleFunc("/ok", func(http.ResponseWriter, *http.Request) {
		if !released.Load() {
			t.Error("a new connection was served while every connection was busy")
		}
	})
	addr, _ := serveLimited(t, 2, slog.New(log), mux)

	blocked := make(chan error, 2)
	for range 2 {
		go func() {
			status, err := get("http://" + addr + "/block")
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("status %d", status)
			}
			blocked <- err
		}()
	}
	<-entered
	<-entered
	newcomer := make(chan error, 1)
	go func() {
		status, err := get("http://" + addr + "/ok")
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("status %d", status)
		}
		newcomer <- err
	}()
	log.waitFor(t, "at the connection limit")

	released.Store(true)
	close(release)
	for range 2 {
		if err := <-blocked; err != nil {
			t.Errorf("a busy request: %v", err)
		}
	}
	if err := <-newcomer; err != nil {
		t.Errorf("the new connection, once there was room: %v", err)
	}
}

func TestClosingTheListenerEndsAWaitingAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := newLogSignal()
	limit := newConnLimit(ln, 1, slog.New(log))
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	busy, err := limit.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	limit.ConnState(busy, http.StateActive)
	accepted := make(chan error, 1)
	go func() {
		_, err := limit.Accept()
		accepted <- err
	}()
	log.waitFor(t, "at the connection limit")
	limit.Close()
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close = %v; want net.ErrClosed", err)
	}
}
