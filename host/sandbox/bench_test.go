package sandbox

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRunEcho measures one run of a minimal guest (WAT echo): the
// sandbox's own cost per call, a fresh instance each time.
//
//	go test -run '^$' -bench RunEcho ./host/sandbox/
func BenchmarkRunEcho(b *testing.B) {
	e := newEngine(b)
	c := compile(b, e, "echo")
	in := []byte(`{"a":10,"b":5,"operation":"add"}`)
	lim := Limits{Timeout: 10 * time.Second, Memory: 1 << 20, Output: 1 << 20}
	b.ReportAllocs()
	for b.Loop() {
		out := c.Run(context.Background(), Run{Args: []string{"echo", "echo"}, Stdin: in, Limits: lim})
		if out.Failure != nil || len(out.Stdout) != len(in) {
			b.Fatalf("run: %+v %q", out.Failure, out.Stdout)
		}
	}
}
