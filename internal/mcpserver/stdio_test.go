package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"
)

func TestReadLineSkipsOversizedLines(t *testing.T) {
	long := strings.Repeat("x", 100)
	r := bufio.NewReaderSize(strings.NewReader("short\n"+long+"\nnext\nlast"), 16)
	var got []string
	var buf []byte
	for {
		line, tooLong, err := readLine(r, 50, buf)
		buf = line // as forwardLines does, each line reuses the last one's storage
		switch {
		case tooLong:
			got = append(got, "<too long>")
		case len(line) > 0:
			got = append(got, strings.TrimSuffix(string(line), "\n"))
		}
		if err != nil {
			break
		}
	}
	want := []string{"short", "<too long>", "next", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines = %q; want %q", got, want)
	}
}

// TestServeStdioKeepsGoingAfterBadLines drives ServeStdio in-process: each
// malformed line is answered and the next request still works, and the
// request read just before end of input is answered before ServeStdio
// returns.
func TestServeStdioKeepsGoingAfterBadLines(t *testing.T) {
	s := newTestServer(t, nil)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{oops`,
		``,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`,
	}, "\n")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(context.Background(), strings.NewReader(in), pw, StdioOptions{DrainTimeout: time.Minute})
	}()
	replies := map[string]string{}
	dec := json.NewDecoder(pr)
	for len(replies) < 3 {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("decoding a reply: %v (got %v)", err, replies)
		}
		if m.Error != nil {
			replies[string(m.ID)] = fmt.Sprintf("error %d", m.Error.Code)
		} else {
			replies[string(m.ID)] = string(m.Result)
		}
	}
	if replies["null"] != "error -32700" {
		t.Errorf("bad line: %q", replies["null"])
	}
	if !strings.Contains(replies["2"], `{\"n\":1}`) {
		t.Errorf("call after the bad line: %q", replies["2"])
	}
	pr.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio = %v", err)
	}
}

// lines is an io.Writer that keeps what ServeStdio writes, line by line.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for line := range strings.Lines(string(p)) {
		l.all = append(l.all, line)
	}
	return len(p), nil
}

// n is the number of lines written so far.
func (l *lines) n() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

// since returns the lines written after the first n.
func (l *lines) since(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all[n:])
}

// TestServeStdioTakesNothingInOnceItStops sends lines while ServeStdio
// shuts down, with a call in flight, and after it has returned: none is
// answered or passed to the SDK, while the call in flight is. In a bubble,
// synctest.Wait tells when every goroutine ServeStdio left behind has done
// all it will with what it was sent.
func TestServeStdioTakesNothingInOnceItStops(t *testing.T) {
	s := newTestServer(t, nil)
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s.mcp.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
		})
		inR, inW := io.Pipe()
		out := &lines{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- s.ServeStdio(ctx, inR, out, StdioOptions{DrainTimeout: time.Minute, ShutdownGrace: time.Hour})
		}()
		send := func(msgs ...string) {
			go io.WriteString(inW, strings.Join(msgs, "\n")+"\n")
			synctest.Wait()
		}
		const bad, ping = `{oops`, `{"jsonrpc":"2.0","id":"late","method":"ping"}`
		send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{}}}`,
			bad)
		if got := out.since(0); len(got) != 2 || !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "-32700") }) {
			t.Errorf("before the shutdown: %q; want the initialize result and the bad line's error", got)
		}

		cancel()
		stopped := time.Now() // the bubble's clock, which moves only when all wait
		synctest.Wait()       // ServeStdio waits for the call
		mark := out.n()
		send(bad, ping)
		if got := out.since(mark); len(got) != 0 {
			t.Errorf("lines sent during the shutdown were answered: %q", got)
		}
		close(release)
		if err := <-done; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
		if waited := time.Since(stopped); waited != 0 {
			t.Errorf("ServeStdio returned %v after the shutdown began; want as soon as the call was answered", waited)
		}
		if got := out.since(mark); !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, `"id":1,`) && strings.Contains(l, "released") }) {
			t.Errorf("after the shutdown: %q; want the answer to the call in flight", got)
		}

		mark = out.n()
		send(bad, ping)
		if got := out.since(mark); len(got) != 0 {
			t.Errorf("lines sent after ServeStdio returned were answered: %q", got)
		}
		inW.Close()
	})
}

// TestDecodedMessagesKeepNoBytesOfTheLine holds the SDK to what readFrom
// assumes when it reads the next line into the last one's buffer: a
// decoded message has its own copy of what it keeps.
func TestDecodedMessagesKeepNoBytesOfTheLine(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"k":"v"}}}`)
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	want := string(m.(*jsonrpc.Request).Params)
	for i := range line {
		line[i] = ' '
	}
	if got := string(m.(*jsonrpc.Request).Params); got != want {
		t.Fatalf("params changed with the line's buffer: %q, was %q", got, want)
	}
}

