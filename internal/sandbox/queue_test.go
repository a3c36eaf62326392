package sandbox

import (
	"context"
	"testing"
)

// granted reports whether j has been given a slot, taking the grant.
func granted(j *compileJob) bool {
	select {
	case <-j.turn:
		return true
	default:
		return false
	}
}

// started gives j, just granted, a way to be stopped, as an attempt does,
// and returns the attempt's context.
func started(t *testing.T, q *compileQueue, j *compileJob) context.Context {
	t.Helper()
	ctx, stop := context.WithCancelCause(context.Background())
	t.Cleanup(func() { stop(nil) })
	q.begin(j, stop)
	return ctx
}

func TestQueueServesWantedCompilationsFirst(t *testing.T) {
	q := newCompileQueue(1)
	running := q.join(true)
	if !granted(running) {
		t.Fatal("the first job did not get the free slot")
	}
	started(t, q, running)
	ahead1, ahead2 := q.join(false), q.join(false)
	wanted := q.join(true)
	q.end(running)
	if !granted(wanted) || granted(ahead1) || granted(ahead2) {
		t.Fatal("a job made ahead got the slot before one someone waits for")
	}
	started(t, q, wanted)
	// A job made ahead that someone comes to wait for goes after those
	// waited for before it, and before those still made ahead.
	later := q.join(true)
	q.want(ahead2)
	q.end(wanted)
	for _, next := range []*compileJob{later, ahead2, ahead1} {
		if !granted(next) {
			t.Fatalf("job %d did not get the slot in its turn", next.order)
		}
		started(t, q, next)
		q.end(next)
	}
}

func TestQueueStopsACompilationMadeAheadForAWantedOne(t *testing.T) {
	q := newCompileQueue(1)
	ahead := q.join(false)
	if !granted(ahead) {
		t.Fatal("the first job did not get the free slot")
	}
	attempt := started(t, q, ahead)
	wanted := q.join(true)
	if context.Cause(attempt) != errYielded {
		t.Fatalf("the job made ahead was not stopped (cause %v)", context.Cause(attempt))
	}
	if granted(wanted) {
		t.Fatal("the wanted job was given a slot still held")
	}
	q.requeue(ahead)
	if !granted(wanted) || granted(ahead) {
		t.Fatal("the slot given up did not go to the wanted job")
	}
	started(t, q, wanted)
	q.end(wanted)
	if !granted(ahead) {
		t.Fatal("the stopped job did not start again once the slot was free")
	}
}

func TestQueueStopsOnlyAsManyAsWaitAndTheLatestStarted(t *testing.T) {
	q := newCompileQueue(2)
	older, newer := q.join(false), q.join(false)
	if !granted(older) || !granted(newer) {
		t.Fatal("two jobs did not get the two free slots")
	}
	a1, a2 := started(t, q, older), started(t, q, newer)
	q.join(true)
	if context.Cause(a2) != errYielded || a1.Err() != nil {
		t.Fatalf("stopped: older %v, newer %v; want only the newer, which lost the least work", context.Cause(a1), context.Cause(a2))
	}
}

func TestQueueStopsNoCompilationSomeoneWaitsFor(t *testing.T) {
	q := newCompileQueue(1)
	j := q.join(false)
	granted(j)
	attempt := started(t, q, j)
	q.want(j)
	q.join(true)
	if attempt.Err() != nil {
		t.Fatal("a running job someone came to wait for was stopped")
	}
}

func TestQueueStopsAJobMadeAheadOnceItCanBe(t *testing.T) {
	q := newCompileQueue(1)
	j := q.join(false)
	granted(j)
	// A wanted job arrives between j's grant and the start of its attempt.
	q.join(true)
	if attempt := started(t, q, j); context.Cause(attempt) != errYielded {
		t.Fatal("the job made ahead was not stopped when its attempt began")
	}
}

func TestQueueGivesBackTheSlotOfAJobItsCallerLeft(t *testing.T) {
	q := newCompileQueue(1)
	j := q.join(true)
	// Its caller gave up as the slot came: the slot goes to the next job.
	q.end(j)
	next := q.join(true)
	if !granted(next) {
		t.Fatal("a slot granted to a job that ended was not given back")
	}
}
