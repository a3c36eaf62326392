package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

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
// connection goes on, where the SDK alone would close it. Each request
// holds its length, and at least 64 KiB, of the server's request budget
// (Options.RequestBudget) until it is answered; while the budget is spent,
// no more is read from in.
//
// When in ends, requests already read are still answered (up to
// DrainTimeout), so `printf '...' | wasmcp serve` gets its responses. When
// ctx ends, no line is taken in any more, and calls in flight may finish
// (up to ShutdownGrace). Either wait also bounds the time answers may take
// to be written: a client that does not read out cannot hold ServeStdio
// up. Once ServeStdio returns, nothing more is written to out, but for a
// write out was holding up; a line it was waiting for on in may still be
// read (a read of stdin cannot be interrupted) and is then dropped.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer, opts StdioOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := newStdioConn(out, log, s.budget, &s.version)
	c.lists.off = s.sdkOnly
	// The session outlives ctx: ctx ending starts a graceful stop, in
	// which calls in flight may still finish.
	// The owner of the connection's tasks goes with every request the SDK
	// hands on, for the 2026-07-28 calls it makes tasks of.
	owner := "stdio:" + rand.Text()
	session, err := s.mcp.Connect(context.WithValue(context.WithoutCancel(ctx), connectionOwnerKey{}, owner), stdioTransport{c}, nil)
	if err != nil {
		return fmt.Errorf("starting MCP session: %w", err)
	}
	c.tasks, c.session, c.owner, c.srv = s.tasks, session, owner, s
	readErr := make(chan error, 1)
	go func() { readErr <- c.readFrom(in) }()

	var wait time.Duration // for the calls in flight to be answered
	stopping := false
	select {
	case err = <-readErr:
		if errors.Is(err, io.EOF) {
			err = nil
		}
		wait = opts.DrainTimeout
	case <-ctx.Done():
		wait = opts.ShutdownGrace
		stopping = true
	case <-c.closed:
		// The SDK ended the connection, as a write failed: nothing more
		// can be answered.
	}
	c.calls.close()
	if stopping {
		log.Info("shutting down", "grace", wait)
	}
	end := time.Now().Add(wait)
	if wait > 0 && !c.calls.wait(wait) {
		log.Warn("calls still running at the end of the wait are cancelled", "wait", wait)
	}
	// The client's tasks end with it; a tasks/result still waiting is
	// answered.
	tasksReturned := s.tasks.endOwner(c.owner)
	// Input ends for the SDK only now: at end of input it cancels the
	// calls still running and drops their answers.
	c.Close()
	// The SDK's Close waits for every answer to be written, and a client
	// that does not read stdout can hold a write forever: the wait is
	// bounded by what is left of ours, and at least long enough for
	// calls just cancelled, the tasks' among them, to return.
	ended := make(chan struct{})
	go func() {
		session.Close()
		_ = session.Wait()
		c.answering.Wait()
		<-tasksReturned
		close(ended)
	}()
	t := time.NewTimer(max(time.Until(end), cancelWait))
	defer t.Stop()
	select {
	case <-ended:
	case <-t.C:
		log.Warn("stopping with answers unwritten: stdout is not being read", "wait", wait)
	}
	if werr := c.finish(); err == nil {
		err = werr
	}
	c.calls.release()
	return err
}

// cancelWait is how long, once the wait for calls in flight is over, the
// calls it cancels have to return before ServeStdio returns without them.
// A cancelled run stops within milliseconds.
const cancelWait = time.Second

