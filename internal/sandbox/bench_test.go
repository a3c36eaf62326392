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

// BenchmarkOutputWithMount measures a run with a mount that writes 64 KiB
// to stdout in 15-byte writes (WAT spam, stopped at its output limit): on
// wasmtime, the cost of serving stdout beside WASI's own file system.
//
//	WASMCP_ENGINE=wasmtime go test -tags wasmtime -run '^$' -bench OutputWithMount ./host/sandbox/
func BenchmarkOutputWithMount(b *testing.B) {
	e := newEngine(b)
	c := compile(b, e, "spam")
	r := Run{Limits: Limits{Timeout: time.Minute, Memory: 1 << 20, Output: 64 << 10}, Mounts: []Mount{{Host: b.TempDir(), Guest: "/data"}}}
	for b.Loop() {
		if out := c.Run(context.Background(), r); out.Failure == nil || out.Failure.Kind != OutputLimit {
			b.Fatalf("run: %+v", out.Failure)
		}
	}
}
