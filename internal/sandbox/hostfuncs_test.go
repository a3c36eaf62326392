package sandbox

import (
	"context"
	"math"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// recorder is a Reporter that keeps what it is told.
type recorder struct {
	logs     []string
	levels   []int32
	progress []float64
	totals   []float64
	messages []string
}

func (r *recorder) Log(level int32, msg string) {
	r.levels = append(r.levels, level)
	r.logs = append(r.logs, msg)
}

func (r *recorder) Progress(p, total float64, msg string) {
	r.progress = append(r.progress, p)
	r.totals = append(r.totals, total)
	r.messages = append(r.messages, msg)
}

func TestHostFunctionsCheckEveryArgument(t *testing.T) {
	e := newEngine(t)
	rec := &recorder{}
	out := compile(t, e, "report").Run(context.Background(), Run{Limits: small, Reporter: rec})
	if out.Failure != nil {
		t.Fatalf("run failed: %+v", out.Failure)
	}
	// One digit per call in report.wat, in order.
	const want = "021143066022"
	if string(out.Stdout) != want {
		t.Fatalf("result codes = %s; want %s", out.Stdout, want)
	}
	if len(rec.logs) != 1 || rec.logs[0] != "hello" || rec.levels[0] != abi.LevelInfo {
		t.Errorf("logs = %q at %v; want only the valid one", rec.logs, rec.levels)
	}
	if len(rec.progress) != 2 || rec.progress[0] != 1 || rec.totals[0] != 10 || rec.messages[0] != "half way" {
		t.Fatalf("progress = %v / %v / %q", rec.progress, rec.totals, rec.messages)
	}
	if rec.progress[1] != 2 || !math.IsNaN(rec.totals[1]) {
		t.Errorf("second progress = %v of %v; want 2 of unknown (NaN)", rec.progress[1], rec.totals[1])
	}
}

func TestHostFunctionsCapAFlood(t *testing.T) {
	e := newEngine(t)
	rec := &recorder{}
	out := compile(t, e, "flood").Run(context.Background(), Run{Limits: small, Reporter: rec})
	if out.Failure != nil {
		t.Fatalf("run failed: %+v", out.Failure)
	}
	if string(out.Stdout) != "55" {
		t.Fatalf("last result codes = %q; want 55 (both over their allowance)", out.Stdout)
	}
	if len(rec.logs) != abi.MaxLogMessages || len(rec.progress) != abi.MaxProgress {
		t.Errorf("delivered %d logs and %d progress reports; want %d and %d", len(rec.logs), len(rec.progress), abi.MaxLogMessages, abi.MaxProgress)
	}
}

func TestHostFunctionsWithoutAReporter(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "report").Run(context.Background(), Run{Limits: small})
	if out.Failure != nil || string(out.Stdout) != "021143066022" {
		t.Fatalf("run without a reporter: %+v %q", out.Failure, out.Stdout)
	}
}