// stdioTransport hands the SDK its one connection.
type stdioTransport struct{ c *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// stdioConn is the mcp.Connection of ServeStdio. Lines are read by
// readFrom, checked by the guard and decoded; the SDK takes them in through
// Read. Its messages and the guard's errors share out, one whole message
// per write. Request ids the SDK would not give back unchanged are
// swapped on the way in and restored on the way out (see idSwaps).
type stdioConn struct {
	log   *slog.Logger
	ids   *idSwaps
	calls *pending
	// tasks answers the tasks requests of the connection's session, as
	// owner.
	tasks   *taskStore
	session *mcp.ServerSession
	owner   string
	// lists answers list requests the SDK has answered before.
	lists *listAnswers
	// srv is the server whose lean path (leancall.go) runs calls here,
	// lean the calls it runs, and base their context, cancelled by Close.
	srv        *Server
	lean       leanCalls
	base       context.Context
	cancelBase context.CancelFunc
	// answering counts the answers being made or written without the SDK,
	// which ServeStdio waits for as the SDK's Close waits for its own.
	answering sync.WaitGroup

	msgs      chan jsonrpc.Message // from readFrom to Read
	closed    chan struct{}        // by Close: Read returns io.EOF
	closeOnce sync.Once

	out        io.Writer
	writing    chan struct{} // holds a token while a message is written to out
	finished   chan struct{} // closed by finish: nothing more is written
	finishOnce sync.Once
	errMu      sync.Mutex
	writeErr   error // the first failed write
}

func newStdioConn(out io.Writer, log *slog.Logger, budget *semaphore.Weighted, version *catalogVersion) *stdioConn {
	base, cancel := context.WithCancel(context.Background())
	return &stdioConn{
		base:       base,
		cancelBase: cancel,
		log:        log,
		lists:      newListAnswers(version),
		ids:        newIDSwaps(),
		calls:      newPending(budget, log),
		msgs:       make(chan jsonrpc.Message),
		closed:     make(chan struct{}),
		out:        out,
		writing:    make(chan struct{}, 1),
		finished:   make(chan struct{}),
	}
}

// readFrom reads lines from in and takes each in until in ends (io.EOF),
// fails, or no more is taken in.
func (c *stdioConn) readFrom(in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	// One buffer holds each line in turn: a line is done with once it is
	// answered or decoded, since decoding copies what it keeps.
	var buf []byte
	for {
		line, tooLong, err := readLine(r, MaxMessageSize, buf)
		more := true
		if tooLong {
			more = c.refuse(guard.ErrorResponse(nil, guard.CodeInvalidRequest, fmt.Sprintf("invalid request: message exceeds %d bytes", MaxMessageSize)),
				"refused oversized message", "limit", MaxMessageSize)
		} else if msg := guard.Trim(line); len(msg) > 0 {
			more = c.take(msg)
		}
		if !more {
			return nil
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

// maxKeptLine bounds the line buffer readFrom keeps between messages.
const maxKeptLine = 64 << 10

// take answers msg if it is malformed, and hands it to the SDK if not. It
// reports whether more lines are taken in.
func (c *stdioConn) take(msg []byte) bool {
	v := guard.Inspect(msg)
	if v.Kind == guard.Invalid {
		return c.refuse(guard.ErrorResponse(v.ID, v.Code, v.Message), "refused malformed message", "code", v.Code, "reason", v.Message)
	}
	wireID := v.ID // as the SDK gets it
	switch {
	case v.Kind == guard.Request && !guard.PlainID(v.ID):
		wireID = c.ids.substitute("", v.ID)
		msg, _ = guard.WithMember(msg, "id", wireID)
	case v.Method == "notifications/cancelled":
		if msg = c.ids.cancelled("", msg, v.Params); msg == nil {
			return c.calls.open()
		}
		if id, ok := cancelledID(guard.Inspect(msg).Params); ok {
			c.calls.cancelled(id)
			c.lean.cancelCall(id)
		}
	}
	if v.Kind == guard.Request && v.Method == "tools/call" && c.leanOn() {
		if call, ok := parseLeanCall(v.Params, *c.srv.lean.Load()); ok {
			return c.takeLean(wireID, v, msg, call)
		}
	}
	if v.Kind == guard.Request && listMethods[v.Method] {
		// Before the SDK's decoding, which costs more than the answer.
		if answer, ok := c.lists.lookup(v.Method, v.Params); ok {
			return c.answerAgain(wireID, v, len(msg), answer)
		}
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		// What the guard passes, the SDK decodes, but for a response's
		// error member, which the guard does not read; the SDK would
		// end the connection on it.
		return c.refuse(guard.ErrorResponse(v.ID, guard.CodeInvalidRequest, "invalid request: malformed message: "+err.Error()),
			"refused malformed message", "code", guard.CodeInvalidRequest, "reason", err)
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		// A notification, or an answer to the SDK: handled as it comes,
		// and held no longer.
		return c.calls.open() && c.hand(m)
	}
	written, more, ok := c.admit(req.ID, v, len(msg))
	if !ok {
		return more
	}
	if takes, extension := c.storeTakes(req.Method, v.Params); takes {
		// Answered here, as the SDK knows no tasks; tasks/result may wait
		// long, so each is answered in the background, held against the
		// budget as any request is.
		go c.answerTask(req, bytes.Clone(v.ID), v.Params, extension)
		return true
	}
	c.lists.handing(req.ID, req.Method, v.Params)
	if !c.hand(m) {
		c.calls.written(c.calls.answered(req.ID))
		return false
	}
	if req.Method == "initialize" {
		// The SDK handles nothing else until an initialize is answered:
		// what was taken in meanwhile would only wait in its queue,
		// beyond the budget.
		select {
		case <-written:
		case <-c.calls.stopped():
		}
	}
	return true
}

// storeTakes reports whether the task store answers a request of method
// with params, and whether as a request of the 2026-07-28 extension. A
// request whose _meta names a protocol version is of 2026-07-28, which
// has no session to initialize: the store takes the extension's methods,
// and the SDK the rest, among them its tools/call (see serverDirected)
// and the methods the extension removed, which it does not know.
func (c *stdioConn) storeTakes(method string, params json.RawMessage) (takes, extension bool) {
	legacy := c.tasks.handles(method, params)
	if !legacy && !extensionTaskMethods[method] {
		return false, false
	}
	if !guard.HasModernMeta(params) {
		return legacy, false
	}
	return extensionTaskMethods[method], true
}

// answerTask answers req, a request of the tasks protocol whose id the
// client wrote as id: of the extension, or of 2025-11-25 once the session
// is initialized.
func (c *stdioConn) answerTask(req *jsonrpc.Request, id, params json.RawMessage, extension bool) {
	var answer []byte
	switch {
	case extension:
		result, rpcErr := c.tasks.answerExtension(c.owner, req.Method, params)
		answer = rpcAnswer(id, result, rpcErr)
	case c.session.InitializeParams() == nil:
		answer = guard.ErrorResponse(id, guard.CodeInvalidRequest, "invalid request: the session is not initialized; send initialize first")
	default:
		// A task's end is told as notifications/tasks/status, written as
		// any message is.
		notify := func(msg []byte) { c.write(msg) } // a failed write is the connection's, recorded there
		answer = c.tasks.taskResponse(id, taskRequest{ctx: context.Background(), owner: c.owner, session: c.session, method: req.Method, params: params, notify: notify})
	}
	c.ids.answered(req.ID)
	r := c.calls.answered(req.ID)
	c.write(append(answer, '\n'))
	c.calls.written(r)
}

// admit holds a request's share of the budget until it is answered and
// the answer written (written). A request whose id is in use by one in
// flight is refused; when nothing more is taken in, neither is it. Unless
// ok, more reports whether more lines are taken in.
func (c *stdioConn) admit(id jsonrpc.ID, v guard.Verdict, size int) (written <-chan struct{}, more, ok bool) {
	written, err := c.calls.admit(id, max(int64(size), minCharge))
	switch {
	case errors.Is(err, errInFlight):
		// The SDK would answer it without its id.
		return nil, c.refuse(guard.ErrorResponse(v.ID, guard.CodeInvalidRequest, "invalid request: the id is in use by a request in flight; give each request in flight an id of its own"),
			"refused a request whose id is in use", "code", guard.CodeInvalidRequest), false
	case err != nil:
		return nil, false, false
	}
	return written, true, true
}

// admitUndecoded is admit for a request the SDK does not decode, whose id
// it would get as wireID: the id as its decoder would make it.
func (c *stdioConn) admitUndecoded(wireID json.RawMessage, v guard.Verdict, size int) (id jsonrpc.ID, more, ok bool) {
	id, err := sdkID(wireID)
	if err != nil {
		return id, c.refuse(guard.ErrorResponse(v.ID, guard.CodeInvalidRequest, "invalid request: "+err.Error()), "refused malformed message", "code", guard.CodeInvalidRequest, "reason", err), false
	}
	_, more, ok = c.admit(id, v, size)
	return id, more, ok
}

// answerAgain answers a request of v, whose id the SDK would get as
// wireID, with answer, the SDK's answer to the same request made before,
// as the SDK's would be: held against the budget, refused while its id is
// in flight, and with the id the client wrote.
func (c *stdioConn) answerAgain(wireID json.RawMessage, v guard.Verdict, size int, answer []byte) bool {
	id, more, ok := c.admitUndecoded(wireID, v, size)
	if !ok {
		return more
	}
	out, _ := guard.WithMember(answer, "id", v.ID)
	// Answered and written in the background, as the SDK answers, holding
	// the request's share of the budget until it is written: a client that
	// does not read its answers stops the reading only once the budget is
	// spent, whatever it asks.
	c.answering.Go(func() {
		c.ids.answered(id)
		r := c.calls.answered(id)
		c.write(append(out, '\n'))
		c.calls.written(r)
	})
	return true
}

// leanOn reports whether the lean call path may take calls: the SDK has
// taken a 2026-07-28 request of the session, which sets the session up
// (and the lean path, which never reaches the SDK, would not), and no
// initialize of an older revision, whose session answers otherwise.
func (c *stdioConn) leanOn() bool {
	if c.srv == nil || c.srv.sdkOnly {
		return false
	}
	p := c.session.InitializeParams()
	return p != nil && p.ProtocolVersion >= modernVersion
}

// takeLean takes call, a request of v whose id the SDK would get as
// wireID, and which it would get as msg, on the lean path: held against the budget and refused while its
// id is in flight, as any request, and run in the background.
func (c *stdioConn) takeLean(wireID json.RawMessage, v guard.Verdict, msg []byte, call leanCall) bool {
	id, more, ok := c.admitUndecoded(wireID, v, len(msg))
	if !ok {
		return more
	}
	// The line's buffer is the next line's.
	call.args, call.msg = bytes.Clone(call.args), bytes.Clone(msg)
	// Cancellable before the next line is taken, which may cancel it.
	ctx, cancel := context.WithCancel(c.base)
	c.lean.add(id, cancel)
	clientID := bytes.Clone(v.ID)
	c.answering.Go(func() { c.runLean(ctx, cancel, id, clientID, call) })
	return true
}

// sdkID is a request's id as the SDK decodes it from raw: what its
// decoder makes of the JSON value (a float64 or a string), made an ID.
func sdkID(raw json.RawMessage) (jsonrpc.ID, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}, fmt.Errorf("the id %s: %w", raw, err)
	}
	return jsonrpc.MakeID(v)
}

// hand hands m to the SDK, unless the SDK's input has ended. It reports
// whether it did.
func (c *stdioConn) hand(m jsonrpc.Message) bool {
	select {
	case c.msgs <- m:
		return true
	case <-c.closed:
		return false
	}
}

// refuse logs why a line is refused and writes the guard's answer to it,
// unless no more lines are taken in. It reports whether more are.
func (c *stdioConn) refuse(answer []byte, why string, attrs ...any) bool {
	if !c.calls.open() {
		return false
	}
	c.log.Warn(why, attrs...)
	c.write(append(answer, '\n'))
	return true
}

// Read is called by the SDK for each message it takes in.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.msgs:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write is called by the SDK with each message it sends: answers,
// notifications, and requests of its own.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		// Its handler has returned; the answer is on its way, or never
		// will be. A client that does not read stdout may keep the write
		// waiting, which ServeStdio's last wait bounds, and the request
		// its share of the budget.
		r := c.calls.answered(resp.ID)
		defer c.calls.written(r)
		if r != nil && r.cancelled {
			// The SDK writes the answer of a handler that returns after
			// the client cancelled its request (with ctx never done);
			// the revisions say it should not be sent, and the lean
			// path sends none.
			c.lists.answered(resp.ID, nil, true)
			c.ids.answered(resp.ID)
			// After the id is free: a client may use it again from now.
			c.log.Debug("answer dropped: the client cancelled the request")
			return nil
		}
	}
	// As the SDK's own connections do: a message for a request that was
	// cancelled is not sent.
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message for stdout: %w", err)
	}
	if isResp {
		c.lists.answered(resp.ID, data, resp.Error != nil)
		if id, swapped := c.ids.answered(resp.ID); swapped {
			data, _ = guard.WithMember(data, "id", id)
		}
	}
	return c.write(append(data, '\n'))
}

