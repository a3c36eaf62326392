package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// latency summarises a set of call durations, in milliseconds.
type latency struct {
	Calls  int     `json:"calls"`
	MeanMs float64 `json:"mean_ms"`
	MinMs  float64 `json:"min_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// percentile is the nearest-rank percentile of sorted: the smallest value
// with at least p% of the values at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func summarize(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	var sum time.Duration
	for _, x := range sorted {
		sum += x
	}
	return latency{
		Calls:  len(sorted),
		MeanMs: ms(sum) / float64(len(sorted)),
		MinMs:  ms(sorted[0]),
		P50Ms:  ms(percentile(sorted, 50)),
		P90Ms:  ms(percentile(sorted, 90)),
		P99Ms:  ms(percentile(sorted, 99)),
		MaxMs:  ms(sorted[len(sorted)-1]),
	}
}

// point is the throughput at one concurrency: that many clients (HTTP) or
// requests in flight on the one connection (stdio), each calling again as
// soon as it has its answer, for a fixed time.
type point struct {
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	Calls       int     `json:"calls"` // correct answers
	Errors      int     `json:"errors"`
	CallsPerSec float64 `json:"calls_per_sec"`
	Latency     latency `json:"latency"` // of the correct answers, under this load
	// CPUMsPerCall is the server's processor time (user and system, all
	// threads) over the point, divided by its correct answers.
	CPUMsPerCall float64 `json:"cpu_ms_per_call"`
}

// result is one server over one transport.
type result struct {
	Server    string `json:"server"`
	Impl      string `json:"impl"`
	Language  string `json:"language"`
	Tool      string `json:"tool"`
	Transport string `json:"transport"`
	Command   string `json:"command"`
	// FirstCallMs runs from starting the process to the first correct answer.
	FirstCallMs  float64  `json:"first_call_ms"`
	Latency      latency  `json:"latency"`         // sequential calls, after the warm-up
	CPUMsPerCall float64  `json:"cpu_ms_per_call"` // server's processor time per sequential call
	Throughput   []point  `json:"throughput"`
	Errors       int      `json:"errors"` // every failed call, warm-up included
	ErrorSamples []string `json:"error_samples,omitempty"`
	// OtherCPUPercent is the processor time used by neither the server nor
	// the bench while the run measured (after the warm-up), as a share of
	// the machine's; StealPercent is the time the hypervisor took. Either
	// much above zero means the numbers are noisy.
	OtherCPUPercent float64 `json:"other_cpu_percent"`
	StealPercent    float64 `json:"steal_percent"`
	// AllocKiBPerCall is the server's heap allocation per sequential call,
	// from its own metrics: wasmcp over HTTP only, the one server here
	// that reports them.
	AllocKiBPerCall float64 `json:"alloc_kib_per_call,omitempty"`
	PeakRSSMiB      float64 `json:"peak_rss_mib"` // VmHWM at the end of the run
	EndRSSMiB       float64 `json:"end_rss_mib"`  // VmRSS at the end of the run
	// Rounds is how many rounds the result combines (see rounds.go), and
	// RoundP50Ms the p50 of each, in the order they ran.
	Rounds     int       `json:"rounds,omitempty"`
	RoundP50Ms []float64 `json:"round_p50_ms,omitempty"`
	Failed     string    `json:"failed,omitempty"`
}

// errorLog counts failed calls and keeps the first few messages.
type errorLog struct {
	mu      sync.Mutex
	n       int
	samples []string
}

func (e *errorLog) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.samples) < 5 {
		e.samples = append(e.samples, err.Error())
	}
}

// session is a client connected to a running server.
type session struct {
	c    caller
	spec callSpec
	srv  *server
	ids  atomic.Int64
	errs *errorLog
}

const callTimeout = 30 * time.Second

// one makes a call and checks its answer.
func (s *session) one() (time.Duration, error) {
	id := s.ids.Add(1)
	req := s.spec.request(id)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	start := time.Now()
	raw, err := s.c.call(ctx, id, req)
	d := time.Since(start)
	if err == nil {
		err = verify(raw, id, s.srv.Check)
	}
	if err != nil {
		s.errs.add(err)
	}
	return d, err
}

// bench runs one server over one transport: start it, time its first
// answer, warm up, time cfg.N sequential calls, then each throughput point,
// and read its peak memory before stopping it.
func bench(cfg *config, a *artifacts, srv *server, transport string) (res result) {
	res = result{Server: srv.Name, Impl: srv.Impl, Language: srv.Language, Tool: srv.Tool, Transport: transport}
	fail := func(format string, args ...any) result {
		res.Failed = fmt.Sprintf(format, args...)
		return res
	}
	addr := ""
	if transport == "http" {
		var err error
		if addr, err = freeAddr(); err != nil {
			return fail("finding a free port: %v", err)
		}
	}
	argv := srv.command(cfg, a, addr)
	res.Command = shellJoin(argv)
	logPath := filepath.Join(a.out, "logs", srv.Name+"-"+transport+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fail("%v", err)
	}
	p, err := startProcess(argv, transport == "stdio", logPath)
	if err != nil {
		return fail("starting %s: %v", res.Command, err)
	}
	defer p.stop()

	errs := &errorLog{}
	s := &session{spec: newCallSpec(srv.Tool, srv.Args), srv: srv, errs: errs}
	if transport == "stdio" {
		s.c = newStdioCaller(p.stdin, p.stdout)
	} else {
		if err := p.waitListening(addr, time.Minute); err != nil {
			return fail("%v", err)
		}
		s.c = newHTTPCaller(addr, srv.Tool)
	}
	defer s.c.close()
	defer func() {
		res.Errors, res.ErrorSamples = errs.n, errs.samples
	}()

	if _, err := s.one(); err != nil {
		return fail("first call: %v; server log: %s", err, p.logTail())
	}
	res.FirstCallMs = ms(time.Since(p.started))
	for range cfg.Warmup - 1 {
		_, _ = s.one()
	}
	cpu0, err := p.cpu()
	if err != nil {
		return fail("reading CPU time: %v", err)
	}
	allocs := srv.wasmcp() && transport == "http"
	var alloc0 float64
	if allocs {
		if alloc0, err = allocated(addr); err != nil {
			return fail("reading the server's metrics: %v", err)
		}
	}
	wall0, self0 := time.Now(), selfCPU()
	busy0, steal0 := systemCPU()
	durs := make([]time.Duration, 0, cfg.N)
	for range cfg.N {
		if d, err := s.one(); err == nil {
			durs = append(durs, d)
		}
		if cfg.Pace > 0 {
			time.Sleep(cfg.Pace)
		}
	}
	res.Latency = summarize(durs)
	if cpu1, err := p.cpu(); err == nil && len(durs) > 0 {
		res.CPUMsPerCall = ms(cpu1-cpu0) / float64(len(durs))
	}
	if allocs && len(durs) > 0 {
		// The scrape itself allocates a little, spread over the calls.
		if alloc1, err := allocated(addr); err == nil {
			res.AllocKiBPerCall = (alloc1 - alloc0) / 1024 / float64(len(durs))
		}
	}

	levels := cfg.HTTPConcurrency
	if transport == "stdio" {
		levels = cfg.StdioConcurrency
	}
	for _, c := range levels {
		res.Throughput = append(res.Throughput, s.throughput(p, c, cfg.Duration))
	}

	if cpu1, err := p.cpu(); err == nil {
		busy1, steal1 := systemCPU()
		machine := float64(time.Since(wall0)) * float64(runtime.NumCPU())
		other := (busy1 - busy0) - (cpu1 - cpu0) - (selfCPU() - self0)
		res.OtherCPUPercent = max(0, 100*float64(other)/machine)
		res.StealPercent = 100 * float64(steal1-steal0) / machine
	}
	select {
	case <-p.exited:
		return fail("the server exited during the run (%v): %s", p.waitErr, p.logTail())
	default:
	}
	peak, now, err := p.memory()
	if err != nil {
		return fail("reading memory: %v", err)
	}
	res.PeakRSSMiB, res.EndRSSMiB = peak/(1<<20), now/(1<<20)
	return res
}

// throughput runs c workers for d, each calling in a loop.
func (s *session) throughput(p *process, c int, d time.Duration) point {
	cpu0, _ := p.cpu()
	s.errs.mu.Lock()
	before := s.errs.n
	s.errs.mu.Unlock()
	per := make([][]time.Duration, c)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if dur, err := s.one(); err == nil {
					per[w] = append(per[w], dur)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _ := p.cpu()
	all := slices.Concat(per...)
	s.errs.mu.Lock()
	errors := s.errs.n - before
	s.errs.mu.Unlock()
	pt := point{
		Concurrency: c,
		Seconds:     elapsed.Seconds(),
		Calls:       len(all),
		Errors:      errors,
		CallsPerSec: float64(len(all)) / elapsed.Seconds(),
		Latency:     summarize(all),
	}
	if len(all) > 0 {
		pt.CPUMsPerCall = ms(cpu1-cpu0) / float64(len(all))
	}
	return pt
}

// allocated is the bytes a wasmcp server listening at addr has allocated
// on its heap since it started, from its Prometheus metrics.
func allocated(addr string) (float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_alloc_bytes_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no go_memstats_alloc_bytes_total at %s/metrics", addr)
}
