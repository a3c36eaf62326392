// Command limits measures what hostile module shapes cost an engine to
// compile and to instantiate. Each shape stretches one dimension of a module
// (locals, nesting, branches, functions, globals, tables, element entries,
// ...). By default each is made exactly as large as wasmcp's limits allow
// (sandbox.ModuleLimits), so the figures are the worst a module can cost;
// --beyond makes them as large as the issue that set the limits found
// ruinous, to show what a limit prevents.
//
// Every measurement runs in a fresh child process, driving the engine
// directly: a compilation with an empty cache, as a compile worker does
// it, then one from the cache it left, which is what the server itself
// pays once a worker is done; then one instantiation. It reports the wall
// time of each and the child's peak resident memory beyond a trivial
// module's.
//
//	go run ./bench/limits                                     # wazero, at the limits
//	go run -tags wasmtime ./bench/limits --engine wasmtime   # wasmtime
//	go run ./bench/limits --beyond --timeout 20s             # what the limits refuse
//	go run ./bench/limits --files 'build/tools/*.wasm'       # real modules
//
// docs/design.md ("Resource promise") records the figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

// shape makes a module stretched in one dimension, at wasmcp's limits or
// beyond them.
type shape struct {
	name   string
	at     func(l wasmbin.Limits) []byte
	beyond func() []byte
}

var straight = func(n int) []byte { return wasmgen.Repeat(n/3, 0x41, 0x00, 0x1a) }

// brIfs is a block with n br_if to its end.
func brIfs(n int) []byte {
	return wasmgen.Cat([]byte{0x02, 0x40}, wasmgen.Repeat(n, 0x41, 0x00, 0x0d, 0x00), []byte{0x0b})
}

