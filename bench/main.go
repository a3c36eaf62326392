// Command bench measures wasmcp against native MCP servers built with the
// official Go and TypeScript SDKs: per-call latency, throughput at several
// concurrency levels and peak memory, over stdio and Streamable HTTP.
//
// It builds what it runs, starts each server as a user would (a
// subprocess: over stdio, or listening on a free loopback port), drives
// every one with the same raw JSON-RPC client, checks every answer, prints
// a table and writes the results as JSON and as a Markdown table.
//
//	go run ./bench                 # everything, in 3 rounds (about 20 minutes)
//	go run ./bench --quick         # a smoke run (about a minute)
//	go run ./bench --only wasmcp-go,native-go --transports http
//
// See bench/README.md for what each number means.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

type config struct {
	N                int
	Warmup           int
	Duration         time.Duration
	HTTPConcurrency  []int
	StdioConcurrency []int
	Transports       []string
	JSONPath         string
	MarkdownPath     string
	NoBuild          bool
	WasmcpArgs       []string      // added to every `wasmcp serve`
	Pace             time.Duration // pause between the timed sequential calls
	Rounds           int
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench: ")
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	var cfg config
	flag.IntVar(&cfg.N, "n", 2000, "sequential calls timed for the latency percentiles, per server and transport")
	// 2000, not 100: Node.js needs about that many calls before V8 has
	// compiled the TypeScript server's hot paths (bench/README.md).
	flag.IntVar(&cfg.Warmup, "warmup", 2000, "calls made before any is timed (the first one included)")
	flag.DurationVar(&cfg.Duration, "duration", 5*time.Second, "how long each throughput point runs")
	only := flag.String("only", "", "comma-separated servers to run, of: "+strings.Join(names, ", ")+" (default all)")
	transports := flag.String("transports", "stdio,http", "comma-separated transports to run")
	httpC := flag.String("http-concurrency", "1,4,32", "concurrent clients for the HTTP throughput points")
	stdioC := flag.String("stdio-concurrency", "1,4", "requests in flight on the one connection for the stdio throughput points")
	flag.StringVar(&cfg.JSONPath, "json", "", "where to write the results as JSON (default build/bench/results.json; results-quick.json with --quick)")
	flag.StringVar(&cfg.MarkdownPath, "markdown", "", "where to write the table as Markdown (default beside the JSON, .md)")
	quick := flag.Bool("quick", false, "a fast smoke run: --n 200 --warmup 20 --duration 1s --rounds 1, unless given")
	flag.BoolVar(&cfg.NoBuild, "no-build", false, "reuse what an earlier run built under build/bench")
	wasmcpArgs := flag.String("wasmcp-args", "", "extra flags for every wasmcp serve, space-separated (e.g. \"--prewarm 0\")")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "rounds over all the servers, which take turns; each figure is the median of its rounds")
	flag.DurationVar(&cfg.Pace, "pace", 0, "pause between the timed sequential calls, as an agent pauses between its calls (0: back to back)")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("unexpected arguments %q", flag.Args())
	}

	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *quick {
		if !set["n"] {
			cfg.N = 200
		}
		if !set["warmup"] {
			cfg.Warmup = 20
		}
		if !set["duration"] {
			cfg.Duration = time.Second
		}
		if !set["rounds"] {
			cfg.Rounds = 1
		}
	}
	if cfg.N < 1 || cfg.Warmup < 1 || cfg.Duration <= 0 || cfg.Rounds < 1 {
		log.Fatal("--n, --warmup and --rounds must be at least 1, and --duration positive")
	}
	var err error
	if cfg.HTTPConcurrency, err = parseInts(*httpC); err != nil {
		log.Fatalf("--http-concurrency: %v", err)
	}
	if cfg.StdioConcurrency, err = parseInts(*stdioC); err != nil {
		log.Fatalf("--stdio-concurrency: %v", err)
	}
	for t := range strings.SplitSeq(*transports, ",") {
		if t = strings.TrimSpace(t); t != "stdio" && t != "http" {
			log.Fatalf("--transports: unknown transport %q (want stdio, http)", t)
		}
		cfg.Transports = append(cfg.Transports, strings.TrimSpace(t))
	}
	cfg.WasmcpArgs = strings.Fields(*wasmcpArgs)
	sel, err := selectServers(*only)
	if err != nil {
		log.Fatal(err)
	}

	// Output paths the user gave are relative to where they ran the bench;
	// everything else is relative to the repository.
	for _, p := range []*string{&cfg.JSONPath, &cfg.MarkdownPath} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				log.Fatal(err)
			}
		}
	}
	// Before the build, which loads the machine itself.
	m := describeMachine()
	root, err := findRoot()
	if err != nil {
		log.Fatal(err)
	}
	a := newArtifacts(root)
	if cfg.JSONPath == "" {
		name := "results.json"
		if *quick {
			name = "results-quick.json"
		}
		cfg.JSONPath = filepath.Join(a.out, name)
	}
	if cfg.MarkdownPath == "" {
		cfg.MarkdownPath = strings.TrimSuffix(cfg.JSONPath, ".json") + ".md"
	}

	if cfg.NoBuild {
		err = a.check(sel)
	} else {
		err = a.build(sel)
	}
	if err == nil {
		err = a.precompile(sel)
	}
	if err != nil {
		log.Fatal(err)
	}

	r := &report{Date: time.Now().UTC(), Command: commandLine(), Machine: m}
	r.Config.N, r.Config.Warmup, r.Config.DurationSeconds = cfg.N, cfg.Warmup, cfg.Duration.Seconds()
	r.Config.HTTPConcurrency, r.Config.StdioConcurrency = cfg.HTTPConcurrency, cfg.StdioConcurrency
	r.Config.PaceSeconds, r.Config.WasmcpArgs, r.Config.Rounds = cfg.Pace.Seconds(), cfg.WasmcpArgs, cfg.Rounds
	for _, s := range sel {
		r.Config.Servers = append(r.Config.Servers, s.Name)
	}
	fmt.Fprintf(os.Stderr, "bench: %s\n", r.Machine)
	if r.Machine.LoadAvg > 0.5*float64(r.Machine.CPUs) {
		fmt.Fprintf(os.Stderr, "bench: warning: the machine is busy (load average %.2f): the numbers will be noisy\n", r.Machine.LoadAvg)
	}
	type run struct {
		srv       *server
		transport string
		rounds    []result
	}
	var runs []*run
	for _, s := range sel {
		for _, t := range cfg.Transports {
			runs = append(runs, &run{srv: s, transport: t})
		}
	}
	for round := range cfg.Rounds {
		for _, u := range inTurn(runs, round) {
			fmt.Fprintf(os.Stderr, "bench: round %d/%d %-12s %-5s ", round+1, cfg.Rounds, u.srv.Name, u.transport)
			start := time.Now()
			res := bench(&cfg, a, u.srv, u.transport)
			u.rounds = append(u.rounds, res)
			if res.Failed != "" {
				fmt.Fprintf(os.Stderr, "FAILED: %s\n", res.Failed)
				continue
			}
			fmt.Fprintf(os.Stderr, "p50 %s ms, p99 %s ms, %d errors, other processes %.0f%% of the CPUs (%.0fs)\n",
				fmtMs(res.Latency.P50Ms), fmtMs(res.Latency.P99Ms), res.Errors, res.OtherCPUPercent, time.Since(start).Seconds())
			if res.OtherCPUPercent > 10 || res.StealPercent > 10 {
				fmt.Fprintf(os.Stderr, "bench: warning: other processes (%.0f%%) or the hypervisor (%.0f%%) took CPU time during this run: its numbers are noisy\n", res.OtherCPUPercent, res.StealPercent)
			}
		}
	}
	failed := false
	for _, u := range runs {
		res := combine(u.rounds)
		failed = failed || res.Failed != ""
		r.Results = append(r.Results, res)
	}

	// The table's throughput columns: every level of the transports run.
	var levels []int
	for _, t := range cfg.Transports {
		l := cfg.HTTPConcurrency
		if t == "stdio" {
			l = cfg.StdioConcurrency
		}
		for _, c := range l {
			if !slices.Contains(levels, c) {
				levels = append(levels, c)
			}
		}
	}
	slices.Sort(levels)
	fmt.Println()
	r.writeTable(os.Stdout, levels)
	for _, path := range []string{cfg.JSONPath, cfg.MarkdownPath} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			log.Fatal(err)
		}
	}
	if err := r.writeJSON(cfg.JSONPath); err != nil {
		log.Fatal(err)
	}
	if err := r.writeMarkdown(cfg.MarkdownPath, levels); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nwrote %s and %s\n", cfg.JSONPath, cfg.MarkdownPath)
	if failed {
		os.Exit(1)
	}
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func selectServers(only string) ([]*server, error) {
	if only == "" {
		return servers, nil
	}
	var sel []*server
	for name := range strings.SplitSeq(only, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(servers, func(s *server) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("--only: no server %q", name)
		}
		if !slices.Contains(sel, servers[i]) {
			sel = append(sel, servers[i])
		}
	}
	return sel, nil
}

// findRoot is the repository: the nearest directory up from here whose
// go.mod is wasmcp's.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(data), "module github.com/wasmcp/wasmcp\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the bench inside the wasmcp repository")
		}
		dir = parent
	}
}

// commandLine is how the bench was started, as far as it can tell: under
// `go run` its own path is a temporary file, so it shows `go run ./bench`.
func commandLine() string {
	prog := shellJoin(os.Args[:1])
	if strings.Contains(os.Args[0], "go-build") {
		prog = "go run ./bench"
	}
	if len(os.Args) == 1 {
		return prog
	}
	return prog + " " + shellJoin(os.Args[1:])
}
