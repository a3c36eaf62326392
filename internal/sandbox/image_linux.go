package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
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
//
// Once it has learned, an image also takes back the mappings its
// instances leave (release) and gives them to later instances, set back
// first to what a new mapping would be: every page the last instance
// wrote is copied again from the image, and what it reached past the
// image is dropped. A recycled mapping has the image's pages it already
// touched in place, so its next instance neither maps them again nor
// faults on them, and no mapping is made or unmapped for a call. The
// setting back is done as the next instance is made, not as the last
// one ends: an instance ends between its guest's return and its call's
// answer, and the next is mostly made ahead of its call (package
// prewarm), so the work is in neither call's latency.
type memImage struct {
	f    *os.File
	size int
	// pristine is the image mapped shared and read-only: what a
	// recycled mapping's written pages are set back to.
	pristine []byte

	mu      sync.Mutex
	learned int      // instances learned from
	written []uint64 // a bit per page: written by some instance learned from
	hot     [][2]int // written as runs of pages: [first, end)
	kept    []left   // mappings instances left, to be set back for another
	// setting counts the mappings being set back from pristine; once
	// closed, the last of them unmaps it.
	setting int
	closed  bool
}

// left is a mapping an instance left, which used its first used bytes at
// most.
type left struct {
	b    []byte
	used uint64
}

// maxKept is how many mappings an image keeps: an instance running and
// one prepared for the next call need two.
const maxKept = 2

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
	im := &memImage{f: f, size: size, written: make([]uint64, (pages+63)/64)}
	if size > 0 {
		// Without it, mappings are not recycled (release).
		im.pristine, _ = unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	}
	return im, nil
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
	if b := im.recycled(length); b != nil {
		return b, nil
	}
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

// release takes back a mapping made by mapping, of which its instance
// used the first used bytes at most (its memory's largest size): it
// learns from it while the image is still learning, and otherwise keeps
// it, as it is, for recycled to set back for a later instance, or frees
// it.
func (im *memImage) release(b []byte, used uint64) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	// What the instance reached past the image is dropped now if there is
	// much of it, so that a kept mapping holds little more than the image.
	keep := true
	if used > uint64(im.size)+maxHotBytes {
		keep, used = dropTail(b, uint64(im.size), used), uint64(im.size)
	}
	im.mu.Lock()
	learning := im.learned < learnFrom
	if learning {
		im.learned++
		if im.learn(b) != nil {
			im.learned = learnFrom // no pagemap here: nothing to learn
		}
	}
	keep = keep && !learning && len(im.kept) < maxKept && !im.closed && im.pristine != nil
	if keep {
		im.kept = append(im.kept, left{b, used})
	}
	im.mu.Unlock()
	if !keep {
		unmap(b)
	}
}

// dropTail drops b's pages from offset from up to used, rounded up to a
// page, which then read as zeroes.
func dropTail(b []byte, from, used uint64) bool {
	end := min((used+uint64(osPage)-1)/uint64(osPage)*uint64(osPage), uint64(len(b)))
	return end <= from || unix.Madvise(b[from:end], unix.MADV_DONTNEED) == nil
}

// recycled returns a mapping of length bytes that an instance left, set
// back to what a new mapping would be, or nil if there is none. A mapping
// that cannot be set back is freed.
func (im *memImage) recycled(length uintptr) []byte {
	im.mu.Lock()
	i := slices.IndexFunc(im.kept, func(l left) bool { return uintptr(len(l.b)) == length })
	if i < 0 {
		im.mu.Unlock()
		return nil
	}
	l := im.kept[i]
	im.kept = slices.Delete(im.kept, i, i+1)
	im.setting++
	im.mu.Unlock()
	set := im.setBack(l.b, l.used)
	im.mu.Lock()
	im.setting--
	last := im.closed && im.setting == 0
	im.mu.Unlock()
	if last {
		im.unmapPristine()
	}
	if !set {
		unmap(l.b)
		return nil
	}
	return l.b
}

// unmap frees a mapping made by mapping, all of its capacity, which a
// slice of it may not show.
func unmap(b []byte) { _ = unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b)), uintptr(cap(b))) }

