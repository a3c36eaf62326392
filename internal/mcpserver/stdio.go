package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
)

// MaxMessageSize bounds one inbound message on either transport. Tool
// arguments are the only large part of a request; 4 MiB is far above any a
// model writes and small enough that a client cannot make the server
// buffer much.
const MaxMessageSize = 4 << 20

// StdioOptions configure ServeStdio.
type StdioOptions struct {
	// DrainTimeout bounds how long, after stdin closes, the server waits for
	// calls in flight to answer before it exits.
	DrainTimeout time.Duration
	// ShutdownGrace bounds how long, after ctx ends, calls in flight may
	// finish before they are cancelled. No new message is read meanwhile.
	ShutdownGrace time.Duration
	Logger        *slog.Logger
}

// ServeStdio serves one client over newline-delimited JSON-RPC on in and
// out until in ends or ctx is cancelled. Each inbound line is checked by the
// guard: a malformed one is answered with a JSON-RPC error and the
// connection goes on, where the SDK alone would close it.
//
// When in ends, requests already read are still answered (up to
// DrainTimeout), so `printf '...' | wasmcp serve` gets its responses.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts StdioOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &stdoutWriter{w: out, pending: map[string]bool{}, idle: make(chan struct{}, 1), ids: newIDSwaps()}
	pr, pw := io.Pipe()
	// The session outlives ctx: ctx ending starts a graceful stop, in
	// which calls in flight may still finish.
	session, err := s.mcp.Connect(context.WithoutCancel(ctx), &mcp.IOTransport{Reader: pr, Writer: nopCloser{w}, MaxLineLength: MaxMessageSize + 1}, nil)
	if err != nil {
		return fmt.Errorf("starting MCP session: %w", err)
	}

	var stopped atomic.Bool
	readErr := make(chan error, 1)
	go func() { readErr <- forwardLines(in, pw, w, &stopped, log) }()

	select {
	case err = <-readErr:
		w.waitIdle(opts.DrainTimeout)
	case <-ctx.Done():
		stopped.Store(true)
		log.Info("shutting down", "grace", opts.ShutdownGrace)
		w.waitIdle(opts.ShutdownGrace)
		err = nil
	}
	pw.Close()
	session.Close()
	_ = session.Wait()
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// forwardLines reads lines from in, answers malformed ones, and passes
// well-formed ones to the SDK through pw. It returns io.EOF when in ends.
func forwardLines(in io.Reader, pw io.Writer, w *stdoutWriter, stopped *atomic.Bool, log *slog.Logger) error {
	r := bufio.NewReaderSize(in, 64<<10)
	// One buffer holds each line in turn: a line is done with once it is
	// answered or forwarded, as pw.Write returns only when the SDK has
	// read it all.
	var buf []byte
	for {
		if stopped.Load() {
			return nil
		}
		line, tooLong, err := readLine(r, MaxMessageSize, buf)
		if tooLong {
			log.Warn("refused oversized message", "limit", MaxMessageSize)
			w.writeLine(guard.ErrorResponse(nil, guard.CodeInvalidRequest, fmt.Sprintf("invalid request: message exceeds %d bytes", MaxMessageSize)))
		} else if msg := guard.Trim(line); len(msg) > 0 {
			v := guard.Inspect(msg)
			switch v.Kind {
			case guard.Invalid:
				log.Warn("refused malformed message", "code", v.Code, "reason", v.Message)
				w.writeLine(guard.ErrorResponse(v.ID, v.Code, v.Message))
			default:
				if msg = w.inbound(msg, v); msg != nil {
					if _, werr := pw.Write(append(msg, '\n')); werr != nil {
						return werr
					}
				}
			}
		}
		if err != nil {
			return err
		}
		// A rare large message's buffer is let go rather than held for
		// the rest of the session.
		if buf = line; cap(buf) > maxKeptLine {
			buf = nil
		}
	}
}

// maxKeptLine bounds the line buffer forwardLines keeps between messages.
const maxKeptLine = 64 << 10

// readLine reads one line of at most limit bytes, into buf's storage if it
// fits. A longer line is read to its end and discarded, so the next message
// is still found.
func readLine(r *bufio.Reader, limit int, buf []byte) (line []byte, tooLong bool, err error) {
	line = buf[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 { // +1 for the newline
			tooLong = true
			line = line[:0]
		} else if !tooLong {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// stdoutWriter serialises writes to stdout from the SDK and the guard, one
// whole message per Write, tracks which requests still await an answer,
// and gives each answer the id its request came with.
type stdoutWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[string]bool
	idle    chan struct{}
	ids     *idSwaps
}

// inbound prepares msg, a well-formed message v describes, for the SDK: it
// returns the message to pass on, or nil to drop it. A request whose id the
// SDK would not give back unchanged gets a substitute id.
func (s *stdoutWriter) inbound(msg []byte, v guard.Verdict) []byte {
	switch {
	case v.Kind == guard.Request:
		id := v.ID
		if !guard.PlainID(id) {
			id = s.ids.substitute("", id)
			msg, _ = guard.WithMember(msg, "id", id)
		}
		s.expect(id)
	case v.Method == "notifications/cancelled":
		msg = s.ids.cancelled("", msg, v.Params)
	}
	return msg
}

// Write is called by the SDK with one encoded message and its newline.
func (s *stdoutWriter) Write(p []byte) (int, error) {
	n := len(p)
	if id, ok := guard.ResponseID(p); ok {
		if client, swapped := s.ids.original(id); swapped {
			s.ids.forget(id)
			p, _ = guard.WithMember(p, "id", client)
		}
		s.answered(id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *stdoutWriter) writeLine(msg []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.Write(append(msg, '\n'))
}

func (s *stdoutWriter) expect(id json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[guard.IDKey(id)] = true
}

func (s *stdoutWriter) answered(id json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, guard.IDKey(id))
	if len(s.pending) == 0 {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

// waitIdle waits until every forwarded request has been answered, or for
// the timeout.
func (s *stdoutWriter) waitIdle(timeout time.Duration) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-s.idle:
		case <-deadline.C:
			return
		}
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
