package metrics

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// scrape fetches Handler() as a Prometheus server would and returns every
// sample keyed by its name and labels exactly as printed, so tests check
// the served text and not only the in-memory collectors.
func scrape(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	body := scrapeText(t, m)
	samples := make(map[string]float64)
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("malformed sample line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample line %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

func scrapeText(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d: %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func wantSample(t *testing.T, samples map[string]float64, key string, want float64) {
	t.Helper()
	got, ok := samples[key]
	if !ok {
		t.Errorf("no sample %s", key)
		return
	}
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v; want %v", key, got, want)
	}
}

// call reports one whole call, as the host does.
func call(m *Metrics, c observe.Call) {
	m.CallStarted(c.Tool)
	m.CallFinished(c)
}

func TestCallSequence(t *testing.T) {
	m := New()
	for range 4 {
		m.CallStarted("calc")
	}
	if got := testutil.ToFloat64(m.inFlight); got != 4 {
		t.Fatalf("in flight after 4 starts = %v; want 4", got)
	}
	m.CallFinished(observe.Call{Tool: "calc", Outcome: observe.OK, Duration: 2 * time.Millisecond, QueueWait: time.Millisecond, PeakMemory: 64 << 10})
	m.CallFinished(observe.Call{Tool: "calc", Outcome: observe.OK, Duration: 20 * time.Millisecond, PeakMemory: 1 << 20})
	m.CallFinished(observe.Call{Tool: "calc", Outcome: observe.InvalidArguments, Duration: 50 * time.Microsecond})
	if got := testutil.ToFloat64(m.inFlight); got != 1 {
		t.Fatalf("in flight after 3 of 4 finished = %v; want 1", got)
	}
	m.CallFinished(observe.Call{Tool: "echo", Outcome: string(sandbox.TimeLimit), Duration: 10 * time.Second, QueueWait: 3 * time.Second, PeakMemory: 2 << 20})
	if got := testutil.ToFloat64(m.inFlight); got != 0 {
		t.Fatalf("in flight after all finished = %v; want 0", got)
	}

	for _, c := range []struct {
		tool, outcome string
		want          float64
	}{
		{"calc", "ok", 2},
		{"calc", "invalid_arguments", 1},
		{"echo", "timeout", 1},
	} {
		if got := testutil.ToFloat64(m.calls.WithLabelValues(c.tool, c.outcome)); got != c.want {
			t.Errorf("calls{tool=%s,outcome=%s} = %v; want %v", c.tool, c.outcome, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.calls); n != 3 {
		t.Errorf("calls has %d series; want 3", n)
	}

	s := scrape(t, m)
	wantSample(t, s, `wasmcp_call_duration_seconds_count{tool="calc"}`, 3)
	wantSample(t, s, `wasmcp_call_duration_seconds_sum{tool="calc"}`, 0.02205)
	wantSample(t, s, `wasmcp_call_duration_seconds_bucket{tool="calc",le="0.0001"}`, 1)
	wantSample(t, s, `wasmcp_call_duration_seconds_bucket{tool="calc",le="0.0025"}`, 2)
	wantSample(t, s, `wasmcp_call_duration_seconds_bucket{tool="calc",le="0.025"}`, 3)
	wantSample(t, s, `wasmcp_call_duration_seconds_count{tool="echo"}`, 1)
	wantSample(t, s, `wasmcp_call_duration_seconds_bucket{tool="echo",le="5"}`, 0)
	wantSample(t, s, `wasmcp_call_duration_seconds_bucket{tool="echo",le="10"}`, 1)

	// The invalid_arguments call never queued, so it is not a wait.
	wantSample(t, s, `wasmcp_queue_wait_seconds_count`, 3)
	wantSample(t, s, `wasmcp_queue_wait_seconds_sum`, 3.001)

	// The call that ran no module has no peak memory.
	wantSample(t, s, `wasmcp_call_peak_memory_bytes_count{tool="calc"}`, 2)
	wantSample(t, s, `wasmcp_call_peak_memory_bytes_bucket{tool="calc",le="65536"}`, 1)
	wantSample(t, s, `wasmcp_call_peak_memory_bytes_bucket{tool="calc",le="1.048576e+06"}`, 2)
	wantSample(t, s, `wasmcp_call_peak_memory_bytes_count{tool="echo"}`, 1)
	wantSample(t, s, `wasmcp_call_peak_memory_bytes_bucket{tool="echo",le="1.048576e+06"}`, 0)
	wantSample(t, s, `wasmcp_call_peak_memory_bytes_bucket{tool="echo",le="4.194304e+06"}`, 1)
	wantSample(t, s, `wasmcp_calls_in_flight`, 0)
}

func TestMemoryBucketsSpanPagesToFourGiB(t *testing.T) {
	if got, want := memoryBuckets[0], float64(64<<10); got != want {
		t.Errorf("first memory bucket = %v; want %v", got, want)
	}
	if got, want := memoryBuckets[len(memoryBuckets)-1], float64(4<<30); got != want {
		t.Errorf("last memory bucket = %v; want %v", got, want)
	}
}

func TestEveryOutcomeHasItsOwnLabel(t *testing.T) {
	m := New()
	known := []string{
		observe.OK, observe.ToolError, observe.InvalidArguments, observe.Busy,
		observe.CompileFailed, observe.BadOutput,
		string(sandbox.TimeLimit), string(sandbox.MemoryLimit), string(sandbox.OutputLimit),
		string(sandbox.StackOverflow), string(sandbox.Trap), string(sandbox.Exit),
		string(sandbox.Cancelled), string(sandbox.Internal),
	}
	want := []string{
		"ok", "tool_error", "invalid_arguments", "busy", "compile", "bad_output",
		"timeout", "memory", "output", "stack_overflow", "trap", "exit", "cancelled", "internal",
	}
	for i, o := range known {
		if o != want[i] {
			t.Errorf("outcome constant %d = %q; want %q (label values are part of the metrics' interface)", i, o, want[i])
		}
		call(m, observe.Call{Tool: "t", Outcome: o})
	}
	call(m, observe.Call{Tool: "t", Outcome: "something new"})
	call(m, observe.Call{Tool: "t", Outcome: "something else"})

	for _, o := range want {
		if got := testutil.ToFloat64(m.calls.WithLabelValues("t", o)); got != 1 {
			t.Errorf("calls{outcome=%s} = %v; want 1", o, got)
		}
	}
	if got := testutil.ToFloat64(m.calls.WithLabelValues("t", OtherOutcome)); got != 2 {
		t.Errorf("calls{outcome=%s} = %v; want 2", OtherOutcome, got)
	}
	if n := testutil.CollectAndCount(m.calls); n != len(want)+1 {
		t.Errorf("calls has %d series; want %d", n, len(want)+1)
	}
}

func TestToolLabelsAreCapped(t *testing.T) {
	m := New()
	for i := range MaxToolLabels {
		call(m, observe.Call{Tool: fmt.Sprintf("tool%d", i), Outcome: observe.OK, PeakMemory: 1 << 20})
	}
	for i := range 500 {
		call(m, observe.Call{Tool: fmt.Sprintf("late%d", i), Outcome: observe.OK, PeakMemory: 1 << 20})
	}
	// A name seen before the cap keeps its own series after it.
	call(m, observe.Call{Tool: "tool0", Outcome: observe.OK, PeakMemory: 1 << 20})

	if got := testutil.ToFloat64(m.calls.WithLabelValues(OtherTool, "ok")); got != 500 {
		t.Errorf("calls{tool=%q} = %v; want 500", OtherTool, got)
	}
	if got := testutil.ToFloat64(m.calls.WithLabelValues("tool0", "ok")); got != 2 {
		t.Errorf("calls{tool=tool0} = %v; want 2", got)
	}
	if got := testutil.ToFloat64(m.calls.WithLabelValues(fmt.Sprintf("tool%d", MaxToolLabels-1), "ok")); got != 1 {
		t.Errorf("calls{tool=tool%d} = %v; want 1", MaxToolLabels-1, got)
	}
	for _, v := range []struct {
		name string
		n    int
	}{
		{"calls", testutil.CollectAndCount(m.calls)},
		{"duration", testutil.CollectAndCount(m.duration)},
		{"peak memory", testutil.CollectAndCount(m.peakMemory)},
	} {
		if v.n != MaxToolLabels+1 {
			t.Errorf("%s has %d series; want %d", v.name, v.n, MaxToolLabels+1)
		}
	}
	s := scrape(t, m)
	wantSample(t, s, `wasmcp_call_duration_seconds_count{tool="(other)"}`, 500)
}

func TestCompileLoadReload(t *testing.T) {
	m := New()
	// Both reload results are exported before any reload happens.
	s := scrape(t, m)
	wantSample(t, s, `wasmcp_reloads_total{result="ok"}`, 0)
	wantSample(t, s, `wasmcp_reloads_total{result="error"}`, 0)
	wantSample(t, s, `wasmcp_compile_errors_total`, 0)

	m.Compiled("a", 300*time.Millisecond, nil)
	m.Compiled("b", 2*time.Second, nil)
	m.Compiled("c", 10*time.Millisecond, errors.New("bad module"))
	m.Loaded(5, 2)
	m.Loaded(4, 1) // a reload replaces the previous state
	m.Reloaded(nil)
	m.Reloaded(nil)
	m.Reloaded(errors.New("directory vanished"))

	if got := testutil.ToFloat64(m.compileErrors); got != 1 {
		t.Errorf("compile errors = %v; want 1", got)
	}
	if got := testutil.ToFloat64(m.modules); got != 4 {
		t.Errorf("modules loaded = %v; want 4", got)
	}
	if got := testutil.ToFloat64(m.failed); got != 1 {
		t.Errorf("modules failed = %v; want 1", got)
	}
	s = scrape(t, m)
	wantSample(t, s, `wasmcp_compile_duration_seconds_count`, 3)
	wantSample(t, s, `wasmcp_compile_duration_seconds_sum`, 2.31)
	wantSample(t, s, `wasmcp_compile_duration_seconds_bucket{le="0.01"}`, 1)
	wantSample(t, s, `wasmcp_compile_duration_seconds_bucket{le="0.5"}`, 2)
	wantSample(t, s, `wasmcp_compile_duration_seconds_bucket{le="2.5"}`, 3)
	wantSample(t, s, `wasmcp_modules_loaded`, 4)
	wantSample(t, s, `wasmcp_modules_failed`, 1)
	wantSample(t, s, `wasmcp_reloads_total{result="ok"}`, 2)
	wantSample(t, s, `wasmcp_reloads_total{result="error"}`, 1)
}

func TestHandlerServesPrometheusText(t *testing.T) {
	m := New()
	// Vectors print nothing until a series exists, so every one gets one.
	call(m, observe.Call{Tool: "calc", Outcome: observe.OK, Duration: time.Millisecond, PeakMemory: 64 << 10})
	call(m, observe.Call{Tool: "calc", Outcome: observe.Busy, Duration: 5 * time.Second, QueueWait: 5 * time.Second})

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q; want the text format", ct)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	body := strings.Join(lines, "\n")
	for _, want := range []string{
		"# TYPE wasmcp_calls_total counter",
		`wasmcp_calls_total{outcome="ok",tool="calc"} 1`,
		`wasmcp_calls_total{outcome="busy",tool="calc"} 1`,
		"# TYPE wasmcp_call_duration_seconds histogram",
		"# TYPE wasmcp_calls_in_flight gauge",
		"wasmcp_calls_in_flight 0",
		"# TYPE wasmcp_queue_wait_seconds histogram",
		"# TYPE wasmcp_call_peak_memory_bytes histogram",
		"# TYPE wasmcp_compile_duration_seconds histogram",
		"# TYPE wasmcp_compile_errors_total counter",
		"# TYPE wasmcp_modules_loaded gauge",
		"# TYPE wasmcp_modules_failed gauge",
		"# TYPE wasmcp_reloads_total counter",
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("scrape lacks line %q", want)
		}
	}
	if runtime.GOOS == "linux" && !strings.Contains(body, "process_cpu_seconds_total") {
		t.Error("scrape lacks the process collector's process_cpu_seconds_total")
	}
}

// Two servers in one process must not share counts or panic on duplicate
// registration, which is why each Metrics owns its registry.
func TestInstancesAreIndependent(t *testing.T) {
	a, b := New(), New()
	call(a, observe.Call{Tool: "calc", Outcome: observe.OK})
	call(a, observe.Call{Tool: "calc", Outcome: observe.OK})
	call(b, observe.Call{Tool: "calc", Outcome: observe.OK})
	wantSample(t, scrape(t, a), `wasmcp_calls_total{outcome="ok",tool="calc"}`, 2)
	wantSample(t, scrape(t, b), `wasmcp_calls_total{outcome="ok",tool="calc"}`, 1)
}

func TestConcurrentObservers(t *testing.T) {
	m := New()
	const workers, perWorker = 32, 200
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				// Distinct names from every worker race for the last label
				// slots: workers*perWorker/2 > MaxToolLabels.
				tool := "calc"
				if i%2 == 1 {
					tool = fmt.Sprintf("w%d-%d", w, i)
				}
				m.CallStarted(tool)
				m.CallFinished(observe.Call{Tool: tool, Outcome: observe.OK, Duration: time.Millisecond, QueueWait: time.Microsecond, PeakMemory: 1 << 16})
				if i%50 == 0 {
					m.Compiled("mod", time.Millisecond, nil)
					m.Loaded(w, i)
					m.Reloaded(nil)
				}
			}
		})
	}
	// Scrapes run alongside the writers, as they would in production.
	wg.Go(func() {
		for range 5 {
			scrapeText(t, m)
		}
	})
	wg.Wait()

	if got := testutil.ToFloat64(m.inFlight); got != 0 {
		t.Errorf("in flight = %v; want 0", got)
	}
	s := scrape(t, m)
	var total float64
	for k, v := range s {
		if strings.HasPrefix(k, "wasmcp_calls_total{") {
			total += v
		}
	}
	if total != workers*perWorker {
		t.Errorf("sum of wasmcp_calls_total = %v; want %d", total, workers*perWorker)
	}
	wantSample(t, s, `wasmcp_calls_total{outcome="ok",tool="calc"}`, workers*perWorker/2)
	wantSample(t, s, `wasmcp_queue_wait_seconds_count`, workers*perWorker)
	wantSample(t, s, `wasmcp_compile_duration_seconds_count`, workers*perWorker/50)
	wantSample(t, s, `wasmcp_reloads_total{result="ok"}`, workers*perWorker/50)
	if n := testutil.CollectAndCount(m.calls); n != MaxToolLabels+1 {
		t.Errorf("calls has %d series; want %d", n, MaxToolLabels+1)
	}
	if n := len(m.tools); n != MaxToolLabels {
		t.Errorf("%d tool labels handed out; want %d", n, MaxToolLabels)
	}
}
