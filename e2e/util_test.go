package e2e

import (
	"bytes"
	"sync"
	"time"
)

// lockedBuffer collects a process's stderr while tests read it, and lets a
// test wait for the next write.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) WriteString(s string) { b.Write([]byte(s)) }

// wait returns after the next write, or after d.
func (b *lockedBuffer) wait(d time.Duration) {
	b.mu.Lock()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	ch := b.changed
	b.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// reset forgets what was written so far.
func (b *lockedBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
