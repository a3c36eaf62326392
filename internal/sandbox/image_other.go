//go:build !linux

package sandbox

import "github.com/wasmcp/wasmcp/internal/wasmbin"

// memImage is a snapshot's linear memory. Without Linux's memfd, each
// instance starts from a copy.
type memImage struct{ data []byte }

func newMemImage(data []byte) (*memImage, error) { return &memImage{data: data}, nil }

// newDataImage makes none: without memfd a copy would cost what writing
// the data segments costs, so the engine writes them, as for a small
// module.
func newDataImage(int, []wasmbin.Segment) (*memImage, error) { return nil, nil }

// mapping returns memory of length limit whose first bytes are the
// image's; release frees it.
func (im *memImage) mapping(limit uint64) ([]byte, error) {
	b := make([]byte, max(limit, uint64(len(im.data))))
	copy(b, im.data)
	return b, nil
}

func (im *memImage) release([]byte, uint64) {}

func (im *memImage) close() error { return nil }
