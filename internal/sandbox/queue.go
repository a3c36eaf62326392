package sandbox

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// compileQueue hands out an engine's compile slots. A compilation someone
// waits for goes before every compilation made ahead of need, and when no
// slot is free it takes one from a compilation made ahead of need, which
// is stopped and waits for a slot again (it starts over: neither engine
// can resume a compilation). So a module compiled ahead, however slowly,
// never keeps a call waiting for another module. Otherwise turns go in
// order: of arrival, or, for a compilation made ahead that someone came
// to wait for, of that moment.
type compileQueue struct {
	mu      sync.Mutex
	free    int
	next    uint64 // the order of the next arrival
	waiting []*compileJob
	running []*compileJob
}

// compileJob is one compilation in the queue, from its first wait for a
// slot to its end, across the times it gives its slot up.
type compileJob struct {
	order  uint64
	wanted bool // someone waits for it
	turn   chan struct{}
	// started orders running jobs: the latest started has lost the least
	// work when it is stopped.
	started uint64
	// stop ends the attempt in progress, with errYielded as its cause;
	// nil until the attempt has begun.
	stop     context.CancelCauseFunc
	yielding bool
}

// errYielded is the cause of an attempt stopped to give its slot to a
// compilation someone waits for.
var errYielded = errors.New("compile slot given to a compilation someone waits for")

func newCompileQueue(slots int) *compileQueue { return &compileQueue{free: slots} }

// join queues a new job; it takes a slot when its turn channel receives.
func (q *compileQueue) join(wanted bool) *compileJob {
	q.mu.Lock()
	defer q.mu.Unlock()
	j := &compileJob{order: q.next, wanted: wanted, turn: make(chan struct{}, 1)}
	q.next++
	q.waiting = append(q.waiting, j)
	q.dispatch()
	return j
}

// want marks j as waited for: if it is waiting it goes before every job
// made ahead, and it may take a slot from one; if it runs, it is no longer
// stopped for another.
func (q *compileQueue) want(j *compileJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.wanted {
		return
	}
	j.wanted = true
	j.order = q.next
	q.next++
	q.dispatch()
}

// begin records the attempt j starts in the slot it was given, and how to
// stop it.
func (q *compileQueue) begin(j *compileJob, stop context.CancelCauseFunc) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j.stop = stop
	// A job that arrived while j had its slot but no way to be stopped
	// may be waiting for it.
	q.dispatch()
}

// end takes j out of the queue, and gives its slot back if it holds one
// (it may have been given one as its caller stopped waiting).
func (q *compileQueue) end(j *compileJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if i := slices.Index(q.waiting, j); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
	}
	q.release(j)
}

// requeue puts j, whose attempt gave its slot up, back in the queue in
// its old place.
func (q *compileQueue) requeue(j *compileJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.release(j)
	j.stop, j.yielding = nil, false
	q.waiting = append(q.waiting, j)
	q.dispatch()
}

// release gives back j's slot, if it holds one. q.mu is held.
func (q *compileQueue) release(j *compileJob) {
	if i := slices.Index(q.running, j); i >= 0 {
		q.running = slices.Delete(q.running, i, i+1)
		q.free++
	}
	q.dispatch()
}

// dispatch gives free slots to the waiting jobs whose turn it is, then
// stops as many jobs made ahead as there are waited-for jobs still
// waiting, the latest started first. q.mu is held.
func (q *compileQueue) dispatch() {
	for q.free > 0 && len(q.waiting) > 0 {
		i := q.first()
		j := q.waiting[i]
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.free--
		j.started = q.next
		q.next++
		q.running = append(q.running, j)
		j.turn <- struct{}{}
	}
	short := 0
	for _, j := range q.waiting {
		if j.wanted {
			short++
		}
	}
	for _, j := range q.running {
		if j.yielding {
			short--
		}
	}
	for ; short > 0; short-- {
		var victim *compileJob
		for _, j := range q.running {
			if !j.wanted && !j.yielding && j.stop != nil && (victim == nil || j.started > victim.started) {
				victim = j
			}
		}
		if victim == nil {
			return
		}
		victim.yielding = true
		victim.stop(errYielded)
	}
}

// first is the index of the waiting job whose turn is next: waited for
// before made ahead, then in order.
func (q *compileQueue) first() int {
	best := 0
	for i, j := range q.waiting[1:] {
		b := q.waiting[best]
		if j.wanted && !b.wanted || j.wanted == b.wanted && j.order < b.order {
			best = i + 1
		}
	}
	return best
}
