package observe

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestRecentKeepsTheLastCallsOldestFirst(t *testing.T) {
	r := NewRecent(3)
	if got := r.Calls(); len(got) != 0 {
		t.Fatalf("a new Recent holds %v", got)
	}
	for i := range 5 {
		r.CallFinished(Call{Tool: fmt.Sprint("t", i), Outcome: OK, Duration: time.Duration(i)})
	}
	var tools []string
	for _, c := range r.Calls() {
		if c.End.IsZero() {
			t.Errorf("call %s kept without its end", c.Tool)
		}
		tools = append(tools, c.Tool)
	}
	if want := []string{"t2", "t3", "t4"}; !slices.Equal(tools, want) {
		t.Errorf("after 5 calls into 3 places, Calls = %v; want %v", tools, want)
	}
}

// recorder is an Observer that writes down what it is told.
type recorder struct{ events []string }

func (r *recorder) CallStarted(tool string) { r.events = append(r.events, "started "+tool) }
func (r *recorder) CallFinished(c Call)     { r.events = append(r.events, "finished "+c.Tool) }
func (r *recorder) Compiled(m string, _ time.Duration, err error) {
	r.events = append(r.events, fmt.Sprint("compiled ", m, " ", err))
}
func (r *recorder) Loaded(m, f int)    { r.events = append(r.events, fmt.Sprint("loaded ", m, " ", f)) }
func (r *recorder) Reloaded(err error) { r.events = append(r.events, fmt.Sprint("reloaded ", err)) }

func TestTeeTellsEveryObserver(t *testing.T) {
	if _, ok := Tee(nil, nil).(Nop); !ok {
		t.Error("Tee of nils is not Nop")
	}
	a := &recorder{}
	if Tee(nil, a) != Observer(a) {
		t.Error("Tee of one observer is not that observer")
	}
	b := &recorder{}
	o := Tee(a, nil, b)
	o.CallStarted("x")
	o.CallFinished(Call{Tool: "x"})
	o.Compiled("m", time.Second, errors.New("bad"))
	o.Loaded(2, 1)
	o.Reloaded(nil)
	want := []string{"started x", "finished x", "compiled m bad", "loaded 2 1", "reloaded <nil>"}
	for _, r := range []*recorder{a, b} {
		if !slices.Equal(r.events, want) {
			t.Errorf("an observer of the Tee was told %q; want %q", r.events, want)
		}
	}
}
