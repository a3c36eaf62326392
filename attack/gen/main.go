// Command gen writes hostile modules that stay within wasmcp's module
// limits: go run ./attack/gen SHAPE OUT.wasm [N]. Each shape is a WASI
// command (exports _start and memory) that the catalog loads.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: gen SHAPE OUT.wasm [N]")
		os.Exit(2)
	}
	n := 0
	if len(os.Args) > 3 {
		n, _ = strconv.Atoi(os.Args[3])
	}
	var wasm []byte
	switch os.Args[1] {
	case "deepstack":
		// One function's operand stack n values deep (local.get 0 n
		// times, then n-1 adds): the depth is bounded by nothing but the
		// body's size. Default: as deep as a 1 MiB body allows.
		if n == 0 {
			n = (1<<20 - 16) / 3
		}
		code := wasmgen.Cat(wasmgen.Repeat(n, 0x20, 0x00), wasmgen.Repeat(n-1, 0x6a), []byte{0x1a})
		wasm = command(bodyFuncs(1, [][2]uint64{{1, wasmgen.I32}}, code))
	case "deepstackmany":
		// n functions (default 60) each a 1 MiB deep stack: a 60 MiB
		// module, under the 64 MiB file limit.
		if n == 0 {
			n = 60
		}
		k := (1<<20 - 16) / 3
		code := wasmgen.Cat(wasmgen.Repeat(k, 0x20, 0x00), wasmgen.Repeat(k-1, 0x6a), []byte{0x1a})
		wasm = command(bodyFuncs(n, [][2]uint64{{1, wasmgen.I32}}, code))
	case "straight":
		// n functions (default 60) of 1 MiB of local.get/local.set on
		// 1,000 locals: large but ordinary code.
		if n == 0 {
			n = 60
		}
		var code []byte
		for i := 0; len(code) < 1<<20-16; i++ {
			code = append(code, 0x20)
			code = append(code, wasmgen.ULEB(uint64(i%1000))...)
			code = append(code, 0x21)
			code = append(code, wasmgen.ULEB(uint64((i+1)%1000))...)
		}
		wasm = command(bodyFuncs(n, [][2]uint64{{1000, wasmgen.I32}}, code))
	case "livecall":
		// One function keeps n values live across a call of itself
		// (never taken): every value is spilled around the call.
		if n == 0 {
			n = (1<<20 - 32) / 3
		}
		code := wasmgen.Cat(wasmgen.Repeat(n, 0x20, 0x00),
			[]byte{0x20, 0x00, 0x04, 0x40, 0x10, 0x01, 0x0b}, // if (local 0) call 1 end
			wasmgen.Repeat(n-1, 0x6a), []byte{0x1a})
		wasm = command(bodyFuncs(1, [][2]uint64{{1, wasmgen.I32}}, code))
	case "loadstack", "loadstackmany":
		// A deep operand stack of distinct values: n loads from different
		// addresses (none can be merged), summed, and the sum stored. With
		// "many", 60 such functions of 1 MiB each.
		count := 1
		if os.Args[1] == "loadstackmany" {
			count = 60
		}
		size := (1<<20 - 64) * 5 / 6
		if v := os.Getenv("BODY"); v != "" {
			size, _ = strconv.Atoi(v)
		}
		var code []byte
		k := 0
		for ; len(code) < size; k++ {
			code = append(code, 0x41, 0x00, 0x28, 0x02)
			code = append(code, wasmgen.ULEB(uint64(k*4%60000))...)
		}
		code = append(code, wasmgen.Repeat(k-1, 0x6a)...)
		code = append(code, 0x21, 0x00, 0x41, 0x00, 0x20, 0x00, 0x36, 0x02, 0x00)
		if n > 0 {
			count = n
		}
		wasm = command(bodyFuncs(count, [][2]uint64{{1, wasmgen.I32}}, code))
	case "alllimits":
		// Every bounded dimension at once, each near its documented limit
		// (override with the environment): a _start nested 8,191 deep
		// (NEST), and one function with 50,000 locals (LOCALS), a block
		// with 5,000 br_ifs to it (BRS), a br_table of 5,000 targets to
		// another (TABLE), and FILL bytes (default: the rest of a 1 MiB
		// body) of local.get/local.set traffic over the locals, with
		// 10,000 globals. The branch-cost budget (2^26) holds 5,000^2 twice.
		locals, brs, table, nest := env("LOCALS", 50000), env("BRS", 5000), env("TABLE", 5000), env("NEST", 8191)
		var br []byte
		br = append(br, 0x02, 0x40)
		for range brs {
			br = append(br, 0x20, 0x00, 0x0d, 0x00) // local.get 0; br_if 0
		}
		br = append(br, 0x0b)
		tbl := []byte{}
		if table > 0 {
			tbl = wasmgen.BrTable(table)
		}
		fillTo := env("FILL", 1<<20-len(tbl)-len(br)-64)
		fill := []byte{}
		for i := 0; len(fill) < fillTo; i++ {
			fill = append(fill, 0x20)
			fill = append(fill, wasmgen.ULEB(uint64(i%locals))...)
			fill = append(fill, 0x21)
			fill = append(fill, wasmgen.ULEB(uint64((i*7+1)%locals))...)
		}
		code := wasmgen.Cat(br, tbl, fill)
		c := wasmgen.Command{ExtraFunctions: 1, ExtraLocals: [][2]uint64{{uint64(locals), wasmgen.I32}}, ExtraCode: code,
			StartCode: wasmgen.Nested(nest), Globals: env("GLOBALS", 10000)}
		wasm = c.Bytes()
	case "chain":
		// One function of n empty blocks (default: half a 1 MiB body)
		// then READS reads of local 0: wazero's SSA builder looks a local
		// up through every single-predecessor block before it, uncached.
		if n == 0 {
			n = (1<<20 - 64) / 2 / 3
		}
		reads := env("READS", (1<<20-64)/2/3)
		code := wasmgen.Cat(wasmgen.Repeat(n, 0x02, 0x40, 0x0b), wasmgen.Repeat(reads, 0x20, 0x00, 0x1a))
		wasm = command(bodyFuncs(env("COPIES", 1), [][2]uint64{{1, wasmgen.I32}}, code))
	case "tiny":
		// n tiny functions (default 40,000, the limit), each "nop".
		if n == 0 {
			n = 40000
		}
		wasm = command(bodyFuncs(n, nil, []byte{0x01}))
	default:
		fmt.Fprintln(os.Stderr, "unknown shape", os.Args[1])
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[2], wasm, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// funcs is n functions of type () -> () beyond _start, with one body.
type funcs struct {
	n      int
	locals [][2]uint64
	code   []byte
}

func bodyFuncs(n int, locals [][2]uint64, code []byte) funcs { return funcs{n, locals, code} }

// command is a module exporting an empty _start (function 0) and memory,
// with the extra functions.
func command(f funcs) []byte {
	return wasmgen.Command{ExtraFunctions: f.n, ExtraLocals: f.locals, ExtraCode: f.code}.Bytes()
}

// env reads an integer from the environment, or gives def.
func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
