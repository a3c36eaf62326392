// Package metrics exposes what the host reports through observe.Observer as
// Prometheus metrics. It lives outside host/ so the host never depends on a
// metrics library: the host only knows the observe.Observer interface.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// MaxToolLabels caps the distinct values of the tool label. Every value is a
// set of time series kept in memory for the life of the process (and in the
// Prometheus server behind it), and names never leave the set, even when a
// reload removes the tool. The host reports only names from loaded
// manifests, never one a client sent, but a tool directory is untrusted too:
// a directory rewritten over and over with fresh names, or a hostile file
// declaring thousands of tools, must not grow memory without bound. A
// thousand is far more tools than one server is expected to serve, so the
// cap only bites under abuse.
const MaxToolLabels = 1000

// OtherTool is the tool label of calls to tools first seen after
// MaxToolLabels names were taken. Tool names match [A-Za-z0-9_./-]{1,64}
// (see abi), so the parentheses keep it from ever being a real tool's name:
// a tool called "other" stays distinguishable from the overflow.
const OtherTool = "(other)"

// OtherOutcome is the outcome label of an outcome this package does not
// know. The host only reports the observe and sandbox constants, so seeing
// it means the two packages drifted apart; it is recorded rather than
// dropped so the calls still add up.
const OtherOutcome = "other"

// outcomes are the outcome label values the host can report. The set is
// closed so the label stays bounded whatever string reaches CallFinished.
var outcomes = map[string]bool{
	observe.OK:                    true,
	observe.ToolError:             true,
	observe.InvalidArguments:      true,
	observe.Busy:                  true,
	observe.CompileFailed:         true,
	observe.BadOutput:             true,
	string(sandbox.TimeLimit):     true,
	string(sandbox.MemoryLimit):   true,
	string(sandbox.OutputLimit):   true,
	string(sandbox.StackOverflow): true,
	string(sandbox.Trap):          true,
	string(sandbox.Exit):          true,
	string(sandbox.Cancelled):     true,
	string(sandbox.Internal):      true,
}

// durationBuckets span a trivial tool answering in about 100 µs to a call
// hitting a generous timeout at a minute, in roughly 1-2.5-5 steps so each
// decade keeps useful resolution for quantiles.
var durationBuckets = []float64{
	0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1, 2.5, 5,
	10, 30, 60,
}

// compileBuckets differ from durationBuckets because a cache hit takes
// milliseconds while compiling a large Go guest from scratch takes seconds
// to minutes; sub-millisecond resolution would be wasted there.
var compileBuckets = []float64{
	0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 30, 60, 120,
}

// memoryBuckets go from one WebAssembly page (64 KiB) to the 4 GiB a 32-bit
// memory can address, by factors of 4. Factor 4 keeps the per-tool series
// count low (this histogram is labelled by tool) and still puts the 64 MiB
// default limit exactly on a bucket boundary.
var memoryBuckets = prometheus.ExponentialBuckets(64<<10, 4, 9)

// Metrics records host activity as Prometheus metrics. It owns its
// registry rather than using prometheus.DefaultRegisterer, so that tests,
// and several servers in one process, each count only their own calls and
// never panic on duplicate registration.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	calls         *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	queueWait     prometheus.Histogram
	peakMemory    *prometheus.HistogramVec
	compileTime   prometheus.Histogram
	compileErrors prometheus.Counter
	modules       prometheus.Gauge
	failed        prometheus.Gauge
	reloads       *prometheus.CounterVec

	mu    sync.RWMutex
	tools map[string]struct{} // tool label values handed out, at most MaxToolLabels
}

var _ observe.Observer = (*Metrics)(nil)

