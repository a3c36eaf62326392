package dispatch

import (
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// A tool's log and progress reports reach its client through a notifier,
// never straight from the guest: sending one writes to the client's
// connection, and a client that does not read would otherwise stop the
// guest inside the host function, past its time limit, holding its run
// slot until the connection closed.
const (
	// notifyQueue is how many reports wait for delivery at most; past
	// it, a log message is dropped and a progress report replaces the one
	// waiting (progress is advisory, and the latest value says the most).
	notifyQueue = 32
	// notifyGrace is how long a call's answer waits, once the run is
	// over, for the reports still queued to be delivered; those left then
	// are dropped. A client that reads gets them all well within it.
	notifyGrace = time.Second
)

// notifier passes a run's reports on to next from a goroutine of its own,
// through a queue of at most notifyQueue log messages and one progress
// report, so that the guest never waits for a client. The goroutine starts
// with the first report.
type notifier struct {
	next sandbox.Reporter

	mu       sync.Mutex
	queue    []note
	progress bool          // a progress report is in queue
	running  bool          // the delivering goroutine has started
	closed   bool          // the run is over: no report is queued any more
	wake     chan struct{} // a report was queued, or the notifier closed
	drained  chan struct{} // closed when the goroutine is done
	// What was never delivered: log messages dropped, and progress
	// reports dropped, most of them replaced by a later one.
	droppedLogs, droppedProgress int
}

// note is one report waiting for delivery.
type note struct {
	progress     bool
	level        int32
	value, total float64
	msg          string
}

func newNotifier(next sandbox.Reporter) *notifier {
	return &notifier{next: next, wake: make(chan struct{}, 1), drained: make(chan struct{})}
}

// Log queues a log message, or drops it when the queue is full.
func (n *notifier) Log(level int32, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed || len(n.queue) >= notifyQueue {
		n.droppedLogs++
		return
	}
	n.queue = append(n.queue, note{level: level, msg: msg})
	n.signal()
}

// Progress queues a progress report. When the queue is full, it replaces
// the progress report waiting, if there is one, and otherwise takes the
// one place beyond the queue's length that a progress report may have.
func (n *notifier) Progress(value, total float64, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		n.droppedProgress++
		return
	}
	if len(n.queue) >= notifyQueue && n.progress {
		for i, q := range n.queue {
			if q.progress {
				n.queue = append(n.queue[:i], n.queue[i+1:]...)
				break
			}
		}
		n.droppedProgress++
	}
	n.queue = append(n.queue, note{progress: true, value: value, total: total, msg: msg})
	n.progress = true
	n.signal()
}

// signal wakes the delivering goroutine, starting it the first time;
// n.mu is held.
func (n *notifier) signal() {
	if !n.running {
		n.running = true
		go n.deliver()
	}
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// deliver sends the queued reports in order until the notifier closes
// with none left.
func (n *notifier) deliver() {
	defer close(n.drained)
	for {
		n.mu.Lock()
		for len(n.queue) == 0 && !n.closed {
			n.mu.Unlock()
			<-n.wake
			n.mu.Lock()
		}
		if len(n.queue) == 0 {
			n.mu.Unlock()
			return
		}
		q := n.queue[0]
		n.queue = n.queue[1:]
		if q.progress {
			n.progress = false
		}
		n.mu.Unlock()
		if q.progress {
			n.next.Progress(q.value, q.total, q.msg)
		} else {
			n.next.Log(q.level, q.msg)
		}
	}
}

// finish is called once the run is over. It waits at most grace for the
// queued reports to be delivered, drops those left, and returns how many
// log messages and progress reports were never delivered. A delivery under
// way when grace ends (a write to a client that does not read) is left to
// end on its own; nothing is sent after it.
func (n *notifier) finish(grace time.Duration) (logs, progress int) {
	n.mu.Lock()
	n.closed = true
	running := n.running
	n.mu.Unlock()
	if running {
		select {
		case n.wake <- struct{}{}:
		default:
		}
		timer := time.NewTimer(grace)
		select {
		case <-n.drained:
		case <-timer.C:
		}
		timer.Stop()
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, q := range n.queue {
		if q.progress {
			n.droppedProgress++
		} else {
			n.droppedLogs++
		}
	}
	n.queue, n.progress = nil, false
	return n.droppedLogs, n.droppedProgress
}
