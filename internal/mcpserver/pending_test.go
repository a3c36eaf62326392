package mcpserver

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"golang.org/x/sync/semaphore"
)

func newTestPending(budget int64) *pending {
	return newPending(semaphore.NewWeighted(budget), discard())
}

func id(n int64) jsonrpc.ID {
	i, _ := jsonrpc.MakeID(float64(n))
	return i
}

func TestPendingAdmitsUntilClosed(t *testing.T) {
	p := newTestPending(DefaultRequestBudget)
	if _, err := p.admit(id(1), minCharge); err != nil || !p.open() {
		t.Fatalf("an open pending admitted nothing: %v", err)
	}
	p.close()
	if _, err := p.admit(id(2), minCharge); !errors.Is(err, errClosed) || p.open() {
		t.Errorf("a closed pending admitted a request: %v", err)
	}
}

func TestPendingRefusesAnIDInFlight(t *testing.T) {
	p := newTestPending(DefaultRequestBudget)
	p.admit(id(1), minCharge)
	if _, err := p.admit(id(1), minCharge); !errors.Is(err, errInFlight) {
		t.Errorf("a second request with the id of one in flight: %v; want errInFlight", err)
	}
	// A client may reuse an id once it has read the answer, which may be
	// before the write returns.
	p.answered(id(1))
	if _, err := p.admit(id(1), minCharge); err != nil {
		t.Errorf("the id of a request answered: %v", err)
	}
}

// TestPendingHoldsTheBudgetUntilWritten fills the budget in a bubble,
// where synctest.Wait tells when an admit waits for good: the next request
// is admitted once an answer is written, not when it is handed to the
// writer, and a close ends a wait for the budget.
func TestPendingHoldsTheBudgetUntilWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPending(2 * minCharge)
		p.admit(id(1), minCharge)
		p.admit(id(2), minCharge)
		admitted := make(chan error)
		go func() {
			_, err := p.admit(id(3), minCharge)
			admitted <- err
		}()
		synctest.Wait()
		r := p.answered(id(1))
		synctest.Wait()
		select {
		case err := <-admitted:
			t.Fatalf("admitted beyond the budget (%v) before an answer was written", err)
		default:
		}
		p.written(r)
		if err := <-admitted; err != nil {
			t.Fatalf("once an answer was written: %v", err)
		}
		go func() {
			_, err := p.admit(id(4), minCharge)
			admitted <- err
		}()
		synctest.Wait()
		p.close()
		if err := <-admitted; !errors.Is(err, errClosed) {
			t.Errorf("a wait for the budget at close: %v; want errClosed", err)
		}
	})
}

// TestPendingReleaseGivesBackWhatIsNotAnswered ends a connection with one
// request running and one whose answer is being written: only the first's
// charge comes back at once, the second's when its write ends.
func TestPendingReleaseGivesBackWhatIsNotAnswered(t *testing.T) {
	budget := semaphore.NewWeighted(2 * minCharge)
	p := newPending(budget, discard())
	p.admit(id(1), minCharge)
	p.admit(id(2), minCharge)
	r := p.answered(id(2))
	p.close()
	p.release()
	if !budget.TryAcquire(minCharge) || budget.TryAcquire(1) {
		t.Fatal("release gave back other than the charge of the request still running")
	}
	p.written(r)
	if !budget.TryAcquire(minCharge) {
		t.Error("the charge of the answer being written did not come back with its write")
	}
}

// TestPendingWaitsForEveryAdmittedRequest waits in a bubble, whose clock is
// fake and moves only when every goroutine waits: the wait ends when the
// last handler returns, and not before, or at the timeout if one never
// does.
func TestPendingWaitsForEveryAdmittedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPending(DefaultRequestBudget)
		p.admit(id(1), minCharge)
		p.admit(id(2), minCharge)
		p.close()
		waited := make(chan bool)
		go func() { waited <- p.wait(time.Hour) }()
		p.answered(id(1))
		synctest.Wait()
		select {
		case <-waited:
			t.Fatal("the wait ended with a request still running")
		default:
		}
		start := time.Now()
		p.answered(id(2))
		if !<-waited || time.Since(start) != 0 {
			t.Errorf("the wait did not end when the last handler returned")
		}

		p = newTestPending(DefaultRequestBudget)
		p.admit(id(1), minCharge)
		p.close()
		if p.wait(time.Hour) || time.Since(start) != time.Hour {
			t.Errorf("with a request never answered, the wait did not end at its timeout")
		}
	})
}

func TestPendingWithNothingAdmittedDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newTestPending(DefaultRequestBudget)
		p.close()
		if !p.wait(time.Hour) {
			t.Error("nothing to wait for, yet the wait timed out")
		}
	})
}