// setBack makes mapping b, which an instance used up to used bytes, what
// mapping would return: each page of the image that the instance wrote
// (which the kernel then copied out of the image into b; pagemap tells
// them apart) is copied again from the image, and the pages past the
// image up to used are dropped, to read as zeroes. It reports false, and
// b must be freed, if it cannot tell which pages were written, or if more
// than maxHotBytes were: setting those back would cost more than a new
// mapping.
func (im *memImage) setBack(b []byte, used uint64) bool {
	pages := (im.size + osPage - 1) / osPage
	buf := pagemapEntries.Get().(*[]byte)
	defer pagemapEntries.Put(buf)
	if cap(*buf) < 8*pages {
		*buf = make([]byte, 8*pages)
	}
	entries := (*buf)[:8*pages]
	if err := readPagemap(b, entries); err != nil {
		return false
	}
	var runs [][2]int
	copiedPages := 0
	for p := 0; p < pages; p++ {
		if ownPage(binary.LittleEndian.Uint64(entries[8*p:])) {
			if n := len(runs); n > 0 && runs[n-1][1] == p {
				runs[n-1][1]++
			} else {
				runs = append(runs, [2]int{p, p + 1})
			}
			copiedPages++
		}
	}
	if copiedPages*osPage > maxHotBytes {
		return false
	}
	for _, r := range runs {
		from, to := r[0]*osPage, min(r[1]*osPage, im.size)
		copy(b[from:to], im.pristine[from:to])
	}
	return used <= uint64(im.size) || dropTail(b, uint64(im.size), used)
}

// readPagemap reads the pagemap entries of b's first len(entries)/8
// pages.
func readPagemap(b, entries []byte) error {
	f, err := pagemap()
	if err != nil {
		return err
	}
	first := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / uintptr(osPage)
	_, err = f.ReadAt(entries, int64(first)*8)
	return err
}

// pagemap returns /proc/self/pagemap, opened once it opens: every
// mapping set back reads it, and opening it costs more than the read. A
// failure (too many open files, say) is tried again next time.
func pagemap() (*os.File, error) {
	pagemapFile.mu.Lock()
	defer pagemapFile.mu.Unlock()
	if pagemapFile.f == nil {
		f, err := os.Open("/proc/self/pagemap")
		if err != nil {
			return nil, err
		}
		pagemapFile.f = f
	}
	return pagemapFile.f, nil
}

var pagemapFile struct {
	mu sync.Mutex
	f  *os.File
}

// pagemapEntries holds the buffers setBack reads pagemap into.
var pagemapEntries = sync.Pool{New: func() any { return new([]byte) }}

// Bits of a /proc/self/pagemap entry.
const (
	pagePresent = 1 << 63
	pageSwapped = 1 << 62
	pageFile    = 1 << 61 // a page of the file, not yet copied
)

// ownPage reports whether a pagemap entry is of a page the mapping holds
// a copy of, written or copied in ahead, rather than the image's page or
// nothing: present and not the file's, or swapped out, which only such a
// copy can be.
func ownPage(e uint64) bool { return e&pagePresent != 0 && e&pageFile == 0 || e&pageSwapped != 0 }

// learn marks the image's pages that mapping b holds copies of: those the
// instance wrote. im.mu is held.
func (im *memImage) learn(b []byte) error {
	pages := (im.size + osPage - 1) / osPage
	entries := make([]byte, 8*pages)
	if err := readPagemap(b, entries); err != nil {
		return err
	}
	for p := range pages {
		if ownPage(binary.LittleEndian.Uint64(entries[8*p:])) {
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

// close frees the image. Instances may still hold mappings of it, which
// keep what they map; one being set back keeps pristine until it is done.
func (im *memImage) close() error {
	im.mu.Lock()
	im.closed = true
	kept := im.kept
	im.kept = nil
	last := im.setting == 0
	im.mu.Unlock()
	for _, l := range kept {
		unmap(l.b)
	}
	if last {
		im.unmapPristine()
	}
	return im.f.Close()
}

func (im *memImage) unmapPristine() {
	if im.pristine != nil {
		_ = unix.Munmap(im.pristine)
	}
}
