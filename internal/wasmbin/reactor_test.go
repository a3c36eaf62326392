package wasmbin

import (
	"bytes"
	"strings"
	"testing"

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
