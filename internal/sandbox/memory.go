package sandbox

import (
	"runtime"

	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// dataImageMin is how many bytes of active data segments a command module
// must have for its initial memory to be kept as an image (dataImage).
// For a guest that touches none of its data, copying it into a pooled
// buffer costs less than mapping an image at 64 KiB and more at 256 KiB;
// four times that leaves room for the faults a mapped page costs when a
// call does touch it (docs/design.md, "Per-call cost").
const dataImageMin = 1 << 20

// dataImage makes a command module with more than dataImageMin bytes of
// active data segments start from a copy-on-write image of its initial
// memory: it returns the module with its active segments emptied
// (wasmbin.EmptyData) and the image, which each instance then maps (on an
// engine that does not map data segments itself, backend.mapsData). Any
// other module, and one whose segments cannot be laid out ahead (an
// imported, shared or 64-bit memory, a segment at an offset that is not a
// constant or beyond the memory's minimum, which instantiation refuses),
// is returned as it is, with no image, and instantiation writes its data
// as before; so is a module whose image could not be made, with the
// error.
func dataImage(wasm []byte, parsed *wasmbin.Module) ([]byte, *memImage, error) {
	if len(parsed.Memories) != 1 {
		return wasm, nil, nil
	}
	mem := parsed.Memories[0]
	if mem.Imported || mem.Shared || mem.Is64 || parsed.Shape.DataBytes <= dataImageMin {
		return wasm, nil, nil
	}
	rewritten, segs, err := wasmbin.EmptyData(wasm)
	if err != nil {
		return wasm, nil, nil
	}
	size := mem.MinPages * pageSize
	total := 0
	for _, seg := range segs {
		if uint64(seg.Offset)+uint64(len(seg.Bytes)) > size {
			return wasm, nil, nil
		}
		total += len(seg.Bytes)
	}
	if total <= dataImageMin {
		return wasm, nil, nil
	}
	im, err := newDataImage(int(size), segs)
	if im == nil || err != nil {
		return wasm, nil, err
	}
	return rewritten, im, nil
}

// pooledMemory is the capacity of a pooled buffer: a linear memory that
// starts within it (a WAT or C guest's few pages) takes its buffer from
// the pool, and one that grows past it moves to a buffer of its own.
const pooledMemory = 1 << 20

// pooledBuffers bounds the buffers the pool keeps: two for each run slot
// of the default concurrency (2 × GOMAXPROCS), so that the runs and the
// instances prepared for their next calls find one, and the pool holds at
// most 4 MiB for each processor.
func pooledBuffers() int { return 4 * runtime.GOMAXPROCS(0) }

// memPool keeps the buffers of small linear memories for later instances,
// so that an instance's memory costs no allocation (a fresh 64 KiB page
// is 64 KiB of garbage per call) but the clearing of what its guest used.
// A buffer goes back cleared of every byte an instance could have
// written: the next instance sees zeroes, as in a fresh memory, and
// nothing of the last.
type memPool struct{ free chan []byte }

func newMemPool(n int) *memPool { return &memPool{free: make(chan []byte, n)} }

// get returns an empty buffer whose capacity, pooledMemory, is all
// zeroes.
func (p *memPool) get() []byte {
	select {
	case b := <-p.free:
		return b
	default:
		return make([]byte, 0, pooledMemory)
	}
}

// put takes back a buffer from get, of which no byte past len was ever
// written, clearing it; a full pool lets it go.
func (p *memPool) put(b []byte) {
	clear(b)
	select {
	case p.free <- b[:0]:
	default:
	}
}
