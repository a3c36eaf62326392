//go:build wasip1

package guest

import (
	"crypto/rand"
	"unsafe"
)

// runtimeRand is the Go runtime's own generator: math/rand/v2's top-level
// functions, math/rand's (Seed is a no-op since Go 1.24), map iteration
// order, the hash seeds of new maps and hash/maphash.MakeSeed all draw from
// it. The runtime marks it for use from other packages.
//
//go:linkname runtimeRand runtime.rand
func runtimeRand() uint64

// randWords is how the runtime's generator keeps its state (the type
// internal/chacha8rand.State of Go 1.22 to 1.26): 32 words of output
// handed out in order, the 4 words of seed the next block is made from,
// then the index of the next word to hand out and the number there are.
type randWords struct {
	buf  [32]uint64
	seed [4]uint64
	i, n uint32
}

// findRuntimeRand finds the runtime's generator in linear memory: it
// draws four words and looks for them, in order, among the runtime's
// statics (the generator of wasip1's only thread is in one, runtime.m0),
// below the heap and the stack (the first heap object and the words
// drawn). A match is taken only where the words after it read as the
// state's index and count, just past the four words drawn (256 bits of
// random output and both fields must agree, so nothing matches by
// chance), and where the next word the runtime hands out is the one
// written there. It returns nil if the runtime keeps its generator some
// other way, as a later Go may.
func findRuntimeRand() *randWords {
	// The object must escape to be on the heap: one that does not is on
	// the goroutine's stack (itself in the heap, anywhere in it), and the
	// scan would then run through the heap below the stack as well.
	heapMark = new([8]uint64)
	heap := uintptr(unsafe.Pointer(heapMark))
	heapMark = nil
	for range 8 { // the 4 words may straddle a refill: draw again
		var want [4]uint64
		for k := range want {
			want[k] = runtimeRand()
		}
		limit := min(heap, uintptr(unsafe.Pointer(&want)))
		for a := uintptr(8); a+32 <= limit; a += 8 {
			if *(*[4]uint64)(at(a)) != want {
				continue
			}
			for k := uintptr(0); k+4 <= 32 && 8*k <= a; k++ {
				if s := (*randWords)(at(a - 8*k)); uintptr(s.i) == k+4 && (s.n == 32 || s.n == 28) && s.handsOut() {
					return s
				}
			}
		}
	}
	return nil
}

// heapMark is where findRuntimeRand puts a new object so that it escapes
// to the heap, which on wasip1 lies wholly above the statics (the runtime
// grows it from the end of the data, runtime.initBloc).
var heapMark *[8]uint64

// at is linear memory at address a. In wasm every address below the
// memory's size can be read; findRuntimeRand reads only statics.
func at(a uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), a) }

// handsOut reports whether the runtime's next word is the one s holds
// next, by writing one there and drawing it; it leaves s as it was
// otherwise.
func (s *randWords) handsOut() bool {
	if s.i >= s.n {
		return false
	}
	next := &s.buf[s.i&31]
	old := *next
	const marker = 0x9e3779b97f4a7c15
	*next = marker
	if runtimeRand() == marker {
		return true
	}
	*next = old
	return false
}

// renew gives the generator fresh words and a fresh seed from the host's
// random source: what it hands out from here on, and every block it makes
// later, owe nothing to the snapshot's start-up.
func (s *randWords) renew() {
	b := unsafe.Slice((*byte)(unsafe.Pointer(s)), unsafe.Offsetof(s.i))
	_, _ = rand.Read(b)
}