// New returns Metrics with a fresh registry holding the wasmcp metrics and
// the Go runtime and process collectors, so one scrape shows both what the
// tools do and what it costs the server (goroutines, heap, CPU, open files).
func New() *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		tools: make(map[string]struct{}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasmcp_calls_total",
			Help: "Tool calls finished, by tool and outcome.",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wasmcp_call_duration_seconds",
			Help:    "Whole duration of tool calls, queueing included, by tool.",
			Buckets: durationBuckets,
		}, []string{"tool"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "wasmcp_calls_in_flight",
			Help: "Tool calls started and not yet finished, those waiting for a run slot included.",
		}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "wasmcp_queue_wait_seconds",
			Help:    "Time tool calls waited for a run slot.",
			Buckets: durationBuckets,
		}),
		peakMemory: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wasmcp_call_peak_memory_bytes",
			Help:    "Largest linear memory of each tool run, by tool.",
			Buckets: memoryBuckets,
		}, []string{"tool"}),
		compileTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "wasmcp_compile_duration_seconds",
			Help:    "Time to compile a module, failed compilations included.",
			Buckets: compileBuckets,
		}),
		compileErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wasmcp_compile_errors_total",
			Help: "Module compilations that failed.",
		}),
		modules: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "wasmcp_modules_loaded",
			Help: "Modules serving tools after the last load of the tool directory.",
		}),
		failed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "wasmcp_modules_failed",
			Help: "Files in the tool directory that failed to load at the last load.",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wasmcp_reloads_total",
			Help: "Reloads of the tool directory after a change, by result.",
		}, []string{"result"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.duration, m.inFlight, m.queueWait, m.peakMemory,
		m.compileTime, m.compileErrors, m.modules, m.failed, m.reloads,
	)
	// Both results exist from the start so that rate() and alerts on
	// result="error" see a zero rather than a missing series.
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")

	m.handler = promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A collector that fails (say, /proc unreadable in a container)
		// should cost its own series, not the whole scrape.
		ErrorHandling: promhttp.ContinueOnError,
		// Each scrape gathers every series; a burst of scrapes must not
		// pile up work on the server that also runs the tools.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
		Registry:            m.reg,
	}))
	return m
}

// Handler serves the registry in the Prometheus exposition format. It is
// meant to be mounted at /metrics; it reveals tool names and load
// failures, so it belongs behind the same access control as the tools.
func (m *Metrics) Handler() http.Handler { return m.handler }

// CallStarted counts the call as in flight. It has no tool label: the
// gauge answers "how loaded is the server", and per-tool gauges would
// multiply series for little gain.
func (m *Metrics) CallStarted(string) { m.inFlight.Inc() }

// CallFinished records a finished call and takes it out of the in-flight
// gauge.
func (m *Metrics) CallFinished(c observe.Call) {
	m.inFlight.Dec()
	tool := m.toolLabel(c.Tool)
	outcome := c.Outcome
	if !outcomes[outcome] {
		outcome = OtherOutcome
	}
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.duration.WithLabelValues(tool).Observe(c.Duration.Seconds())
	// Calls with invalid arguments are rejected before they queue; their
	// zero waits would drag the distribution towards "no contention".
	if c.Outcome != observe.InvalidArguments {
		m.queueWait.Observe(c.QueueWait.Seconds())
	}
	// Zero means no module ran; counting it would fill the lowest bucket
	// with calls that used no memory at all.
	if c.PeakMemory > 0 {
		m.peakMemory.WithLabelValues(tool).Observe(float64(c.PeakMemory))
	}
}

// Compiled records a compilation. The module name is not a label: the
// duration matters in aggregate (is the cache working, are compiles slow),
// and per-module series would add cardinality that the logs already cover.
func (m *Metrics) Compiled(_ string, d time.Duration, err error) {
	m.compileTime.Observe(d.Seconds())
	if err != nil {
		m.compileErrors.Inc()
	}
}

// Loaded records the state of the tool directory after a (re)load. Gauges,
// not counters, because each load replaces the previous state.
func (m *Metrics) Loaded(modules, failed int) {
	m.modules.Set(float64(modules))
	m.failed.Set(float64(failed))
}

// Reloaded counts a reload by result.
func (m *Metrics) Reloaded(err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.reloads.WithLabelValues(result).Inc()
}

// toolLabel returns the label value for a tool: its own name while fewer
// than MaxToolLabels names have been seen (or if it was among them), else
// OtherTool. Names seen once keep their label, so a tool's series never
// switch to OtherTool midway.
func (m *Metrics) toolLabel(tool string) string {
	m.mu.RLock()
	_, seen := m.tools[tool]
	m.mu.RUnlock()
	if seen {
		return tool
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, seen := m.tools[tool]; seen {
		return tool
	}
	if len(m.tools) >= MaxToolLabels {
		return OtherTool
	}
	m.tools[tool] = struct{}{}
	return tool
}
