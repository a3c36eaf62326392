package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one server under test: an implementation serving one tool.
type server struct {
	Name     string // as --only selects it
	Impl     string // wasmcp, go-sdk or ts-sdk
	Language string // the tool's language
	Tool     string
	// Source is where the tool's module comes from (wasmcp servers only):
	// a directory of tools/ built by scripts/build-tools, a C file in
	// bench/c-guests packed with Manifest, or goCommand and a Go tool's
	// directory: the tool built as a plain command, not a reactor.
	Source   string
	Manifest string
	// Engine is wasmcp's --engine; empty is its default, wazero.
	Engine string
	Args   map[string]any
	Check  func(*toolResult) error
}

// wasmcp reports whether the server is wasmcp serving a module.
func (s *server) wasmcp() bool { return s.Impl == "wasmcp" }

func wantText(want string) func(*toolResult) error {
	return func(r *toolResult) error {
		if got := r.text(); got != want {
			return fmt.Errorf("result %q, want %q", got, want)
		}
		return nil
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

var calculateArgs = map[string]any{"a": 10, "b": 5, "operation": "add"}

// cCalculate is the C guest's calculate, packed with the Go guest's
// manifest.
const cCalculate, calculateManifest = "bench/c-guests/calculate.c", "tools/calculate/manifest.json"

// primesArgs are count_primes' arguments: enough work (milliseconds) that
// the guest's loops, not the call around them, dominate.
var primesArgs = map[string]any{"below": 60000}

const cPrimes, primesManifest = "bench/c-guests/count_primes.c", "bench/c-guests/count_primes.json"

// goCommand prefixes a Go tool's Source to build it as a command, which
// starts the Go runtime in every call, rather than as the reactor its
// build script makes, whose calls start from a snapshot.
const goCommand = "go-command:"

// servers are every server the bench knows, in the order it runs them.
// calculate is the like-for-like comparison (the Go and C guests and both
// native baselines); the Rust, AssemblyScript, WAT, JavaScript and
// TypeScript guests are represented by their example tools, each a call of
// similar weight.
var servers = []*server{
	{Name: "wasmcp-go", Impl: "wasmcp", Language: "Go, snapshotted", Tool: "calculate", Source: "tools/calculate",
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "wasmcp-go-command", Impl: "wasmcp", Language: "Go, a command", Tool: "calculate", Source: goCommand + "tools/calculate", Manifest: calculateManifest,
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "wasmcp-c", Impl: "wasmcp", Language: "C", Tool: "calculate", Source: cCalculate, Manifest: calculateManifest,
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "wasmcp-rust", Impl: "wasmcp", Language: "Rust", Tool: "convert_units", Source: "tools/convert_units",
		Args: map[string]any{"value": 5, "from": "km", "to": "mi"}, Check: checkConvert},
	{Name: "wasmcp-as", Impl: "wasmcp", Language: "AssemblyScript", Tool: "slugify", Source: "tools/slugify",
		Args: map[string]any{"text": "Crème Brûlée: 2 Ways!", "maxLength": 50}, Check: wantText("creme-brulee-2-ways")},
	{Name: "wasmcp-wat", Impl: "wasmcp", Language: "WAT", Tool: "random_uuid", Source: "tools/random_uuid",
		Check: func(r *toolResult) error {
			if !uuidV4.MatchString(r.text()) {
				return fmt.Errorf("result %q is not a version 4 UUID", r.text())
			}
			return nil
		}},
	{Name: "wasmcp-js", Impl: "wasmcp", Language: "JavaScript", Tool: "find_matches", Source: "tools/find_matches",
		Args: findMatchesArgs, Check: checkStructured(findMatchesWant)},
	{Name: "wasmcp-ts", Impl: "wasmcp", Language: "TypeScript", Tool: "date_diff", Source: "tools/date_diff",
		Args: dateDiffArgs, Check: checkStructured(dateDiffWant)},
	{Name: "wasmcp-python", Impl: "wasmcp", Language: "Python", Tool: "date_info", Source: "tools/date_info",
		Args: dateArgs, Check: checkStructured(dateWant)},
	{Name: "wasmtime-python", Impl: "wasmcp", Engine: "wasmtime", Language: "Python, on wasmtime", Tool: "date_info", Source: "tools/date_info",
		Args: dateArgs, Check: checkStructured(dateWant)},
	{Name: "wasmtime-go", Impl: "wasmcp", Engine: "wasmtime", Language: "Go, snapshotted, on wasmtime", Tool: "calculate", Source: "tools/calculate",
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "wasmtime-go-command", Impl: "wasmcp", Engine: "wasmtime", Language: "Go, a command, on wasmtime", Tool: "calculate", Source: goCommand + "tools/calculate", Manifest: calculateManifest,
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "wasmtime-c", Impl: "wasmcp", Engine: "wasmtime", Language: "C, on wasmtime", Tool: "calculate", Source: cCalculate, Manifest: calculateManifest,
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "wasmtime-js", Impl: "wasmcp", Engine: "wasmtime", Language: "JavaScript, on wasmtime", Tool: "find_matches", Source: "tools/find_matches",
		Args: findMatchesArgs, Check: checkStructured(findMatchesWant)},
	{Name: "wasmcp-primes", Impl: "wasmcp", Language: "C, compute-heavy", Tool: "count_primes", Source: cPrimes, Manifest: primesManifest,
		Args: primesArgs, Check: wantText("6057")},
	{Name: "wasmtime-primes", Impl: "wasmcp", Engine: "wasmtime", Language: "C, compute-heavy, on wasmtime", Tool: "count_primes", Source: cPrimes, Manifest: primesManifest,
		Args: primesArgs, Check: wantText("6057")},
	{Name: "native-go", Impl: "go-sdk", Language: "Go, native", Tool: "calculate",
		Args: calculateArgs, Check: wantText("15.0")},
	{Name: "native-ts", Impl: "ts-sdk", Language: "TypeScript, native", Tool: "calculate",
		Args: calculateArgs, Check: wantText("15.0")},
}

// The JavaScript and TypeScript guests' calls: their example tools, on the
// QuickJS runtime, each a few microseconds of the tool's own work.
var (
	findMatchesArgs = map[string]any{"text": "2026-01 and 2027-02", "pattern": `(\d{4})-(\d{2})`}
	findMatchesWant = `{"count":2,"matches":[{"groups":["2026","01"],"index":0,"match":"2026-01"},{"groups":["2027","02"],"index":12,"match":"2027-02"}]}`
	dateDiffArgs    = map[string]any{"start": "2026-03-02", "end": "2026-03-09"}
	dateDiffWant    = `{"businessDays":5,"days":7,"weeks":1}`
)

// checkStructured wants structuredContent equal to the JSON want, member
// order aside.
func checkStructured(want string) func(*toolResult) error {
	return func(r *toolResult) error {
		var got, w any
		if err := json.Unmarshal(r.StructuredContent, &got); err != nil {
			return fmt.Errorf("structuredContent %q: %v", r.StructuredContent, err)
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			return err
		}
		if !reflect.DeepEqual(got, w) {
			return fmt.Errorf("structuredContent %s, want %s", r.StructuredContent, want)
		}
		return nil
	}
}

// The Python guest's call: date_info, asked for its every field.
var (
	dateArgs = map[string]any{"date": "2024-02-29", "other": "2024-03-01"}
	dateWant = `{"date":"2024-02-29","weekday":"Thursday","isoYear":2024,"isoWeek":9,"dayOfYear":60,"leapYear":true,"daysInMonth":29,"daysUntilOther":1}`
)

func checkConvert(r *toolResult) error {
	var out struct {
		Result   float64 `json:"result"`
		Category string  `json:"category"`
	}
	if err := json.Unmarshal(r.StructuredContent, &out); err != nil {
		return fmt.Errorf("structuredContent %q: %v", r.StructuredContent, err)
	}
	if math.Abs(out.Result-3.10685596119) > 1e-9 || out.Category != "length" {
		return fmt.Errorf("5 km is %v mi (%s), want 3.10685596119 (length)", out.Result, out.Category)
	}
	return nil
}

// command is how a user would start the server, over stdio or, when addr
// is set, Streamable HTTP.
func (s *server) command(cfg *config, a *artifacts, addr string) []string {
	var argv []string
	switch s.Impl {
	case "wasmcp":
		argv = []string{a.wasmcp, "serve", "--tools", a.toolDir(s), "--cache-dir", a.cacheDir}
		if s.Engine != "" {
			argv = append(argv, "--engine", s.Engine)
		}
		argv = append(argv, cfg.WasmcpArgs...)
	case "go-sdk":
		argv = []string{a.nativeGo}
	case "ts-sdk":
		argv = []string{"node", filepath.Join(a.root, "bench/native-ts/server.mjs")}
	}
	if addr != "" {
		argv = append(argv, "--http", addr)
	}
	return argv
}

// process is a running server.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	stdin   *os.File // stdio only: our ends of its stdin and stdout
	stdout  *os.File
	logPath string
	exited  chan struct{}
	waitErr error
}

// startProcess starts argv with its stderr going to logPath; with stdio,
// its stdin and stdout are pipes to us.
func startProcess(argv []string, stdio bool, logPath string) (*process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = logf
	p := &process{cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	var theirs []*os.File
	if stdio {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		cmd.Stdin, cmd.Stdout = inR, outW
		p.stdin, p.stdout = inW, outR
		theirs = []*os.File{inR, outW}
	}
	p.started = time.Now()
	err = cmd.Start()
	for _, f := range theirs {
		f.Close()
	}
	if err != nil {
		if p.stdin != nil {
			p.stdin.Close()
			p.stdout.Close()
		}
		return nil, err
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitListening polls addr until it accepts a connection, the process
// exits, or timeout passes.
func (p *process) waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, timeout)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("exited before listening (%v): %s", p.waitErr, p.logTail())
		case <-tick.C:
		}
	}
}

