package wasmbin

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

func TestExportStateMovesStateToTheHost(t *testing.T) {
	r, err := ExportState(wattest.Build(t, "stateful"))
	if err != nil {
		t.Fatal(err)
	}
	// Near segments merge, with the zeroes between; far ones do not.
	want := []Segment{{Offset: 16, Bytes: []byte("ab\x00\x00cd")}, {Offset: 70000, Bytes: []byte("far")}}
	if len(r.Data) != len(want) {
		t.Fatalf("data = %+v; want %+v", r.Data, want)
	}
	for i := range want {
		if r.Data[i].Offset != want[i].Offset || !bytes.Equal(r.Data[i].Bytes, want[i].Bytes) {
			t.Errorf("segment %d = %d %q; want %d %q", i, r.Data[i].Offset, r.Data[i].Bytes, want[i].Offset, want[i].Bytes)
		}
	}
	if len(r.Globals) != 2 || r.Globals[0] != (Global{Export: "wasmcp.global.0", Index: 0, Type: 0x7f}) || r.Globals[1] != (Global{Export: "wasmcp.global.2", Index: 2, Type: 0x7c}) {
		t.Errorf("globals = %+v; want the two mutable ones", r.Globals)
	}
	if !r.Start || r.Unsafe != "" {
		t.Errorf("start %v, unsafe %q", r.Start, r.Unsafe)
	}
	m, err := Parse(r.Wasm)
	if err != nil {
		t.Fatalf("the rewritten module does not parse: %v", err)
	}
	if m.Shape.DataSegments != 0 || m.Shape.DataBytes != 0 {
		t.Errorf("the rewritten module still has %d data segments", m.Shape.DataSegments)
	}
	for _, name := range []string{StartExport, "wasmcp.global.0", "wasmcp.global.2", "_start"} {
		if !slicesContainExport(m, name) {
			t.Errorf("the rewritten module does not export %s", name)
		}
	}
}

func slicesContainExport(m *Module, name string) bool {
	for _, e := range m.Exports {
		if e.Name == name {
			return true
		}
	}
	return false
}

func TestExportStateRefusesReservedNamesAndFlagsTableChanges(t *testing.T) {
	if _, err := ExportState(wattest.Build(t, "reactor")); err != nil {
		t.Fatal(err)
	}
	if r, err := ExportState(wattest.Build(t, "tablegrow")); err != nil || !strings.Contains(r.Unsafe, "changes tables") {
		t.Errorf("ExportState(tablegrow) = %+v, %v; want it unsafe to snapshot", r, err)
	}
	named := bytes.Replace(wattest.Build(t, "reactor"), []byte("wasmcp_run"), []byte("wasmcp.run"), 1)
	if _, err := ExportState(named); err == nil || !strings.Contains(err.Error(), `exports "wasmcp.run"`) {
		t.Errorf("ExportState(an export named wasmcp.run) = %v; want it refused", err)
	}
}

func TestImageMakesTheCapturedMemoryTheModulesOwn(t *testing.T) {
	r, err := ExportState(wattest.Build(t, "stateful"))
	if err != nil {
		t.Fatal(err)
	}
	memory := make([]byte, 3<<16)
	copy(memory[16:], "ab")
	copy(memory[5*imagePage:], "near")    // within imageGap of the first page: merged
	copy(memory[2<<16+imagePage:], "far") // a segment of its own
	img, err := Image(r.Wasm, memory, r.Globals, []uint64{7, 0x4000000000000000})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(img)
	if err != nil {
		t.Fatalf("the image does not parse: %v", err)
	}
	if len(m.Memories) != 1 || m.Memories[0].MinPages != 3 {
		t.Errorf("memories = %+v; want one of 3 pages at least", m.Memories)
	}
	if m.Shape.DataSegments != 2 || m.Shape.DataBytes != 6*imagePage+imagePage {
		t.Errorf("%d data segments of %d bytes; want 2 of %d", m.Shape.DataSegments, m.Shape.DataBytes, 7*imagePage)
	}
	if _, err := Image(r.Wasm, memory[:100], r.Globals, []uint64{7, 0}); err == nil {
		t.Error("an image of part of a page was made")
	}
}