// TestStdioConnWritesNothingOnceFinished writes as the SDK and the guard
// would after ServeStdio has returned.
func TestStdioConnWritesNothingOnceFinished(t *testing.T) {
	out := &lines{}
	c := newStdioConn(out, discard(), semaphore.NewWeighted(DefaultRequestBudget), &catalogVersion{})
	if err := c.finish(); err != nil {
		t.Fatalf("finish = %v", err)
	}
	id, _ := jsonrpc.MakeID("x")
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}); err == nil {
		t.Error("a write after finish succeeded")
	}
	c.write([]byte("guard\n"))
	if got := out.since(0); len(got) != 0 {
		t.Errorf("written after finish: %q", got)
	}
}

// TestServeStdioStopsWhenStdoutIsNotRead shuts down while answers wait
// for a client that never reads stdout: ServeStdio returns at the end of
// the grace period, on the bubble's clock, and says why.
func TestServeStdioStopsWhenStdoutIsNotRead(t *testing.T) {
	s := newTestServer(t, nil)
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		stuck := make(chan struct{})
		logs := &lines{}
		ctx, cancel := context.WithCancel(context.Background())
		const grace = time.Hour
		done := make(chan error, 1)
		go func() {
			done <- s.ServeStdio(ctx, inR, unread(stuck), StdioOptions{DrainTimeout: time.Minute, ShutdownGrace: grace, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		}()
		go io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		synctest.Wait() // both answers wait for stdout to be read

		cancel()
		stopped := time.Now()
		if err := <-done; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
		// The ping waits behind the initialize, whose answer the SDK writes
		// before it handles the next request: it is cancelled at the end of
		// the grace period, and has cancelWait to return.
		if waited := time.Since(stopped); waited < grace || waited > grace+cancelWait {
			t.Errorf("ServeStdio returned %v after the shutdown began; want the grace period, %v, and at most %v more", waited, grace, cancelWait)
		}
		if !slices.ContainsFunc(logs.since(0), func(l string) bool { return strings.Contains(l, "stdout is not being read") }) {
			t.Errorf("no log line says why answers were left unwritten: %q", logs.since(0))
		}
		close(stuck)
		inW.Close()
	})
}

// unread is the stdout of a client that does not read it: a write waits
// until the channel is closed, then fails.
type unread chan struct{}

func (u unread) Write([]byte) (int, error) {
	<-u
	return 0, io.ErrClosedPipe
}

