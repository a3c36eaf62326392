package dispatch

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
)

// stuck is a client's reporter whose first delivery waits for release,
// as a write to a client that does not read does; it records what it is
// given.
type stuck struct {
	entered chan struct{} // closed when the first delivery begins
	release chan struct{}
	once    sync.Once

	mu  sync.Mutex
	got []string
}

func newStuck() *stuck { return &stuck{entered: make(chan struct{}), release: make(chan struct{})} }

func (s *stuck) record(what string) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, what)
}

func (s *stuck) Log(level int32, msg string) { s.record(fmt.Sprintf("log %d %s", level, msg)) }
func (s *stuck) Progress(p, total float64, msg string) {
	s.record(fmt.Sprintf("progress %v/%v %s", p, total, msg))
}

func (s *stuck) delivered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// TestNotifierQueuesWhileTheClientDoesNotRead: while the client takes
// nothing, reports are queued up to notifyQueue, later log messages are
// dropped, and later progress reports leave only the latest waiting. Once
// the client reads, the queue is delivered in order.
func TestNotifierQueuesWhileTheClientDoesNotRead(t *testing.T) {
	client := newStuck()
	n := newNotifier(client)
	n.Log(abi.LevelInfo, "first")
	<-client.entered // the first report is being delivered, and waits
	var want []string
	for i := range notifyQueue {
		n.Log(abi.LevelInfo, fmt.Sprint(i))
		want = append(want, fmt.Sprintf("log %d %d", abi.LevelInfo, i))
	}
	for i := range 5 {
		n.Log(abi.LevelInfo, fmt.Sprint("dropped ", i))
	}
	for p := 1.0; p <= 3; p++ {
		n.Progress(p, 3, "")
	}
	close(client.release)
	logs, progress := n.finish(hangGuard)
	if logs != 5 || progress != 2 {
		t.Errorf("finish counted %d log messages and %d progress reports dropped; want 5 and 2", logs, progress)
	}
	want = append([]string{fmt.Sprintf("log %d first", abi.LevelInfo)}, append(want, "progress 3/3 ")...)
	if got := client.delivered(); !reflect.DeepEqual(got, want) {
		t.Errorf("delivered %q;\nwant %q", got, want)
	}
}

// TestNotifierGivesUpAfterTheGrace: a client that never reads gets what
// it was being sent, and nothing after, once finish's grace is over.
func TestNotifierGivesUpAfterTheGrace(t *testing.T) {
	client := newStuck()
	n := newNotifier(client)
	n.Log(abi.LevelInfo, "first")
	<-client.entered
	n.Log(abi.LevelInfo, "second")
	n.Progress(1, -1, "")
	if logs, progress := n.finish(0); logs != 1 || progress != 1 {
		t.Errorf("finish counted %d log messages and %d progress reports dropped; want 1 and 1", logs, progress)
	}
	close(client.release)
	<-n.drained
	if got := client.delivered(); len(got) != 1 {
		t.Errorf("delivered %q after the grace; want only the first report", got)
	}
}

// TestNotifierStartsNothingForASilentTool: a run that reports nothing
// costs no goroutine and no wait.
func TestNotifierStartsNothingForASilentTool(t *testing.T) {
	n := newNotifier(newStuck())
	if logs, progress := n.finish(hangGuard); logs != 0 || progress != 0 || n.running {
		t.Errorf("finish = %d, %d, running %v; want nothing", logs, progress, n.running)
	}
}

// TestToolNeverWaitsForItsClient calls a tool that sends 5,000 log
// messages and progress reports to a client that never reads: the call
// ends as it would with no client, and the drops are logged.
func TestToolNeverWaitsForItsClient(t *testing.T) {
	f := newFixture(t, map[string]module{"flood": {wat: "flood", manifest: manifest(tool("flood", "", anyObject, ""))}}, Options{})
	client := newStuck()
	t.Cleanup(func() { close(client.release) })
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := f.d.Call(context.Background(), "flood", nil, client, nil)
		done <- res
	}()
	select {
	case res := <-done:
		// Both allowances were used up (code 5), as without a client.
		if got := text(t, res); got != "55" {
			t.Errorf("flood answered %q; want 55", got)
		}
	case <-time.After(hangGuard):
		t.Fatal("the call waited for a client that does not read")
	}
	if f.log.count("notifications dropped: the client took them more slowly than the tool sent them") != 1 {
		t.Error("the dropped notifications were not logged")
	}
}
