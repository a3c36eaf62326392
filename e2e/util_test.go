package e2e

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// toolCase is one call of an example tool: its arguments, and the JSON of
// its structuredContent (a good call) or a part of its error text (a bad
// one).
type toolCase struct {
	args map[string]any
	want string
}

// checkToolCases calls tool with each case on every kind of client: good
// cases must answer their structuredContent, bad ones fail mentioning want.
func checkToolCases(t *testing.T, tool string, good, bad []toolCase) {
	t.Helper()
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		for _, tt := range good {
			res := callTool(t, cs, tool, tt.args)
			if got := mustJSON(t, res.StructuredContent); res.IsError || got != tt.want {
				t.Errorf("%s %s = %s %q (isError %v); want %s", tool, mustJSON(t, tt.args), got, text(res), res.IsError, tt.want)
			}
		}
		for _, tt := range bad {
			res := callTool(t, cs, tool, tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("%s %s = %q (isError %v); want an error mentioning %q", tool, mustJSON(t, tt.args), text(res), res.IsError, tt.want)
			}
		}
	})
}
