package sandbox

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// memcheckModule is the memcheck test module with a memory of pages pages
// whose bytes [start, end) its active data segments give: three of them,
// written out of address order and overlapping, as the specification lets
// a module write them.
func memcheckModule(t testing.TB, pages uint64, start, end uint32) []byte {
	t.Helper()
	wasm := wattest.Build(t, "memcheck")
	out := wasmgen.Header()
	for off := 8; off < len(wasm); {
		id := wasm[off]
		size, n := binary.Uvarint(wasm[off+1:])
		body := wasm[off+1+n : off+1+n+int(size)]
		off += 1 + n + int(size)
		if id == 5 {
			body = wasmgen.Vec(wasmgen.Limits(0, pages))
		}
		out = wasmgen.Cat(out, wasmgen.Section(id, body))
	}
	if end <= start {
		return out
	}
	segment := func(from, to uint32) []byte {
		b := make([]byte, to-from)
		for i := range b {
			b[i] = byte((from+uint32(i))%251 + 1)
		}
		return wasmgen.Cat([]byte{0}, []byte{0x41}, wasmgen.SLEB(int64(from)), []byte{0x0b}, wasmgen.ULEB(uint64(len(b))), b)
	}
	third := (end - start) / 3
	return wasmgen.Cat(out, wasmgen.Section(11, wasmgen.Vec(
		segment(start+2*third, end),
		segment(start, start+third+10),
		segment(start+third, start+2*third+10),
	)))
}

// memcheckStdin asks memcheck to check its memory, whose data segments
// cover [start, end), after growing it to its limit if grow is set.
func memcheckStdin(start, end uint32, grow bool) []byte {
	in := binary.LittleEndian.AppendUint32(nil, start)
	in = binary.LittleEndian.AppendUint32(in, end)
	g := uint32(0)
	if grow {
		g = 1
	}
	return binary.LittleEndian.AppendUint32(in, g)
}

// checkMemcheck fails t if a memcheck run failed or found its memory
// other than fresh.
func checkMemcheck(t testing.TB, what string, out Outcome) {
	t.Helper()
	switch {
	case out.Failure != nil && len(out.Stdout) == 8:
		t.Errorf("%s: the guest found byte %#x at address %d of a fresh memory", what, binary.LittleEndian.Uint32(out.Stdout[4:]), binary.LittleEndian.Uint32(out.Stdout))
	case out.Failure != nil:
		t.Errorf("%s: %+v", what, out.Failure)
	}
}

// Every call's memory is exactly what a fresh instance's is, whether it
// comes from the pool (a small memory, on wazero), from a copy-on-write
// image of the module's data (wazero; wasmtime maps its own), or from a
// snapshot: a guest that checks every byte and then overwrites them all
// never sees another call's marker, run after run, called at once or
// prepared ahead.
func TestNoCallSeesAnothersMemory(t *testing.T) {
	e := newEngine(t)
	lim := Limits{Timeout: time.Minute, Memory: 8 << 20, Output: 64 << 10}
	const big = 2 << 20 // past dataImageMin
	for _, tc := range []struct {
		name       string
		pages      uint64
		start, end uint32
		reactor    bool
	}{
		{"small", 1, 100, 5000, false},
		{"no data", 2, 0, 0, false},
		{"large data", 40, pageSize + 100, pageSize + 100 + big, false},
		{"snapshot", 40, pageSize + 100, pageSize + 100 + big, true},
		{"small snapshot", 1, 100, 5000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := CompileOptions{}
			if tc.reactor {
				opts.Start = abi.StartReactor
			}
			c, err := e.CompileWith(context.Background(), memcheckModule(t, tc.pages, tc.start, tc.end), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close(context.Background()) })
			if tc.reactor {
				if _, err := c.Snapshot(context.Background(), "memcheck", lim, Schedule{}); err != nil {
					t.Fatal(err)
				}
			}
			// The path each case is for is the one taken.
			if imaged := c.data != nil; imaged != (e.Name() == "wazero" && !tc.reactor && tc.end-tc.start > dataImageMin) {
				t.Errorf("the module has a data image: %v", imaged)
			}
			if c.Snapshotted() != tc.reactor {
				t.Errorf("Snapshotted() = %v", c.Snapshotted())
			}
			r := Run{Args: []string{"memcheck"}, Stdin: memcheckStdin(tc.start, tc.end, false), Limits: lim}
			call := func(i int) Outcome {
				if i%2 == 1 {
					if p := c.Prepare(context.Background(), r); p != nil {
						return p.Start(context.Background(), Run{Stdin: r.Stdin})
					}
				}
				return c.Run(context.Background(), r)
			}
			for i := range 12 {
				checkMemcheck(t, "a call in a row", call(i))
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 6 {
						checkMemcheck(t, "a call at once with others", call(g+i))
					}
				})
			}
			wg.Wait()
		})
	}
}

// A module that grows its memory to the limit and writes all of it, past
// the pool's buffers or within them, leaves nothing for the small calls
// that come after it or run beside it.
func TestAGrownMemoryLeavesNothingForTheNextCall(t *testing.T) {
	e := newEngine(t)
	hostile, err := e.Compile(context.Background(), memcheckModule(t, 1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer hostile.Close(context.Background())
	victim, err := e.Compile(context.Background(), memcheckModule(t, 2, 100, 5000))
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close(context.Background())
	for _, limit := range []int64{pooledMemory / 2, pooledMemory, 4 * pooledMemory} {
		lim := Limits{Timeout: time.Minute, Memory: limit, Output: 64 << 10}
		grow := Run{Args: []string{"memcheck"}, Stdin: memcheckStdin(0, 0, true), Limits: lim}
		check := Run{Args: []string{"memcheck"}, Stdin: memcheckStdin(100, 5000, true), Limits: lim}
		for range 4 {
			checkMemcheck(t, "the hostile call", hostile.Run(context.Background(), grow))
			checkMemcheck(t, "the call after it", victim.Run(context.Background(), check))
		}
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 4 {
					checkMemcheck(t, "the hostile call", hostile.Run(context.Background(), grow))
				}
			})
			wg.Go(func() {
				for range 4 {
					checkMemcheck(t, "a call beside it", victim.Run(context.Background(), check))
				}
			})
		}
		wg.Wait()
	}
}
