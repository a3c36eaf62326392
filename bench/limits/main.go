// Command limits measures what hostile module shapes cost an engine to
// compile and instantiate: for each shape (locals, nesting, br_table
// targets, functions, globals, tables, element entries, ...) at a series
// of sizes, it compiles and instantiates the module in a fresh child
// process and reports the wall time and the child's peak resident memory,
// less that of a trivial module. The engines are driven directly, without
// wasmcp's limits, so that the cost beyond a limit shows too.
//
//	go run ./bench/limits                                     # wazero, every shape
//	go run -tags wasmtime ./bench/limits --engine wasmtime   # wasmtime
//	go run ./bench/limits --shape nesting --sizes 1000,10000
//
// docs/design.md ("Resource promise") records the figures and the limits
// chosen from them.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

// shapes make a module stretched in one dimension to size n.
var shapes = map[string]struct {
	sizes []int
	make  func(n int) []byte
}{
	"locals": {[]int{50_000, 1 << 20, 1 << 24}, func(n int) []byte {
		return wasmgen.Command{StartLocals: [][2]uint64{{uint64(n), wasmgen.I32}}}.Bytes()
	}},
	"locals-many-functions": {[]int{1000, 10_000, 100_000}, func(n int) []byte {
		// n functions of 1,000 locals each
		return wasmgen.Command{ExtraFunctions: n, ExtraLocals: [][2]uint64{{1000, wasmgen.I32}}}.Bytes()
	}},
	"nesting": {[]int{1000, 5000, 20_000, 60_000}, func(n int) []byte {
		return wasmgen.Command{StartCode: wasmgen.Nested(n)}.Bytes()
	}},
	"br_table": {[]int{10_000, 65_520, 100_000, 250_000}, func(n int) []byte {
		return wasmgen.Command{StartCode: wasmgen.BrTable(n)}.Bytes()
	}},
	"br_tables": {[]int{100, 1000, 10_000}, func(n int) []byte {
		// n br_tables of 1,000 targets in one function
		return wasmgen.Command{StartCode: wasmgen.Repeat(n, wasmgen.BrTable(1000)...)}.Bytes()
	}},
	"br_ifs": {[]int{10_000, 100_000, 1_000_000}, func(n int) []byte {
		// n br_ifs in one block, all to its end
		return wasmgen.Command{StartCode: wasmgen.Cat([]byte{0x02, 0x40}, wasmgen.Repeat(n, 0x41, 0x00, 0x0d, 0x00), []byte{0x0b})}.Bytes()
	}},
	"functions": {[]int{10_000, 100_000, 1_000_000}, func(n int) []byte {
		return wasmgen.Command{ExtraFunctions: n}.Bytes()
	}},
	"types": {[]int{10_000, 100_000, 1_000_000}, func(n int) []byte {
		return wasmgen.Command{ExtraTypes: n}.Bytes()
	}},
	"globals": {[]int{10_000, 100_000, 1_000_000}, func(n int) []byte {
		return wasmgen.Command{Globals: n}.Bytes()
	}},
	"tables": {[]int{16, 256}, func(n int) []byte {
		ts := make([]wasmgen.TableLimits, n)
		for i := range ts {
			ts[i] = wasmgen.TableLimits{Min: 1 << 20, Max: 1 << 20}
		}
		return wasmgen.Command{Tables: ts}.Bytes()
	}},
	"passive-elements": {[]int{1 << 16, 1 << 20, 1 << 24}, func(n int) []byte {
		return wasmgen.Command{PassiveElements: n}.Bytes()
	}},
	"active-elements": {[]int{1 << 16, 1 << 20}, func(n int) []byte {
		return wasmgen.Command{Tables: []wasmgen.TableLimits{{Min: int64(n), Max: int64(n)}}, ActiveElements: n}.Bytes()
	}},
	"data-segments": {[]int{10_000, 100_000, 1_000_000}, func(n int) []byte {
		return wasmgen.Command{DataSegments: n}.Bytes()
	}},
	"big-function": {[]int{1 << 20, 7_654_321}, func(n int) []byte {
		// i32.const 0; drop, repeated: n bytes of straight-line code
		return wasmgen.Command{StartCode: wasmgen.Repeat(n/3, 0x41, 0x00, 0x1a)}.Bytes()
	}},
}