var shapes = []shape{
	{"locals in a function",
		func(l wasmbin.Limits) []byte {
			return wasmgen.Command{StartLocals: [][2]uint64{{l.Locals, wasmgen.I32}}}.Bytes()
		},
		func() []byte { return wasmgen.Command{StartLocals: [][2]uint64{{1 << 26, wasmgen.I32}}}.Bytes() }},
	{"locals in all functions",
		func(l wasmbin.Limits) []byte {
			n := int(l.TotalLocals / l.Locals)
			return wasmgen.Command{ExtraFunctions: n - 1, StartLocals: [][2]uint64{{l.Locals, wasmgen.I32}}, ExtraLocals: [][2]uint64{{l.Locals, wasmgen.I32}}}.Bytes()
		},
		func() []byte {
			return wasmgen.Command{ExtraFunctions: 100_000, ExtraLocals: [][2]uint64{{1000, wasmgen.I32}}}.Bytes()
		}},
	{"nesting",
		func(l wasmbin.Limits) []byte {
			per := uint64(l.Nesting) * uint64(l.Nesting)
			n := int(l.NestingCost / per)
			return wasmgen.Command{StartCode: wasmgen.Nested(l.Nesting - 1), ExtraFunctions: n - 1, ExtraCode: wasmgen.Nested(l.Nesting - 1)}.Bytes()
		},
		func() []byte { return wasmgen.Command{StartCode: wasmgen.Nested(60_000)}.Bytes() }},
	{"branches to one block",
		func(l wasmbin.Limits) []byte {
			per := l.BlockBranches * l.BlockBranches
			n := int(l.BranchCost / per)
			b := int(l.BlockBranches)
			return wasmgen.Command{StartCode: brIfs(b), ExtraFunctions: n - 1, ExtraCode: brIfs(b)}.Bytes()
		},
		func() []byte { return wasmgen.Command{StartCode: brIfs(100_000)}.Bytes() }},
	{"br_table targets",
		func(l wasmbin.Limits) []byte {
			// As many targets as one br_table may have, spread over as
			// many blocks as a function may nest.
			depth := l.Nesting - 2
			code := wasmgen.Repeat(depth, 0x02, 0x40)
			code = append(code, 0x41, 0x00, 0x0e)
			code = append(code, wasmgen.ULEB(uint64(l.BrTableTargets-1))...)
			for i := range l.BrTableTargets {
				code = append(code, wasmgen.ULEB(uint64(i%depth))...)
			}
			return wasmgen.Command{StartCode: append(code, wasmgen.Repeat(depth, 0x0b)...)}.Bytes()
		},
		func() []byte { return wasmgen.Command{StartCode: wasmgen.BrTable(250_000)}.Bytes() }},
	{"functions",
		func(l wasmbin.Limits) []byte { return wasmgen.Command{ExtraFunctions: l.Functions - 1}.Bytes() },
		func() []byte { return wasmgen.Command{ExtraFunctions: 1_000_000}.Bytes() }},
	{"types",
		func(l wasmbin.Limits) []byte { return wasmgen.Command{ExtraTypes: l.Types - 1}.Bytes() },
		func() []byte { return wasmgen.Command{ExtraTypes: 1_000_000}.Bytes() }},
	{"globals",
		func(l wasmbin.Limits) []byte { return wasmgen.Command{Globals: l.Globals}.Bytes() },
		func() []byte { return wasmgen.Command{Globals: 1_000_000}.Bytes() }},
	{"tables",
		func(l wasmbin.Limits) []byte {
			ts := make([]wasmgen.TableLimits, l.Tables)
			for i := range ts {
				ts[i] = wasmgen.TableLimits{Min: int64(l.TableElements) / int64(l.Tables), Max: -1}
			}
			return wasmgen.Command{Tables: ts}.Bytes()
		},
		func() []byte {
			ts := make([]wasmgen.TableLimits, 256)
			for i := range ts {
				ts[i] = wasmgen.TableLimits{Min: 1 << 20, Max: 1 << 20}
			}
			return wasmgen.Command{Tables: ts}.Bytes()
		}},
	{"passive element entries",
		func(l wasmbin.Limits) []byte { return wasmgen.Command{PassiveElements: int(l.ElementEntries)}.Bytes() },
		func() []byte { return wasmgen.Command{PassiveElements: 1 << 24}.Bytes() }},
	{"active element entries",
		func(l wasmbin.Limits) []byte {
			n := int(l.ElementEntries)
			return wasmgen.Command{Tables: []wasmgen.TableLimits{{Min: int64(n), Max: int64(n)}}, ActiveElements: n}.Bytes()
		},
		nil},
	{"data segments",
		func(l wasmbin.Limits) []byte { return wasmgen.Command{DataSegments: l.DataSegments}.Bytes() },
		func() []byte { return wasmgen.Command{DataSegments: 1_000_000}.Bytes() }},
	{"one function's size",
		func(l wasmbin.Limits) []byte {
			return wasmgen.Command{StartCode: straight(l.FunctionSize - 16)}.Bytes()
		},
		func() []byte { return wasmgen.Command{StartCode: straight(7_654_321)}.Bytes() }},
	{"a 64 MiB module",
		func(l wasmbin.Limits) []byte {
			n := (64<<20)/l.FunctionSize - 1
			return wasmgen.Command{StartCode: straight(l.FunctionSize - 16), ExtraFunctions: n - 1, ExtraCode: straight(l.FunctionSize - 16)}.Bytes()
		},
		nil},
}