// memory reads the process's peak and current resident set sizes.
func (p *process) memory() (peak, now float64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	field := func(name string) float64 {
		for line := range strings.Lines(string(data)) {
			if f := strings.Fields(line); len(f) == 3 && f[0] == name+":" && f[2] == "kB" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb * 1024
			}
		}
		return math.NaN()
	}
	peak, now = field("VmHWM"), field("VmRSS")
	if math.IsNaN(peak) {
		return 0, 0, errors.New("no VmHWM in /proc/PID/status")
	}
	return peak, now, nil
}

// clockTick is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// cpu is the processor time the process has used so far, user and system,
// its ended threads included.
func (p *process) cpu() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces; fields count
	// from after it: state is field 3, utime 14 and stime 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc/PID/stat")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unreadable /proc/PID/stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// systemCPU is the processor time every process on the machine has used
// (user, nice and system; not interrupts) and the time stolen from it by
// the hypervisor, from /proc/stat.
func systemCPU() (busy, steal time.Duration) {
	data, _ := os.ReadFile("/proc/stat")
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	tick := func(i int) time.Duration {
		n, _ := strconv.ParseInt(f[i], 10, 64)
		return time.Duration(n) * clockTick
	}
	return tick(1) + tick(2) + tick(3), tick(8)
}

// selfCPU is the bench's own processor time.
func selfCPU() time.Duration {
	p := &process{cmd: &exec.Cmd{Process: &os.Process{Pid: os.Getpid()}}}
	d, _ := p.cpu()
	return d
}

// stop ends the server the way its user would: stdio servers see their
// stdin close, HTTP servers get SIGTERM. Either gets 10 s before a kill.
func (p *process) stop() {
	if p.stdin != nil {
		p.stdin.Close()
	} else {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	if p.stdout != nil {
		p.stdout.Close()
	}
}

// logTail is the end of the server's stderr, for error messages.
func (p *process) logTail() string {
	data, _ := os.ReadFile(p.logPath)
	data = bytes.TrimSpace(data)
	if len(data) > 600 {
		data = append([]byte("…"), data[len(data)-600:]...)
	}
	if len(data) == 0 {
		return "(nothing on stderr)"
	}
	return string(data)
}

// freeAddr finds a loopback port that is free now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