// TestServeStdioReadsNoMoreThanTheBudgetHolds sends more requests than the
// request budget holds at the least a request costs, to a client that
// does not read its answers yet: in a bubble, where synctest.Wait tells
// when every goroutine waits for good, ServeStdio has read one line more
// than it took in, and once the answers are read, every request is
// answered.
func TestServeStdioReadsNoMoreThanTheBudgetHolds(t *testing.T) {
	s := newTestServerWith(t, Options{RequestBudget: MaxMessageSize})
	synctest.Test(t, func(t *testing.T) {
		const n = 100
		inR, inW := io.Pipe()
		out := &gated{open: make(chan struct{}), lines: &lines{}}
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(context.Background(), inR, out, StdioOptions{DrainTimeout: time.Minute}) }()
		var sent atomic.Int64
		go func() {
			for i := range n {
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`+"\n", i, modernMeta)
				sent.Add(1)
			}
			inW.Close()
		}()
		synctest.Wait()
		if got, want := sent.Load(), int64(MaxMessageSize/minCharge+1); got != want {
			t.Errorf("with no answer read, %d lines were read; want %d, what the budget holds and the line waiting for room", got, want)
		}
		close(out.open)
		if err := <-done; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
		if got := out.lines.n(); got != n {
			t.Errorf("%d answers; want %d", got, n)
		}
	})
}

// TestServeStdioReadsNothingMoreUntilInitializeIsAnswered holds back the
// answer to an initialize: the SDK would handle nothing else meanwhile, so
// ServeStdio reads nothing more, and answers what follows once the
// initialize's answer is written.
func TestServeStdioReadsNothingMoreUntilInitializeIsAnswered(t *testing.T) {
	s := newTestServer(t, nil)
	synctest.Test(t, func(t *testing.T) {
		inR, inW := io.Pipe()
		out := &gated{open: make(chan struct{}), lines: &lines{}}
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(context.Background(), inR, out, StdioOptions{DrainTimeout: time.Minute}) }()
		var sent atomic.Int64
		go func() {
			for _, line := range []string{
				`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			} {
				io.WriteString(inW, line+"\n")
				sent.Add(1)
			}
			inW.Close()
		}()
		synctest.Wait()
		if got := sent.Load(); got != 1 {
			t.Errorf("with the initialize unanswered, %d lines were read; want 1", got)
		}
		close(out.open)
		if err := <-done; err != nil {
			t.Errorf("ServeStdio = %v", err)
		}
		if got := out.lines.since(0); len(got) != 2 || !strings.Contains(got[1], `"id":1,`) {
			t.Errorf("answers %q; want the initialize's and the ping's", got)
		}
	})
}

// TestServeStdioRefusesAnIDInFlight sends a request with the id of one
// still running: it is refused with its id, where the SDK would answer
// without one, and both the connection and the first request go on.
func TestServeStdioRefusesAnIDInFlight(t *testing.T) {
	s := newTestServer(t, nil)
	release := make(chan struct{})
	s.mcp.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil
	})
	p := startStdio(t, s)
	p.send(`{"jsonrpc":"2.0","id":"twice","method":"tools/call","params":{"name":"block","arguments":{}}}`)
	p.send(`{"jsonrpc":"2.0","id":"twice","method":"ping"}`)
	if r := p.recv(); string(r.ID) != `"twice"` || r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("a request with the id of one running: id %s, error %+v; want -32600 with the id", r.ID, r.Error)
	}
	close(release)
	if r := p.recv(); string(r.ID) != `"twice"` || !strings.Contains(string(r.Result), "released") {
		t.Errorf("the first request: id %s, result %s", r.ID, r.Result)
	}
}

// TestServeStdioGivesBackTheBudgetOfDroppedAnswers stops with a call that
// is cancelled, whose answer the SDK drops: once ServeStdio returns, the
// whole request budget, which HTTP may share, is free again.
func TestServeStdioGivesBackTheBudgetOfDroppedAnswers(t *testing.T) {
	s := newTestServer(t, nil)
	synctest.Test(t, func(t *testing.T) {
		s.mcp.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		inR, inW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(ctx, inR, &lines{}, StdioOptions{}) }()
		go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","arguments":{},`+modernMeta+`}}`+"\n")
		synctest.Wait()
		cancel()
		<-done
		if !s.budget.TryAcquire(s.budgetSize) {
			t.Error("the budget is not whole once ServeStdio has returned")
		}
		inW.Close()
	})
}

// gated is a stdout whose writes wait until open is closed.
type gated struct {
	open  chan struct{}
	lines *lines
}

func (g *gated) Write(p []byte) (int, error) {
	<-g.open
	return g.lines.Write(p)
}
