package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// BenchmarkPreparedGoGuest compares one call of the calculate example (a
// Go guest) run cold, where the Go runtime starts inside the call, with
// the same call on an instance prepared ahead of it. Each call gets a
// fresh instance either way.
//
//	go test -run '^$' -bench PreparedGoGuest -benchtime 100x ./host/sandbox/
func BenchmarkPreparedGoGuest(b *testing.B) {
	wasm := filepath.Join(b.TempDir(), "calculate.wasm")
	build := exec.Command("go", "build", "-o", wasm, "../../tools/calculate")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building calculate: %v\n%s", err, out)
	}
	bin, err := os.ReadFile(wasm)
	if err != nil {
		b.Fatal(err)
	}
	e := newEngine(b)
	c, err := e.Compile(context.Background(), bin, abi.StartCommand)
	if err != nil {
		b.Fatal(err)
	}
	r := Run{Args: []string{"calculate", "calculate"}, Limits: Limits{Timeout: 10 * time.Second, Memory: 64 << 20, Output: 1 << 20}}
	in := []byte(`{"a":10,"b":5,"operation":"add"}`)
	b.Run("cold", func(b *testing.B) {
		r.Stdin = in
		for b.Loop() {
			if out := c.Run(context.Background(), r); out.Failure != nil || string(out.Stdout) != "15.0" {
				b.Fatalf("%+v %q", out.Failure, out.Stdout)
			}
		}
	})
	b.Run("prepared", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			p := c.Prepare(context.Background(), r)
			b.StartTimer()
			if out := p.Start(context.Background(), in, nil, nil); out.Failure != nil || string(out.Stdout) != "15.0" {
				b.Fatalf("%+v %q", out.Failure, out.Stdout)
			}
		}
	})
}
