package sandbox

import (
	"bytes"
	"encoding/binary"
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// copied reports, for each of the first pages of b, whether the mapping
// holds a copy of its own (written, or copied ahead) rather than the
// image's page or nothing.
func copied(t *testing.T, b []byte, pages int) []bool {
	t.Helper()
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries := make([]byte, 8*pages)
	first := uintptr(unsafe.Pointer(unsafe.SliceData(b))) / uintptr(osPage)
	if _, err := f.ReadAt(entries, int64(first)*8); err != nil {
		t.Fatal(err)
	}
	out := make([]bool, pages)
	for p := range out {
		e := binary.LittleEndian.Uint64(entries[8*p:])
		out[p] = e&pagePresent != 0 && e&pageFile == 0
	}
	return out
}

// An image learns the pages its instances write, and later mappings have
// them copied before anyone touches them, with the image's bytes; other
// pages stay the image's until written.
func TestImagesCopyInThePagesCallsWrite(t *testing.T) {
	const pages = 16
	data := make([]byte, pages*osPage)
	for p := range pages {
		data[p*osPage] = byte(p + 1)
	}
	im, err := newMemImage(data)
	if err != nil {
		t.Fatal(err)
	}
	defer im.close()
	written := map[int]bool{3: true, 4: true, 9: true}
	for range learnFrom {
		b, err := im.mapping(uint64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for p := range written {
			b[p*osPage+1] = 0xff
		}
		im.release(b, uint64(len(b)))
	}
	b, err := im.mapping(uint64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer im.release(b, uint64(len(b)))
	for p, c := range copied(t, b, pages) {
		if c != written[p] {
			t.Errorf("page %d copied ahead: %v; want %v", p, c, written[p])
		}
		if b[p*osPage] != byte(p+1) || b[p*osPage+1] != 0 {
			t.Errorf("page %d starts %x %x; want the image's %x 0", p, b[p*osPage], b[p*osPage+1], p+1)
		}
	}
	if im.learned != learnFrom {
		t.Errorf("learned from %d instances; want %d", im.learned, learnFrom)
	}
}

// Instances that write more than maxHotBytes of the image teach it
// nothing: later mappings copy nothing ahead.
func TestImagesCopyInABoundedPart(t *testing.T) {
	pages := 2*maxHotBytes/osPage + 1
	im, err := newMemImage(make([]byte, pages*osPage))
	if err != nil {
		t.Fatal(err)
	}
	defer im.close()
	b, err := im.mapping(uint64(pages * osPage))
	if err != nil {
		t.Fatal(err)
	}
	for p := range pages {
		b[p*osPage] = 1
	}
	im.release(b, uint64(len(b)))
	b, err = im.mapping(uint64(pages * osPage))
	if err != nil {
		t.Fatal(err)
	}
	defer im.release(b, uint64(len(b)))
	for p, c := range copied(t, b, pages) {
		if c {
			t.Fatalf("page %d copied ahead after an instance wrote %d pages", p, pages)
		}
	}
}

// An image keeps only the pages that hold something: a start-up that grew
// memory and left it zero costs nothing to keep.
func TestImagesKeepOnlyPagesThatHoldSomething(t *testing.T) {
	data := make([]byte, 64*osPage)
	data[3*osPage+7] = 1
	im, err := newMemImage(data)
	if err != nil {
		t.Fatal(err)
	}
	defer im.close()
	var st unix.Stat_t
	if err := unix.Fstat(int(im.f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != int64(len(data)) || st.Blocks*512 > int64(osPage) {
		t.Errorf("the image is %d bytes and takes %d; want %d taking one page", st.Size, st.Blocks*512, len(data))
	}
	b, err := im.mapping(uint64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer im.release(b, uint64(len(b)))
	if !bytes.Equal(b[:len(data)], data) {
		t.Error("a mapping of the image is not its data")
	}
}

// A mapping an instance leaves goes to a later instance as a new mapping
// would be: the image's pages it wrote set back, what it wrote past the
// image zero again. It is kept as it was left until then, but for what
// lies far past the image, dropped at once. One that wrote more than
// maxHotBytes of the image is not given again.
func TestImagesRecycleMappingsSetBack(t *testing.T) {
	const pages, limit = 16, 40 * 4096
	data := make([]byte, pages*osPage)
	for i := range data {
		data[i] = byte(i%251 + 1)
	}
	im, err := newMemImage(data)
	if err != nil {
		t.Fatal(err)
	}
	defer im.close()
	for range learnFrom {
		b, err := im.mapping(limit)
		if err != nil {
			t.Fatal(err)
		}
		im.release(b, uint64(len(data)))
	}
	b, err := im.mapping(limit)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{0, 2, 3, 15} {
		b[p*osPage+5] ^= 0xff
	}
	used := len(b) - osPage // the last page was never reached
	for i := len(data); i < used; i += osPage / 2 {
		b[i] = 7
	}
	im.release(b, uint64(used))
	again, err := im.mapping(limit)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.SliceData(again) != unsafe.SliceData(b) {
		t.Fatal("the mapping was not recycled")
	}
	if !bytes.Equal(again[:len(data)], data) {
		t.Error("a recycled mapping does not hold the image")
	}
	if !bytes.Equal(again[len(data):], make([]byte, len(again)-len(data))) {
		t.Error("a recycled mapping holds what its last instance wrote past the image")
	}
	im.release(again, uint64(len(data)))

	big, err := newMemImage(make([]byte, maxHotBytes+osPage))
	if err != nil {
		t.Fatal(err)
	}
	defer big.close()
	big.learned = learnFrom
	b, err = big.mapping(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += osPage {
		b[i] = 1
	}
	big.release(b, uint64(len(b)))
	if big.recycled(uintptr(len(b))) != nil || len(big.kept) != 0 {
		t.Error("a mapping whose instance wrote more than maxHotBytes of the image was given again")
	}

	// An instance that grew far past the image leaves a mapping that no
	// longer holds what it wrote there.
	const far = maxHotBytes + 8*4096
	im2, err := newMemImage(data)
	if err != nil {
		t.Fatal(err)
	}
	defer im2.close()
	im2.learned = learnFrom
	b, err = im2.mapping(uint64(len(data) + far))
	if err != nil {
		t.Fatal(err)
	}
	for i := len(data); i < len(b); i += osPage {
		b[i] = 9
	}
	im2.release(b, uint64(len(b)))
	if len(im2.kept) != 1 {
		t.Fatalf("the mapping was not kept (%d kept)", len(im2.kept))
	}
	if held := im2.kept[0].b[len(data):]; !bytes.Equal(held, make([]byte, len(held))) {
		t.Error("a kept mapping still holds what its instance wrote far past the image")
	}
}

// BenchmarkReusingMemory compares ways to give a small guest's memory
// (64 KiB written, one byte a page) to the next instance fresh: clearing a
// pooled buffer (memPool), dropping the pages of a private anonymous
// mapping (madvise MADV_DONTNEED) to fault them in zeroed again, and
// allocating a new buffer.
//
//	go test -run '^$' -bench ReusingMemory -benchmem ./internal/sandbox/
func BenchmarkReusingMemory(b *testing.B) {
	const used = 64 << 10
	touch := func(buf []byte) {
		for i := 0; i < used; i += osPage {
			buf[i] = 1
		}
	}
	b.Run("clear", func(b *testing.B) {
		p := newMemPool(1)
		for b.Loop() {
			buf := p.get()[:used]
			touch(buf)
			p.put(buf)
		}
	})
	b.Run("madvise", func(b *testing.B) {
		buf, err := unix.Mmap(-1, 0, pooledMemory, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Munmap(buf)
		for b.Loop() {
			touch(buf)
			if err := unix.Madvise(buf[:used], unix.MADV_DONTNEED); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("allocate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			reused = make([]byte, used)
			touch(reused)
		}
	})
}

// reused keeps BenchmarkReusingMemory's buffers on the heap, as a guest's
// memory is.
var reused []byte
