package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// BenchmarkPythonSnapshot measures one call of the date_info example (a
// Python tool on the CPython runtime) from its snapshot: a whole run, and
// one on an instance prepared ahead, as the server's prewarm makes them,
// which leaves the call itself (wasmcp_run) and what its first touches of
// the snapshot's memory cost.
//
//	go test -run '^$' -bench PythonSnapshot -benchtime 300x ./internal/sandbox/
func BenchmarkPythonSnapshot(b *testing.B) {
	out, err := exec.Command("../../scripts/python-runtime").Output()
	if err != nil {
		b.Fatalf("building the Python runtime: %v", err)
	}
	rt := strings.TrimSpace(string(out))
	bundle := filepath.Join(b.TempDir(), "init.zip")
	bundler := exec.Command(filepath.Join(rt, "native/python"), "-I", "../../sdk-guest/python/wasmcp_bundle.py",
		"--stdlib", filepath.Join(rt, "src/Lib"), "--path", "../../tools/date_info", "--path", "../../sdk-guest/python",
		"-o", bundle, "main")
	if out, err := bundler.CombinedOutput(); err != nil {
		b.Fatalf("bundling date_info: %v\n%s", err, out)
	}
	runtime, err := os.ReadFile(filepath.Join(rt, "wasmcp-python.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	init, err := os.ReadFile(bundle)
	if err != nil {
		b.Fatal(err)
	}
	bin, err := wasmbin.SetCustomSection(runtime, abi.InitSection, init)
	if err != nil {
		b.Fatal(err)
	}
	c, err := newEngine(b).CompileWith(context.Background(), bin, CompileOptions{Start: abi.StartReactor})
	if err != nil {
		b.Fatal(err)
	}
	lim := Limits{Timeout: 10 * time.Second, Memory: 64 << 20, Output: 1 << 20}
	if _, err := c.Snapshot(context.Background(), "date_info", lim, Schedule{}); err != nil {
		b.Fatal(err)
	}
	r := Run{Args: []string{"date_info", "date_info"}, Limits: lim, Stdin: []byte(`{"date":"2024-02-29","other":"2024-03-01"}`)}
	b.Run("run", func(b *testing.B) {
		defer reportFaults(b)()
		for b.Loop() {
			if out := c.Run(context.Background(), r); out.Failure != nil {
				b.Fatalf("%+v %s", out.Failure, out.Stderr)
			}
		}
	})
	b.Run("prepared", func(b *testing.B) {
		defer reportFaults(b)()
		for b.Loop() {
			b.StopTimer()
			p := c.Prepare(context.Background(), r)
			b.StartTimer()
			if out := p.Start(context.Background(), Run{Stdin: r.Stdin}); out.Failure != nil {
				b.Fatalf("%+v %s", out.Failure, out.Stderr)
			}
		}
	})
}
