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
	if end <= start {
		return withData(t, wattest.Build(t, "memcheck"), pages)
	}
	third := (end - start) / 3
	return withData(t, wattest.Build(t, "memcheck"), pages,
		patterned(start+2*third, end), patterned(start, start+third+10), patterned(start+third, start+2*third+10))
}

// patterned is an active data segment over [from, to) that holds at each
// address a the byte memcheck expects there: a % 251 + 1.
func patterned(from, to uint32) []byte {
	b := make([]byte, to-from)
	for i := range b {
		b[i] = byte((from+uint32(i))%251 + 1)
	}
	return wasmgen.Cat([]byte{0, 0x41}, wasmgen.SLEB(int64(from)), []byte{0x0b}, wasmgen.ULEB(uint64(len(b))), b)
}

// withData rewrites a module assembled from text: its one memory starts at
// pages pages, and segs (encoded data segments) follow its own, whose
// count and data count section say so.
func withData(t testing.TB, wasm []byte, pages uint64, segs ...[]byte) []byte {
	t.Helper()
	out := wasmgen.Header()
	added := false
	add := func(body []byte) []byte {
		n, k := binary.Uvarint(body)
		added = true
		return wasmgen.Cat(wasmgen.ULEB(n+uint64(len(segs))), body[k:], wasmgen.Cat(segs...))
	}
	for off := 8; off < len(wasm); {
		id := wasm[off]
		size, n := binary.Uvarint(wasm[off+1:])
		body := wasm[off+1+n : off+1+n+int(size)]
		off += 1 + n + int(size)
		switch id {
		case 5: // memory
			body = wasmgen.Vec(wasmgen.Limits(0, pages))
		case 11: // data
			body = add(body)
		case 12: // data count
			c, _ := binary.Uvarint(body)
			body = wasmgen.ULEB(c + uint64(len(segs)))
		}
		out = wasmgen.Cat(out, wasmgen.Section(id, body))
	}
	if !added && len(segs) > 0 {
		out = wasmgen.Cat(out, wasmgen.Section(11, wasmgen.Vec(segs...)))
	}
	return out
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
		grow       bool
	}{
		{"small", 1, 100, 5000, false, false},
		{"no data", 2, 0, 0, false, false},
		{"large data", 40, pageSize + 100, pageSize + 100 + big, false, false},
		{"snapshot", 40, pageSize + 100, pageSize + 100 + big, true, false},
		{"small snapshot", 1, 100, 5000, true, false},
		{"small snapshot grown", 1, 100, 5000, true, true},
		{"small data grown", 1, 100, 5000, false, true},
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
			r := Run{Args: []string{"memcheck"}, Stdin: memcheckStdin(tc.start, tc.end, tc.grow), Limits: lim}
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

// A module with much data keeps its passive segments, which its code
// copies in and drops, when its active ones are laid out ahead; one whose
// active data does not fit its memory gets no image, and fails to start
// as it did.
func TestALargeModuleKeepsItsPassiveSegments(t *testing.T) {
	e := newEngine(t)
	const big = 2 << 20
	c, err := e.Compile(context.Background(), withData(t, wattest.Build(t, "passivedata"), 40, patterned(pageSize, pageSize+big)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if imaged := c.data != nil; imaged != (e.Name() == "wazero") {
		t.Errorf("the module has a data image: %v", imaged)
	}
	for range 3 {
		if out := c.Run(context.Background(), Run{Limits: small}); out.Failure != nil || string(out.Stdout) != "active|passive" {
			t.Errorf("run: %+v %q, want %q", out.Failure, out.Stdout, "active|passive")
		}
	}

	c, err = e.Compile(context.Background(), withData(t, wattest.Build(t, "passivedata"), 1, patterned(pageSize, pageSize+big)))
	if err != nil {
		t.Fatal(err) // both engines refuse it only at instantiation
	}
	defer c.Close(context.Background())
	if c.data != nil {
		t.Error("a module whose data does not fit its memory has a data image")
	}
	if out := c.Run(context.Background(), Run{Limits: small}); out.Failure == nil {
		t.Errorf("a module whose data does not fit its memory ran: %q", out.Stdout)
	}
}