// write writes one whole message to out, unless finish has been called.
// Writes take turns through a channel rather than a mutex, so that those
// waiting behind one that out holds up give up when finish is called.
func (c *stdioConn) write(p []byte) error {
	select {
	case c.writing <- struct{}{}:
	case <-c.finished:
		return errFinished
	}
	defer func() { <-c.writing }()
	select {
	case <-c.finished:
		return errFinished
	default:
	}
	c.errMu.Lock()
	err := c.writeErr
	c.errMu.Unlock()
	if err != nil {
		return err
	}
	if _, err := c.out.Write(p); err != nil {
		c.errMu.Lock()
		defer c.errMu.Unlock()
		c.writeErr = fmt.Errorf("writing to stdout: %w", err)
		return c.writeErr
	}
	return nil
}

// errFinished is what a write after ServeStdio returns gets.
var errFinished = errors.New("the stdio connection is closed")

// finish ends all writing, and returns the error a write met, if any. A
// write that out holds up is not waited for: it may still complete.
func (c *stdioConn) finish() error {
	c.finishOnce.Do(func() { close(c.finished) })
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.writeErr
}

// Close ends the SDK's input. The SDK calls it when it ends the connection
// itself (a write failed), and ServeStdio when the wait is over.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		// As the SDK does with its own at end of input: calls on the lean
		// path still running are cancelled, and their answers dropped.
		c.cancelBase()
	})
	return nil
}

// SessionID is empty: stdio has no sessions.
func (c *stdioConn) SessionID() string { return "" }

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
