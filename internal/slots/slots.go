// Package slots bounds how many calls run at once. A call takes a Slot,
// waiting a while for one to be free, and its holder gives it back when the
// run's work is done. Each Slot is held by one party at a time: whoever
// releases it must be the one holding it, and it is released once.
package slots

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Slots is a bounded set of run slots.
type Slots struct {
	ch      chan struct{}
	timeout time.Duration
	waiting atomic.Int32 // calls waiting in Acquire
}

// New returns n slots, for which Acquire waits at most queueTimeout.
func New(n int, queueTimeout time.Duration) *Slots {
	return &Slots{ch: make(chan struct{}, n), timeout: queueTimeout}
}

// A Slot is one slot held.
type Slot struct {
	s        *Slots
	released atomic.Bool
}

// Release gives the slot back. Releasing a slot twice is a bug of its
// holders, and panics.
func (sl *Slot) Release() {
	if sl.released.Swap(true) {
		panic("slots: a slot released twice")
	}
	<-sl.s.ch
}

// ErrCancelled is the error of an Acquire whose context ended first.
var ErrCancelled = errors.New("the call was cancelled by the client")

// Acquire takes a slot, waiting at most the queue timeout for one, or until
// ctx ends (ErrCancelled). A call turned away for want of one gets an error
// that says so, in words a model can act on.
func (s *Slots) Acquire(ctx context.Context) (*Slot, error) {
	select {
	case s.ch <- struct{}{}:
		return &Slot{s: s}, nil
	default:
	}
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	select {
	case s.ch <- struct{}{}:
		return &Slot{s: s}, nil
	case <-timer.C:
		return nil, fmt.Errorf("the server is busy: all %d run slots stayed in use for %s; try again shortly", cap(s.ch), s.timeout)
	case <-ctx.Done():
		return nil, ErrCancelled
	}
}

// TryAcquire takes a slot only if one is free and no call waits for one:
// for work done ahead of calls, which must never delay them. It returns
// nil otherwise.
func (s *Slots) TryAcquire() *Slot {
	if s.waiting.Load() > 0 {
		return nil
	}
	select {
	case s.ch <- struct{}{}:
		return &Slot{s: s}
	default:
		return nil
	}
}

// Cap is how many slots there are.
func (s *Slots) Cap() int { return cap(s.ch) }
