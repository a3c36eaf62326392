package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// BenchmarkGoGuest measures one call of the calculate example (a Go
// guest), each on a fresh instance: built as a command, run cold (the Go
// runtime starts inside the call) and on an instance prepared ahead; built
// as a reactor, as the example is, run from its snapshot and on an
// instance prepared from the snapshot ahead, as the server's prewarm
// makes them.
//
//	go test -run '^$' -bench GoGuest -benchtime 300x ./internal/sandbox/
func BenchmarkGoGuest(b *testing.B) {
	e := newEngine(b)
	r := Run{Args: []string{"calculate", "calculate"}, Limits: Limits{Timeout: 10 * time.Second, Memory: 64 << 20, Output: 1 << 20}, Stdin: []byte(`{"a":10,"b":5,"operation":"add"}`)}
	command := compileGo(b, e, abi.StartCommand)
	reactor := compileGo(b, e, abi.StartReactor)
	if _, err := reactor.Snapshot(context.Background(), "calculate", r.Limits, Schedule{}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    *Compiled
	}{{"command", command}, {"snapshot", reactor}} {
		b.Run(c.name+"/run", func(b *testing.B) {
			defer reportFaults(b)()
			for b.Loop() {
				checkCalculate(b, c.c.Run(context.Background(), r))
			}
		})
		b.Run(c.name+"/prepared", func(b *testing.B) {
			defer reportFaults(b)()
			for b.Loop() {
				b.StopTimer()
				p := c.c.Prepare(context.Background(), r)
				b.StartTimer()
				checkCalculate(b, p.Start(context.Background(), Run{Stdin: r.Stdin}))
			}
		})
	}
}

// compileGo builds tools/calculate as a WASI command or reactor.
func compileGo(b *testing.B, e *Engine, start abi.Start) *Compiled {
	wasm := filepath.Join(b.TempDir(), "calculate.wasm")
	args := []string{"build", "-o", wasm}
	if start == abi.StartReactor {
		args = append(args, "-buildmode=c-shared")
	}
	build := exec.Command("go", append(args, "../../tools/calculate")...)
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building calculate: %v\n%s", err, out)
	}
	bin, err := os.ReadFile(wasm)
	if err != nil {
		b.Fatal(err)
	}
	c, err := e.CompileWith(context.Background(), bin, CompileOptions{Start: start})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func checkCalculate(b *testing.B, out Outcome) {
	if out.Failure != nil || string(out.Stdout) != "15.0" {
		b.Fatalf("%+v %q %s", out.Failure, out.Stdout, out.Stderr)
	}
}

// reportFaults reports the process's minor page faults per iteration from
// now to when the function it returns is called (a prepared instance's
// among them, made outside the timer).
func reportFaults(b *testing.B) func() {
	var before syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	return func() {
		var after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		b.ReportMetric(float64(after.Minflt-before.Minflt)/float64(b.N), "faults/op")
	}
}