func main() {
	log.SetFlags(0)
	engine := flag.String("engine", "wazero", "wazero or wasmtime (needs -tags wasmtime)")
	only := flag.String("shape", "", "one shape (default all)")
	sizes := flag.String("sizes", "", "comma-separated sizes for --shape")
	child := flag.String("child", "", "internal: compile and instantiate this file")
	timeout := flag.Duration("timeout", 60*time.Second, "give up on one measurement after this long")
	files := flag.String("files", "", "measure these modules (a glob) instead of the shapes")
	flag.Parse()
	if *child != "" {
		if err := measure(*engine, *child); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		// The peak of this process's own memory: the rusage a parent gets
		// counts what the process held before exec too.
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				fmt.Println(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")))
			}
		}
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
	base := run(self, *engine, write(dir, "base", wasmgen.Command{}.Bytes()), *timeout)
	fmt.Printf("engine %s; baseline: %s, %d MiB peak RSS\n", *engine, base.d.Round(time.Millisecond), base.rss>>20)
	if *files != "" {
		paths, _ := filepath.Glob(*files)
		for _, path := range paths {
			size := int64(0)
			if fi, err := os.Stat(path); err == nil {
				size = fi.Size()
			}
			r := run(self, *engine, path, *timeout)
			fmt.Printf("%-28s %10d %10s %9d MiB  %s\n", filepath.Base(path), size, r.d.Round(time.Millisecond), (int64(r.rss)-int64(base.rss))>>20, r.outcome)
		}
		return
	}
	fmt.Printf("%-22s %12s %10s %10s %12s  %s\n", "shape", "n", "bytes", "time", "extra RSS", "outcome")
	names := make([]string, 0, len(shapes))
	for k := range shapes {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if *only != "" && name != *only {
			continue
		}
		s := shapes[name]
		ns := s.sizes
		if *sizes != "" {
			ns = nil
			for _, f := range strings.Split(*sizes, ",") {
				n, err := strconv.Atoi(f)
				if err != nil {
					log.Fatal(err)
				}
				ns = append(ns, n)
			}
		}
		for _, n := range ns {
			wasm := s.make(n)
			path := write(dir, fmt.Sprintf("%s-%d", name, n), wasm)
			r := run(self, *engine, path, *timeout)
			extra := int64(r.rss) - int64(base.rss)
			fmt.Printf("%-22s %12d %10d %10s %9d MiB  %s\n", name, n, len(wasm), r.d.Round(time.Millisecond), extra>>20, r.outcome)
			os.Remove(path)
		}
	}
}

func write(dir, name string, wasm []byte) string {
	path := filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(path, wasm, 0o600); err != nil {
		log.Fatal(err)
	}
	return path
}

type result struct {
	d       time.Duration
	rss     uint64 // bytes
	outcome string
}

func run(self, engine, path string, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "--engine", engine, "--child", path)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r := result{d: time.Since(start), outcome: "ok"}
	if kb, ok := strings.CutSuffix(strings.TrimSpace(string(out)), " kB"); ok && err == nil {
		n, _ := strconv.ParseUint(kb, 10, 64)
		r.rss = n << 10
	}
	switch {
	case ctx.Err() != nil:
		r.outcome = "killed after " + timeout.String()
	case err != nil:
		r.outcome = strings.TrimSpace(firstLine(string(out)))
	}
	return r
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	if len(first) > 80 {
		first = first[:80] + "…"
	}
	return first
}

// measure compiles and instantiates one module in this process.
func measure(engine, path string) error {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if engine == "wasmtime" {
		return measureWasmtime(wasm)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true))
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	_, err = rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		return fmt.Errorf("instantiate: %w", err)
	}
	return nil
}
