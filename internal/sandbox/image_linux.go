package sandbox

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memImage is a snapshot's linear memory, kept in a sealed memfd that
// each instance maps privately: the kernel shares its pages between
// instances and copies one only when an instance writes to it, so an
// instance costs what it dirties rather than a copy of the whole image,
// and no instance can change the image another starts from.
type memImage struct {
	f    *os.File
	size int
}

func newMemImage(data []byte) (*memImage, error) {
	fd, err := unix.MemfdCreate("wasmcp-snapshot", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "wasmcp-snapshot")
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the snapshot's memory: %w", err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing the snapshot's memory: %w", err)
	}
	return &memImage{f: f, size: len(data)}, nil
}

// mapping returns memory of length limit whose first bytes are the
// image's, copy-on-write, and the rest zeroes; unmap frees it.
func (im *memImage) mapping(limit uint64) ([]byte, error) {
	length := max(uintptr(limit), uintptr(im.size))
	// Address space for the whole limit, committed only as it is touched
	// (MAP_NORESERVE), then the image over its start.
	base, err := unix.MmapPtr(-1, 0, nil, length, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("reserving memory for an instance: %w", err)
	}
	if im.size > 0 {
		if _, err := unix.MmapPtr(int(im.f.Fd()), 0, base, uintptr(im.size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_FIXED); err != nil {
			unix.MunmapPtr(base, length)
			return nil, fmt.Errorf("mapping the snapshot's memory: %w", err)
		}
	}
	return unsafe.Slice((*byte)(base), length), nil
}

func unmap(b []byte) {
	if cap(b) > 0 {
		_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b[:1])), uintptr(cap(b)))
	}
}

func (im *memImage) close() error { return im.f.Close() }
