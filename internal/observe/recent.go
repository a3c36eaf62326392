package observe

import (
	"sync"
	"time"
)

// Finished is a call as Recent keeps it: the Call, and when it ended.
type Finished struct {
	Call
	End time.Time
}

// Recent is an Observer that keeps the last calls finished, a fixed number
// of them, so that what it holds is bounded however many calls the server
// takes. It keeps only what Call holds: a call's arguments and results may
// hold a user's secrets, and never reach an Observer.
type Recent struct {
	mu   sync.Mutex
	ring []Finished // ring[next] is the oldest once the ring is full
	next int
	full bool
}

var _ Observer = (*Recent)(nil)

// NewRecent returns a Recent that keeps the last n calls (n > 0).
func NewRecent(n int) *Recent {
	return &Recent{ring: make([]Finished, n)}
}

// Calls returns the calls kept, oldest first.
func (r *Recent) Calls() []Finished {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]Finished(nil), r.ring[:r.next]...)
	}
	return append(append(make([]Finished, 0, len(r.ring)), r.ring[r.next:]...), r.ring[:r.next]...)
}

// CallFinished keeps c, in place of the oldest call once n are kept.
func (r *Recent) CallFinished(c Call) {
	end := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring[r.next] = Finished{Call: c, End: end}
	r.next++
	if r.next == len(r.ring) {
		r.next, r.full = 0, true
	}
}

// CallStarted does nothing: a call is kept once it has finished.
func (*Recent) CallStarted(string) {}

// Compiled does nothing: Recent keeps calls only.
func (*Recent) Compiled(string, time.Duration, error) {}

// Loaded does nothing: Recent keeps calls only.
func (*Recent) Loaded(int, int) {}

// Reloaded does nothing: Recent keeps calls only.
func (*Recent) Reloaded(error) {}
