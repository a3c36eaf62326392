package slots

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAcquireWaitsThenSaysBusy(t *testing.T) {
	s := New(1, time.Millisecond)
	held, err := s.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(context.Background())
	if err == nil || !strings.Contains(err.Error(), "all 1 run slots stayed in use for 1ms") || errors.Is(err, ErrCancelled) {
		t.Fatalf("Acquire with every slot held: %v; want busy", err)
	}
	held.Release()
	again, err := s.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire after a release: %v", err)
	}
	again.Release()
}

func TestAcquireEndsWithItsContext(t *testing.T) {
	s := New(1, time.Hour)
	held, _ := s.Acquire(context.Background())
	defer held.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Acquire(ctx); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Acquire with its context done: %v; want ErrCancelled", err)
	}
}

func TestTryAcquireGivesWayToWaitingCalls(t *testing.T) {
	s := New(2, time.Hour)
	held, _ := s.Acquire(context.Background())
	s.waiting.Add(1) // as a call waiting in Acquire does
	if s.TryAcquire() != nil {
		t.Fatal("TryAcquire took a slot while a call waited for one")
	}
	s.waiting.Add(-1)
	free := s.TryAcquire()
	if free == nil {
		t.Fatal("TryAcquire found no free slot with one free and no call waiting")
	}
	if s.TryAcquire() != nil {
		t.Fatal("TryAcquire took a slot none of which was free")
	}
	free.Release()
	held.Release()
}

func TestReleasingTwicePanics(t *testing.T) {
	s := New(2, time.Hour)
	sl, _ := s.Acquire(context.Background())
	sl.Release()
	defer func() {
		if recover() == nil {
			t.Fatal("a second Release did not panic")
		}
	}()
	sl.Release()
}
