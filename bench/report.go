package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// machine describes where the bench ran.
type machine struct {
	CPUs      int    `json:"cpus"` // nproc
	CPUModel  string `json:"cpu_model"`
	MemoryGiB string `json:"memory_gib"`
	Kernel    string `json:"kernel"`
	Go        string `json:"go"`
	Node      string `json:"node,omitempty"`
	// LoadAvg is /proc/loadavg's 1-minute average when the bench started:
	// anything else running skews the numbers.
	LoadAvg float64 `json:"load_avg_at_start"`
}

func loadAvg() float64 {
	data, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadAvg: loadAvg()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				m.MemoryGiB = fmt.Sprintf("%.1f", kb/(1<<20))
			}
		}
	}
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(data))
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		m.Node = strings.TrimSpace(string(out))
	}
	return m
}

func (m machine) String() string {
	s := fmt.Sprintf("%d CPUs (nproc), %s, %s GiB RAM, Linux %s, %s", m.CPUs, m.CPUModel, m.MemoryGiB, m.Kernel, m.Go)
	if m.Node != "" {
		s += ", Node.js " + m.Node
	}
	return s
}

// report is what --json writes.
type report struct {
	Date    time.Time `json:"date"`
	Command string    `json:"command"`
	Machine machine   `json:"machine"`
	Config  struct {
		N                int      `json:"n"`
		Warmup           int      `json:"warmup"`
		DurationSeconds  float64  `json:"duration_seconds"`
		HTTPConcurrency  []int    `json:"http_concurrency"`
		StdioConcurrency []int    `json:"stdio_concurrency"`
		Servers          []string `json:"servers"`
		PaceSeconds      float64  `json:"pace_seconds,omitempty"`
		WasmcpArgs       []string `json:"wasmcp_args,omitempty"`
		Rounds           int      `json:"rounds"`
	} `json:"config"`
	Results []result `json:"results"`
}

func (r *report) writeJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// rows are the table: one line per server and transport.
func (r *report) rows(concurrency []int) (header []string, rows [][]string) {
	header = []string{"server", "tool (language)", "transport", "p50 ms", "p99 ms", "CPU ms/call"}
	for _, c := range concurrency {
		header = append(header, fmt.Sprintf("calls/s c=%d", c))
	}
	// The latency under the heaviest load, where queueing shows.
	top := 0
	if len(concurrency) > 0 {
		top = slices.Max(concurrency)
	}
	header = append(header, fmt.Sprintf("p99 ms c=%d", top), "errors", "KiB alloc/call", "peak RSS MiB")
	for _, res := range r.Results {
		row := []string{res.Server, fmt.Sprintf("%s (%s)", res.Tool, res.Language), res.Transport}
		if res.Failed != "" {
			row = append(row, "failed: "+res.Failed)
			rows = append(rows, row)
			continue
		}
		row = append(row, fmtMs(res.Latency.P50Ms), fmtMs(res.Latency.P99Ms), fmtMs(res.CPUMsPerCall))
		for _, c := range concurrency {
			cell := "–"
			for _, p := range res.Throughput {
				if p.Concurrency == c {
					cell = fmt.Sprintf("%.0f", p.CallsPerSec)
				}
			}
			row = append(row, cell)
		}
		loaded := "–"
		for _, p := range res.Throughput {
			if p.Concurrency == top && p.Calls > 0 {
				loaded = fmtMs(p.Latency.P99Ms)
			}
		}
		alloc := "–"
		if res.AllocKiBPerCall > 0 {
			alloc = fmt.Sprintf("%.0f", res.AllocKiBPerCall)
		}
		row = append(row, loaded, strconv.Itoa(res.Errors), alloc, fmt.Sprintf("%.1f", res.PeakRSSMiB))
		rows = append(rows, row)
	}
	return header, rows
}

func fmtMs(ms float64) string {
	switch {
	case ms < 1:
		return fmt.Sprintf("%.3f", ms)
	case ms < 10:
		return fmt.Sprintf("%.2f", ms)
	default:
		return fmt.Sprintf("%.1f", ms)
	}
}

// numeric columns are right-aligned.
func numeric(col string) bool {
	return strings.Contains(col, " ms") || strings.Contains(col, "ms/") || strings.Contains(col, "/s") || col == "errors" || strings.Contains(col, "MiB")
}

func (r *report) writeTable(w io.Writer, concurrency []int) {
	header, rows := r.rows(concurrency)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// tabwriter aligns every column one way; pad the text columns by hand.
	width := make([]int, 3)
	for _, row := range append([][]string{header}, rows...) {
		for i := range 3 {
			width[i] = max(width[i], len([]rune(row[i])))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i, cell := range row {
			if i < 3 {
				cell += strings.Repeat(" ", width[i]-len([]rune(cell)))
			}
			b.WriteString(cell + "\t")
		}
		fmt.Fprintln(tw, b.String())
	}
	line(header)
	for _, row := range rows {
		line(row)
	}
	tw.Flush()
}

func (r *report) markdown(concurrency []int) []byte {
	header, rows := r.rows(concurrency)
	var b bytes.Buffer
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for _, col := range header {
		if numeric(col) {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	return b.Bytes()
}

// writeMarkdown writes the table with how and where it was made, ready to
// paste into a README.
func (r *report) writeMarkdown(path string, concurrency []int) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Command: `%s`  \n", r.Command)
	fmt.Fprintf(&b, "Date: %s  \n", r.Date.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Machine: %s\n\n", r.Machine)
	b.Write(r.markdown(concurrency))
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// shellJoin quotes argv for display.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