func TestImageSegmentsStayDenseEnoughToMap(t *testing.T) {
	// Two pages 32 MiB apart: separate segments would fill less than half
	// of a range wasmtime lays out only when dense, so they are one.
	memory := make([]byte, 33<<20)
	memory[0], memory[32<<20] = 1, 1
	segs := imageSegments(memory)
	if len(segs) != 1 || segs[0].Offset != 0 || len(segs[0].Bytes) != 32<<20+imagePage {
		t.Errorf("segments = %d, first at %d; want one covering both pages", len(segs), segs[0].Offset)
	}
}

func TestAppendSlebReadsBack(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, 1<<31 - 1, -1 << 31} {
		r := &reader{b: appendSleb(nil, v)}
		if got, err := r.sleb32(); err != nil || int64(got) != v || !r.done() {
			t.Errorf("appendSleb(%d) = %x, read back as %d: %v", v, r.b, got, err)
		}
	}
	for _, v := range []int64{1 << 40, -1 << 63, 1<<63 - 1} {
		r := &reader{b: appendSleb(nil, v)}
		if err := r.sleb(10); err != nil || !r.done() {
			t.Errorf("appendSleb(%d) = %x: %v", v, r.b, err)
		}
	}
}

// Segments merged for the host, written in order, leave memory as the
// module's own segments do, in whatever order those come: the zeroes that
// fill a gap never overwrite an earlier segment.
func TestExportStateKeepsTheOrderOfDataSegments(t *testing.T) {
	r, err := ExportState(wattest.Build(t, "dataorder"))
	if err != nil {
		t.Fatal(err)
	}
	memory := make([]byte, 64+4)
	for _, seg := range r.Data {
		copy(memory[seg.Offset:], seg.Bytes)
	}
	for at, want := range map[int]string{0: "BBBB", 30: "AAAA", 60: "CCCC"} {
		if got := string(memory[at : at+4]); got != want {
			t.Errorf("memory at %d = %q; want %q (segments %+v)", at, got, want, r.Data)
		}
	}
}

func TestEmptyDataKeepsPassiveSegmentsAndRefusesWhatItCannotLayOut(t *testing.T) {
	wasm, data, err := EmptyData(wattest.Build(t, "passivedata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 1 || data[0].Offset != 100 || string(data[0].Bytes) != "active|" {
		t.Errorf("data = %+v; want the active segment", data)
	}
	m, err := Parse(wasm)
	if err != nil {
		t.Fatalf("the rewritten module does not parse: %v", err)
	}
	// The active segment is an empty passive one, keeping its index; the
	// passive one is as it was.
	if m.Shape.DataSegments != 2 || m.Shape.DataBytes != len("passive") {
		t.Errorf("the rewritten module has %d data segments of %d bytes; want 2 of %d", m.Shape.DataSegments, m.Shape.DataBytes, len("passive"))
	}

	memory := wasmgen.Cat(wasmgen.Name("env"), wasmgen.Name("memory"), []byte{KindMemory}, wasmgen.Limits(0, 1))
	global := wasmgen.Cat(wasmgen.Name("env"), wasmgen.Name("base"), []byte{KindGlobal, 0x7f, 0x00})
	for want, wasm := range map[string][]byte{
		"imports its memory": wasmgen.Module(
			wasmgen.Section(2, wasmgen.Vec(memory)),
			wasmgen.Section(11, wasmgen.Vec(wasmgen.Cat([]byte{0, 0x41, 0, 0x0b}, wasmgen.Name("x"))))),
		"offset is not a constant": wasmgen.Module(
			wasmgen.Section(2, wasmgen.Vec(global)),
			wasmgen.Section(5, wasmgen.Vec(wasmgen.Limits(0, 1))),
			wasmgen.Section(11, wasmgen.Vec(wasmgen.Cat([]byte{0, 0x23, 0, 0x0b}, wasmgen.Name("x"))))),
	} {
		if _, _, err := EmptyData(wasm); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("EmptyData = %v; want an error saying %q", err, want)
		}
	}
}
