package sandbox

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRunEcho measures one run of a minimal guest (WAT echo): the
// sandbox's own cost per call, a fresh instance each time.
//
//	go test -run '^$' -bench RunEcho -benchmem ./internal/sandbox/
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

// BenchmarkDataGuest measures one run of a guest with 8 or 32 MiB of data
// segments, as a C program with large tables has, which reads its stdin
// and touches little else (WAT memcheck with no stdin): the cost of
// starting an instance whose memory holds the module's data, a fresh
// instance each time.
//
//	go test -run '^$' -bench DataGuest -benchmem ./internal/sandbox/
func BenchmarkDataGuest(b *testing.B) {
	e := newEngine(b)
	for _, size := range []uint32{8 << 20, 32 << 20} {
		c, err := e.Compile(context.Background(), memcheckModule(b, uint64(size/pageSize+2), pageSize, pageSize+size))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bytesText(uint64(size)), func(b *testing.B) {
			r := Run{Args: []string{"memcheck"}, Limits: Limits{Timeout: 10 * time.Second, Memory: 64 << 20, Output: 1 << 20}}
			b.ReportAllocs()
			for b.Loop() {
				if out := c.Run(context.Background(), r); out.Failure != nil {
					b.Fatalf("run: %+v", out.Failure)
				}
			}
		})
		c.Close(context.Background())
	}
}
