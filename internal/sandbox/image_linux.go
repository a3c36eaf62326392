package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// memImage is the memory an instance starts with (a snapshot's, or a
// module's initial memory with its data segments written), kept in a
// sealed memfd that each instance maps privately: the kernel shares its
// pages between instances and copies one only when an instance writes to
// it, so an instance costs what it dirties rather than a copy of the
// whole image, and no instance can change the image another starts from.
//
// Each page an instance writes costs a fault, a microsecond or more; an
// interpreter, which writes reference counts and caches all over its heap,
// writes hundreds in a call. So the image learns which pages calls write,
// from the first instances' mappings as they end (learnFrom of them), and
// each later mapping has those copied in by one madvise as it is made,
// ahead of the guest: for an instance prepared ahead, before its call.
// What is learned is a hint about the image's own pages, and a bounded
// one: the first calls' writes are every later call's copying, so once
// they pass maxHotBytes nothing is copied ahead and each instance pays
// for what it writes itself, as without learning.
type memImage struct {
	f    *os.File
	size int

	mu      sync.Mutex
	learned int      // instances learned from
	written []uint64 // a bit per page: written by some instance learned from
	hot     [][2]int // written as runs of pages: [first, end)
}

// learnFrom is how many instances' writes an image learns its hot pages
// from: enough to cover a tool's calls that take other paths, few enough
// that learning (a read of /proc/self/pagemap) is soon over.
const learnFrom = 4

// maxHotBytes bounds what a mapping has copied in ahead: an interpreter's
// call writes under 1 MiB (about 210 pages for a Python tool), and copying
// 2 MiB takes a fraction of a millisecond, outside any call's time limit.
const maxHotBytes = 2 << 20

func newMemImage(data []byte) (*memImage, error) {
	return newImage("wasmcp-snapshot", len(data), func(f *os.File) error { return writeSparse(f, data) })
}

// newDataImage is the initial memory of a module whose memory starts at
// size bytes and whose active data segments are segs, written in order.
func newDataImage(size int, segs []wasmbin.Segment) (*memImage, error) {
	return newImage("wasmcp-data", size, func(f *os.File) error {
		if err := f.Truncate(int64(size)); err != nil {
			return err
		}
		for _, seg := range segs {
			if _, err := f.WriteAt(seg.Bytes, int64(seg.Offset)); err != nil {
				return err
			}
		}
		return nil
	})
}

// newImage is a sealed memfd of size bytes that write fills.
func newImage(name string, size int, write func(*os.File) error) (*memImage, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), name)
	if err := write(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the memory image: %w", err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_GROW|unix.F_SEAL_SHRINK|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing the memory image: %w", err)
	}
	pages := (size + osPage - 1) / osPage
	return &memImage{f: f, size: size, written: make([]uint64, (pages+63)/64)}, nil
}

// writeSparse gives f data's size and writes only its pages that are not
// all zeroes: the rest stay holes, which read as zeroes and take no
// memory, so a start-up that grows memory it never writes costs nothing
// to keep.
func writeSparse(f *os.File, data []byte) error {
	if err := f.Truncate(int64(len(data))); err != nil {
		return err
	}
	for _, r := range wasmbin.NonZeroRuns(data, osPage) {
		if _, err := f.WriteAt(data[r[0]:r[1]], int64(r[0])); err != nil {
			return err
		}
	}
	return nil
}

// osPage is the size of the pages the kernel maps and copies.
var osPage = os.Getpagesize()

// mapping returns memory of length limit whose first bytes are the
// image's, copy-on-write, and the rest zeroes, with the pages calls are
// known to write copied already; release frees it.
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
	b := unsafe.Slice((*byte)(base), length)
	im.mu.Lock()
	hot := im.hot
	im.mu.Unlock()
	for _, r := range hot {
		// Before Linux 5.14 this fails, and the pages fault as written.
		_ = unix.Madvise(b[r[0]*osPage:min(r[1]*osPage, im.size)], unix.MADV_POPULATE_WRITE)
	}
	return b, nil
}

// release frees a mapping made by mapping, learning from it first if the
// image is still learning.
func (im *memImage) release(b []byte) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	im.mu.Lock()
	if im.learned < learnFrom {
		im.learned++
		if im.learn(b) != nil {
			im.learned = learnFrom // no pagemap here: nothing to learn
		}
	}
	im.mu.Unlock()
	_ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(cap(b)))
}

// Bits of a /proc/self/pagemap entry.
const (
	pagePresent = 1 << 63
	pageFile    = 1 << 61 // a page of the file, not yet copied
)

// learn marks the image's pages that mapping b holds copies of: those the
// instance wrote. im.mu is held.
func (im *memImage) learn(b []byte) error {
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return err
	}
	defer f.Close()
	pages := (im.size + osPage - 1) / osPage
	entries := make([]byte, 8*pages)
	first := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / uintptr(osPage)
	if _, err := f.ReadAt(entries, int64(first)*8); err != nil {
		return err
	}
	for p := range pages {
		if e := binary.LittleEndian.Uint64(entries[8*p:]); e&pagePresent != 0 && e&pageFile == 0 {
			im.written[p/64] |= 1 << (p % 64)
		}
	}
	im.hot = im.hot[:0:0]
	hotPages := 0
	for p := 0; p < pages; {
		if im.written[p/64]&(1<<(p%64)) == 0 {
			p++
			continue
		}
		start := p
		for p < pages && im.written[p/64]&(1<<(p%64)) != 0 {
			p++
		}
		im.hot = append(im.hot, [2]int{start, p})
		hotPages += p - start
	}
	if hotPages*osPage > maxHotBytes {
		im.hot, im.learned = nil, learnFrom
	}
	return nil
}

func (im *memImage) close() error { return im.f.Close() }