func main() {
	log.SetFlags(0)
	engine := flag.String("engine", "wazero", "wazero or wasmtime (needs -tags wasmtime)")
	only := flag.String("shape", "", "only shapes whose name contains this")
	beyond := flag.Bool("beyond", false, "make each shape as large as the limits refuse, not as large as they allow")
	files := flag.String("files", "", "measure these modules (a glob) instead of the shapes")
	timeout := flag.Duration("timeout", time.Minute, "give up on one measurement after this long")
	child := flag.String("child", "", "internal: measure this module")
	cache := flag.String("cache", "", "internal: the child's compilation cache")
	step := flag.String("step", "", "internal: compile or instantiate")
	flag.Parse()
	if *child != "" {
		if err := measure(*engine, *child, *cache, *step); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Println(peakResident())
		return
	}

	dir, err := os.MkdirTemp("", "wasmcp-limits-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	m := &measurer{self: self, engine: *engine, dir: dir, timeout: *timeout}
	base := m.run(write(dir, "base", wasmgen.Command{}.Bytes()))
	m.base = base.compile.rss
	fmt.Printf("engine %s on %s; figures beyond a trivial module's (%s peak resident)\n", *engine, host(), mib(base.compile.rss))
	fmt.Printf("%-26s %10s | %-22s | %-22s | %-22s\n", "module", "bytes", "compile, empty cache", "compile, from cache", "instantiate")
	var paths []string
	if *files != "" {
		paths, _ = filepath.Glob(*files)
		for _, p := range paths {
			m.report(filepath.Base(p), p)
		}
		return
	}
	for _, s := range shapes {
		if *only != "" && !strings.Contains(s.name, *only) {
			continue
		}
		var wasm []byte
		if *beyond {
			if s.beyond == nil {
				continue
			}
			wasm = s.beyond()
		} else {
			wasm = s.at(sandbox.ModuleLimits)
			if err := checkWithin(wasm); err != nil {
				log.Fatalf("%s: the shape at the limits is not within them: %v", s.name, err)
			}
		}
		path := write(dir, strings.ReplaceAll(s.name, " ", "-"), wasm)
		m.report(s.name, path)
		os.Remove(path)
	}
}

func checkWithin(wasm []byte) error {
	parsed, err := wasmbin.Parse(wasm)
	if err != nil {
		return err
	}
	return sandbox.ModuleLimits.Check(parsed)
}

func host() string {
	name, _ := os.Hostname()
	return fmt.Sprintf("%s, %s", name, time.Now().UTC().Format("2006-01-02 15:04 MST"))
}

type measurer struct {
	self, engine, dir string
	timeout           time.Duration
	base              uint64
}

// step is one child's measurement.
type step struct {
	d       time.Duration
	rss     uint64
	outcome string
}

type steps struct{ compile, cached, instantiate step }

func (m *measurer) run(path string) steps {
	cache, err := os.MkdirTemp(m.dir, "cache-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(cache)
	var s steps
	s.compile = m.child(path, cache, "compile")
	if s.compile.outcome == "ok" {
		s.cached = m.child(path, cache, "compile")
		s.instantiate = m.child(path, cache, "instantiate")
	}
	return s
}

func (m *measurer) report(name, path string) {
	fi, _ := os.Stat(path)
	s := m.run(path)
	fmt.Printf("%-26s %10d | %-22s | %-22s | %-22s\n", name, fi.Size(), m.cell(s.compile), m.cell(s.cached), m.cell(s.instantiate))
}

func (m *measurer) cell(s step) string {
	switch s.outcome {
	case "":
		return ""
	case "ok":
		return fmt.Sprintf("%8s %9s", s.d.Round(time.Millisecond), mib(s.rss-min(s.rss, m.base)))
	}
	return s.outcome
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func (m *measurer) child(path, cache, what string) step {
	ctx, cancel := context.WithTimeout(context.Background(), m.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, m.self, "--engine", m.engine, "--child", path, "--cache", cache, "--step", what)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	s := step{d: time.Since(start), outcome: "ok"}
	switch {
	case ctx.Err() != nil:
		s.outcome = "over " + m.timeout.String()
	case err != nil:
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		s.outcome = first
		if len(s.outcome) > 22 {
			s.outcome = s.outcome[:21] + "…"
		}
	default:
		s.rss, _ = strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
	}
	return s
}

func write(dir, name string, wasm []byte) string {
	path := filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(path, wasm, 0o600); err != nil {
		log.Fatal(err)
	}
	return path
}

// peakResident is this process's peak resident memory, in bytes. (The
// rusage a parent gets for a child counts what the process held before
// exec, too.)
func peakResident() uint64 {
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
