package mcpserver

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestPendingAdmitsUntilClosed(t *testing.T) {
	p := newPending()
	if !p.admit(true) || !p.admit(false) {
		t.Fatal("an open pending admitted nothing")
	}
	p.close()
	if p.admit(true) || p.admit(false) {
		t.Error("a closed pending admitted a message")
	}
}

// TestPendingWaitsForEveryAdmittedRequest waits in a bubble, whose clock is
// fake and moves only when every goroutine waits: the wait ends when the
// last request is done, and not before, or at the timeout if one never is.
func TestPendingWaitsForEveryAdmittedRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPending()
		p.admit(true)
		p.admit(true)
		p.admit(false) // a notification: nothing to wait for
		p.close()
		waited := make(chan bool)
		go func() { waited <- p.wait(time.Hour) }()
		p.done()
		synctest.Wait()
		select {
		case <-waited:
			t.Fatal("the wait ended with a request still running")
		default:
		}
		start := time.Now()
		p.done()
		if !<-waited || time.Since(start) != 0 {
			t.Errorf("the wait did not end when the last request was done")
		}

		p = newPending()
		p.admit(true)
		p.close()
		if p.wait(time.Hour) || time.Since(start) != time.Hour {
			t.Errorf("with a request never done, the wait did not end at its timeout")
		}
	})
}

func TestPendingWithNothingAdmittedDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPending()
		p.admit(false)
		p.close()
		if !p.wait(time.Hour) {
			t.Error("nothing to wait for, yet the wait timed out")
		}
	})
}
