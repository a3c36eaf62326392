package wasmbin

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// The encoding primitives come from wasmgen, which encodes exactly what
// the core specification's binary format describes, independently of this
// package.
var (
	leb     = wasmgen.ULEB
	cat     = wasmgen.Cat
	header  = wasmgen.Header
	module  = wasmgen.Module
	section = wasmgen.Section
	name    = wasmgen.Name
	vec     = wasmgen.Vec
	limits  = wasmgen.Limits
)

func custom(n string, payload []byte) []byte { return wasmgen.Custom(n, payload) }

func imp(mod, field string, kind byte, desc []byte) []byte {
	return cat(name(mod), name(field), []byte{kind}, desc)
}

func exp(n string, kind byte, index uint64) []byte { return cat(name(n), []byte{kind}, leb(index)) }

// typeSection is a type section declaring one func type () -> ().
func typeSection() []byte { return section(1, vec([]byte{0x60, 0x00, 0x00})) }

// codeSection has one empty function body.
func codeSection() []byte { return section(10, vec([]byte{0x02, 0x00, 0x0b})) }

// funcSection declares one function of type 0.
func funcSection() []byte { return section(3, vec(leb(0))) }

// equalModules compares two modules, treating nil and empty payloads alike,
// and imports' types by value.
func equalModules(got, want *Module) bool {
	sameImport := func(a, b Import) bool {
		if a.Module != b.Module || a.Name != b.Name || a.Kind != b.Kind || (a.Type == nil) != (b.Type == nil) {
			return false
		}
		return a.Type == nil || a.Type.Equal(*b.Type)
	}
	if !slices.EqualFunc(got.Imports, want.Imports, sameImport) || !slices.Equal(got.Exports, want.Exports) ||
		!slices.Equal(got.Memories, want.Memories) || len(got.Custom) != len(want.Custom) {
		return false
	}
	for i := range got.Custom {
		if got.Custom[i].Name != want.Custom[i].Name || !bytes.Equal(got.Custom[i].Payload, want.Custom[i].Payload) {
			return false
		}
	}
	return true
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  Module
	}{
		{
			name:  "header only",
			input: header(),
			want:  Module{},
		},
		{
			name:  "custom section with payload",
			input: module(custom("wasmcp.manifest", []byte(`{"abi":1}`))),
			want:  Module{Custom: []CustomSection{{Name: "wasmcp.manifest", Payload: []byte(`{"abi":1}`)}}},
		},
		{
			name:  "custom section with empty name and payload",
			input: module(custom("", nil)),
			want:  Module{Custom: []CustomSection{{Name: ""}}},
		},
		{
			name:  "custom section with UTF-8 name and binary payload",
			input: module(custom("na\u00efve \u2603", []byte{0x00, 0xff, 0x80})),
			want:  Module{Custom: []CustomSection{{Name: "na\u00efve \u2603", Payload: []byte{0x00, 0xff, 0x80}}}},
		},
		{
			name:  "custom sections keep their order and duplicates",
			input: module(custom("a", []byte("1")), typeSection(), custom("b", []byte("2")), custom("a", []byte("3"))),
			want: Module{Custom: []CustomSection{
				{Name: "a", Payload: []byte("1")}, {Name: "b", Payload: []byte("2")}, {Name: "a", Payload: []byte("3")},
			}},
		},
		{
			name:  "custom section with a long name and payload",
			input: module(custom(strings.Repeat("n", 200), bytes.Repeat([]byte{7}, 300))),
			want:  Module{Custom: []CustomSection{{Name: strings.Repeat("n", 200), Payload: bytes.Repeat([]byte{7}, 300)}}},
		},
		{
			name: "import of every kind",
			input: module(typeSection(), section(sectionImport, vec(
				imp("wasi_snapshot_preview1", "fd_write", KindFunc, leb(0)),
				imp("env", "table", KindTable, cat([]byte{0x70}, limits(0x00, 1))),
				imp("env", "table2", KindTable, cat([]byte{0x6f}, limits(0x01, 1, 10))),
				imp("env", "mem", KindMemory, limits(0x00, 2)),
				imp("env", "g", KindGlobal, []byte{0x7f, 0x01}),
			))),
			want: Module{
				Imports: []Import{
					{Module: "wasi_snapshot_preview1", Name: "fd_write", Kind: KindFunc, Type: &FuncType{}},
					{Module: "env", Name: "table", Kind: KindTable},
					{Module: "env", Name: "table2", Kind: KindTable},
					{Module: "env", Name: "mem", Kind: KindMemory},
					{Module: "env", Name: "g", Kind: KindGlobal},
				},
				Memories: []Memory{{MinPages: 2, Imported: true}},
				Tables:   []Table{{Min: 1, Imported: true}, {Min: 1, Max: 10, HasMax: true, Imported: true}},
			},
		},
		{
			name: "imported memory with maximum",
			input: module(section(sectionImport, vec(
				imp("env", "memory", KindMemory, limits(0x01, 1, 256)),
			))),
			want: Module{
				Imports:  []Import{{Module: "env", Name: "memory", Kind: KindMemory}},
				Memories: []Memory{{MinPages: 1, MaxPages: 256, HasMax: true, Imported: true}},
			},
		},
		{
			name: "imported shared 64-bit memory",
			input: module(section(sectionImport, vec(
				imp("env", "memory", KindMemory, limits(0x07, 1<<33, 1<<34)),
			))),
			want: Module{
				Imports:  []Import{{Module: "env", Name: "memory", Kind: KindMemory}},
				Memories: []Memory{{MinPages: 1 << 33, MaxPages: 1 << 34, HasMax: true, Imported: true, Shared: true, Is64: true}},
			},
		},
		{
			name: "function imports get their types, and an index past the types none",
			input: module(section(sectionType, vec(
				[]byte{0x60, 0x00, 0x00},
				cat([]byte{0x60}, vec([]byte{0x7f}, []byte{0x7e}, []byte{0x7d}, []byte{0x7c}, []byte{0x7b}, []byte{0x70}, []byte{0x6f}), vec([]byte{0x7f}, []byte{0x7e})),
				cat([]byte{0x60}, vec([]byte{0x7c}), vec([]byte{0x7f})),
			)), section(sectionImport, vec(
				imp("m", "a", KindFunc, leb(2)),
				imp("m", "b", KindFunc, leb(1)),
				imp("m", "c", KindFunc, leb(2)),
				imp("m", "d", KindFunc, leb(3)),
			))),
			want: Module{Imports: []Import{
				{Module: "m", Name: "a", Kind: KindFunc, Type: &FuncType{Params: []ValType{F64}, Results: []ValType{I32}}},
				{Module: "m", Name: "b", Kind: KindFunc, Type: &FuncType{Params: []ValType{I32, I64, F32, F64, V128, FuncRef, ExternRef}, Results: []ValType{I32, I64}}},
				{Module: "m", Name: "c", Kind: KindFunc, Type: &FuncType{Params: []ValType{F64}, Results: []ValType{I32}}},
				{Module: "m", Name: "d", Kind: KindFunc},
			}},
		},
		{
			name:  "empty import section",
			input: module(section(sectionImport, vec())),
			want:  Module{},
		},
		{
			name: "function import with a large type index",
			input: module(section(sectionImport, vec(
				imp("m", "f", KindFunc, leb(0xffffffff)),
			))),
			want: Module{Imports: []Import{{Module: "m", Name: "f", Kind: KindFunc}}},
		},
		{
			name: "exports",
			input: module(typeSection(), funcSection(), section(sectionMemory, vec(limits(0, 1))), section(sectionExport, vec(
				exp("_start", KindFunc, 0),
				exp("memory", KindMemory, 0),
				exp("", KindGlobal, 300),
				exp("t\u00e4g", KindTag, 0),
			)), codeSection()),
			want: Module{
				Exports: []Export{
					{Name: "_start", Kind: KindFunc},
					{Name: "memory", Kind: KindMemory},
					{Name: "", Kind: KindGlobal, Index: 300},
					{Name: "t\u00e4g", Kind: KindTag},
				},
				Memories: []Memory{{MinPages: 1}},
			},
		},
		{
			name:  "memory without maximum",
			input: module(section(sectionMemory, vec(limits(0x00, 17)))),
			want:  Module{Memories: []Memory{{MinPages: 17}}},
		},
		{
			name:  "memory with maximum",
			input: module(section(sectionMemory, vec(limits(0x01, 1, 65536)))),
			want:  Module{Memories: []Memory{{MinPages: 1, MaxPages: 65536, HasMax: true}}},
		},
		{
			name:  "memory with the largest 32-bit minimum",
			input: module(section(sectionMemory, vec(limits(0x00, 0xffffffff)))),
			want:  Module{Memories: []Memory{{MinPages: 0xffffffff}}},
		},
		{
			name:  "shared memory with maximum",
			input: module(section(sectionMemory, vec(limits(0x03, 1, 2)))),
			want:  Module{Memories: []Memory{{MinPages: 1, MaxPages: 2, HasMax: true, Shared: true}}},
		},
		{
			name:  "64-bit memory without maximum",
			input: module(section(sectionMemory, vec(limits(0x04, 1<<40)))),
			want:  Module{Memories: []Memory{{MinPages: 1 << 40, Is64: true}}},
		},
		{
			name:  "64-bit memory with maximum",
			input: module(section(sectionMemory, vec(limits(0x05, 1, 1<<48)))),
			want:  Module{Memories: []Memory{{MinPages: 1, MaxPages: 1 << 48, HasMax: true, Is64: true}}},
		},
		{
			name:  "64-bit memory with a 10-byte minimum",
			input: module(section(sectionMemory, vec(cat([]byte{0x04}, leb(1<<63))))),
			want:  Module{Memories: []Memory{{MinPages: 1 << 63, Is64: true}}},
		},
		{
			name:  "imported memory comes before defined memory",
			input: module(section(sectionImport, vec(imp("env", "m", KindMemory, limits(0, 3)))), section(sectionMemory, vec(limits(0, 4), limits(1, 5, 6)))),
			want: Module{
				Imports:  []Import{{Module: "env", Name: "m", Kind: KindMemory}},
				Memories: []Memory{{MinPages: 3, Imported: true}, {MinPages: 4}, {MinPages: 5, MaxPages: 6, HasMax: true}},
			},
		},
		{
			name:  "padded LEB128 is accepted",
			input: module(section(sectionMemory, []byte{0x81, 0x80, 0x00, 0x00, 0x83, 0x80, 0x80, 0x80, 0x00})),
			want:  Module{Memories: []Memory{{MinPages: 3}}},
		},
		{
			name:  "padded section size is accepted",
			input: cat(header(), []byte{sectionCustom, 0x82, 0x80, 0x80, 0x80, 0x00}, name("x")),
			want:  Module{Custom: []CustomSection{{Name: "x"}}},
		},
		{
			name:  "empty vectors in every section",
			input: module(section(1, vec()), section(2, vec()), section(3, vec()), section(4, vec()), section(5, vec()), section(6, vec()), section(7, vec()), section(9, vec()), section(12, leb(0)), section(10, vec()), section(11, vec())),
			want:  Module{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.input)
			if err != nil {
				t.Fatalf("Parse: got error %v, want success", err)
			}
			if !equalModules(got, &tc.want) {
				t.Errorf("Parse:\n got %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   []byte
		wantErr string // a substring of the error
	}{
		// Section framing.
		{"section id without size", cat(header(), []byte{1}), "unexpected end"},
		{"section size larger than remaining bytes", cat(header(), []byte{1, 5, 0, 0}), "claims 5 bytes, only 2 remain"},
		{"section size larger with nothing after it", cat(header(), []byte{0, 1}), "claims 1 bytes, only 0 remain"},
		{"huge section size", cat(header(), []byte{1}, leb(0xffffffff)), "claims 4294967295 bytes"},
		{"section size LEB cut short", cat(header(), []byte{1, 0x80, 0x80}), "unexpected end"},
		{"section size LEB too long", cat(header(), []byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}), "too long"},
		{"section size overflowing 32 bits", cat(header(), []byte{1, 0xff, 0xff, 0xff, 0xff, 0x7f}), "overflows 32 bits"},
		{"section size of exactly 2^32", cat(header(), []byte{1, 0x80, 0x80, 0x80, 0x80, 0x10}), "overflows 32 bits"},
		{"good section then truncated one", cat(module(custom("ok", nil)), []byte{0, 9, 1}), "claims 9 bytes"},

		// Custom sections.
		{"custom section with empty body", module(section(sectionCustom, nil)), "custom section"},
		{"custom section name longer than body", module(section(sectionCustom, []byte{5, 'a', 'b'})), "custom section: unexpected end"},
		{"custom section name not UTF-8", module(section(sectionCustom, cat(leb(2), []byte{0xc3, 0x28}))), "custom section: name is not UTF-8"},
		{"custom section name a lone continuation byte", module(section(sectionCustom, cat(leb(1), []byte{0x80}, []byte("payload")))), "name is not UTF-8"},
		{"custom section name length too long a LEB", module(section(sectionCustom, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00})), "too long"},
		{"custom name cannot borrow bytes beyond its section", cat(header(), section(sectionCustom, []byte{3, 'a'}), []byte("bc")), "custom section"},

		// Imports.
		{"import section empty body", module(section(sectionImport, nil)), "import section: unexpected end"},
		{"import count larger than entries", module(section(sectionImport, cat(leb(2), imp("m", "f", KindFunc, leb(0))))), "import 1"},
		{"import module name truncated", module(section(sectionImport, cat(leb(1), []byte{4, 'e', 'n'}))), "import 0: unexpected end"},
		{"import field name missing", module(section(sectionImport, cat(leb(1), name("env")))), "import 0: unexpected end"},
		{"import kind missing", module(section(sectionImport, cat(leb(1), name("env"), name("f")))), "import 0: unexpected end"},
		{"import module name not UTF-8", module(section(sectionImport, vec(cat(leb(1), []byte{0xff}, name("f"), []byte{KindFunc}, leb(0))))), "import 0: name is not UTF-8"},
		{"import field name not UTF-8", module(section(sectionImport, vec(cat(name("env"), leb(3), []byte{'a', 0xed, 0xa0}, []byte{KindFunc}, leb(0))))), "name is not UTF-8"},
		{"func import without type index", module(section(sectionImport, vec(imp("env", "f", KindFunc, nil)))), "import 0 (env.f): unexpected end"},
		{"func import type index overflowing", module(section(sectionImport, vec(imp("env", "f", KindFunc, []byte{0xff, 0xff, 0xff, 0xff, 0x1f})))), "overflows 32 bits"},
		{"table import without reference type", module(section(sectionImport, vec(imp("env", "t", KindTable, nil)))), "import 0 (env.t)"},
		{"table import without limits", module(section(sectionImport, vec(imp("env", "t", KindTable, []byte{0x70})))), "import 0 (env.t)"},
		{"table import with bad limits flag", module(section(sectionImport, vec(imp("env", "t", KindTable, []byte{0x70, 0x08, 0x01})))), "limits flag 0x08 is not supported"},
		{"memory import without limits", module(section(sectionImport, vec(imp("env", "m", KindMemory, nil)))), "import 0 (env.m)"},
		{"memory import with bad flag", module(section(sectionImport, vec(imp("env", "m", KindMemory, []byte{0x80, 0x01})))), "unknown limits flag 0x80"},
		{"memory import missing its maximum", module(section(sectionImport, vec(imp("env", "m", KindMemory, []byte{0x01, 0x01})))), "import 0 (env.m): unexpected end"},
		{"global import without value type", module(section(sectionImport, vec(imp("env", "g", KindGlobal, nil)))), "import 0 (env.g)"},
		{"global import without mutability", module(section(sectionImport, vec(imp("env", "g", KindGlobal, []byte{0x7f})))), "import 0 (env.g): unexpected end"},
		{"tag import", module(section(sectionImport, vec(imp("env", "e", KindTag, []byte{0x00, 0x00})))), "import 0 (env.e): exception handling (tags) is not supported"},
		{"unknown import kind", module(section(sectionImport, vec(imp("env", "x", 0x05, leb(0))))), "unknown import kind 0x05"},
		{"second import broken", module(section(sectionImport, vec(imp("a", "b", KindFunc, leb(0)), imp("c", "d", 0x09, nil)))), "import 1 (c.d): unknown import kind 0x09"},

		// Memories.
		{"memory section empty body", module(section(sectionMemory, nil)), "memory section: unexpected end"},
		{"memory count larger than entries", module(section(sectionMemory, cat(leb(2), limits(0, 1)))), "memory 1: unexpected end"},
		{"memory without minimum", module(section(sectionMemory, vec([]byte{0x00}))), "memory 0: unexpected end"},
		{"memory with max flag but no maximum", module(section(sectionMemory, vec([]byte{0x01, 0x01}))), "memory 0: unexpected end"},
		{"memory flag out of range", module(section(sectionMemory, vec([]byte{0x08, 0x01}))), "unknown limits flag 0x08"},
		{"32-bit memory minimum of 2^32", module(section(sectionMemory, vec(cat([]byte{0x00}, leb(1<<32))))), "memory 0: integer overflows 32 bits"},
		{"32-bit memory maximum of 2^32", module(section(sectionMemory, vec(cat([]byte{0x01, 0x00}, leb(1<<32))))), "overflows 32 bits"},
		{"32-bit memory minimum LEB too long", module(section(sectionMemory, vec([]byte{0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}))), "memory 0: integer is too long"},
		{"64-bit memory minimum LEB too long", module(section(sectionMemory, vec(cat([]byte{0x04}, bytes.Repeat([]byte{0x80}, 10), []byte{0x00})))), "memory 0: integer is too long"},
		{"64-bit memory maximum truncated", module(section(sectionMemory, vec([]byte{0x05, 0x01, 0x80}))), "memory 0: unexpected end"},
		{"memory count overflowing", module(section(sectionMemory, []byte{0xff, 0xff, 0xff, 0xff, 0x7f})), "memory section: integer overflows 32 bits"},

		// Exports.
		{"export section empty body", module(section(sectionExport, nil)), "export section: unexpected end"},
		{"export name truncated", module(section(sectionExport, cat(leb(1), []byte{9, 'a'}))), "export 0: unexpected end"},
		{"export name not UTF-8", module(section(sectionExport, vec(cat(leb(1), []byte{0xfe}, []byte{KindFunc}, leb(0))))), "export 0: name is not UTF-8"},
		{"export kind missing", module(section(sectionExport, vec(name("f")))), "export 0: unexpected end"},
		{"export index missing", module(section(sectionExport, vec(cat(name("f"), []byte{KindFunc})))), "export 0: unexpected end"},
		{"export index too long", module(section(sectionExport, vec(cat(name("f"), []byte{KindFunc}, bytes.Repeat([]byte{0x80}, 5), []byte{0x00})))), "export 0: integer is too long"},
		{"export count larger than entries", module(section(sectionExport, cat(leb(3), exp("a", KindFunc, 0), exp("b", KindFunc, 1)))), "export 2"},
		{"export entries cannot read the next section", cat(header(), section(sectionExport, cat(leb(1), name("f"))), section(1, []byte{0x00, 0x00})), "export 0: unexpected end"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.input)
			if err == nil {
				t.Fatalf("Parse(% x) = %+v, want error containing %q", tc.input, m, tc.wantErr)
			}
			if m != nil {
				t.Errorf("Parse returned module %+v alongside error", m)
			}
			if errors.Is(err, ErrNotWasm) {
				t.Errorf("error %q is ErrNotWasm, want a structural error", err)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		name      string
		input     []byte
		notWasm   bool   // want ErrNotWasm
		wantErr   string // otherwise a substring of the error
		wantValid bool
	}{
		{name: "nil", input: nil, notWasm: true},
		{name: "empty", input: []byte{}, notWasm: true},
		{name: "magic only", input: []byte("\x00asm"), notWasm: true},
		{name: "seven bytes", input: header()[:7], notWasm: true},
		{name: "wrong magic", input: []byte("\x00ASM\x01\x00\x00\x00"), notWasm: true},
		{name: "ELF file", input: []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"), notWasm: true},
		{name: "text", input: []byte("(module)\n"), notWasm: true},
		{name: "component version", input: []byte("\x00asm\x0d\x00\x01\x00"), wantErr: "binary version 0x1000d is not a core module"},
		{name: "version 2", input: []byte("\x00asm\x02\x00\x00\x00"), wantErr: "binary version 0x2"},
		{name: "version 0", input: []byte("\x00asm\x00\x00\x00\x00"), wantErr: "components are not supported"},
		{name: "big-endian version 1", input: []byte("\x00asm\x00\x00\x00\x01"), wantErr: "not a core module"},
		{name: "version 1", input: header(), wantValid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse(tc.input)
			if tc.wantValid {
				if err != nil {
					t.Fatalf("Parse: %v, want success", err)
				}
				if m == nil {
					t.Fatal("Parse returned nil module without error")
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse(% x) succeeded, want an error", tc.input)
			}
			if got := errors.Is(err, ErrNotWasm); got != tc.notWasm {
				t.Errorf("errors.Is(%q, ErrNotWasm) = %v, want %v", err, got, tc.notWasm)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestModuleCustomNamed(t *testing.T) {
	m, err := Parse(module(custom("a", []byte("1")), custom("b", []byte("2")), custom("a", nil), custom("A", []byte("4"))))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want [][]byte
	}{
		{"a", [][]byte{[]byte("1"), {}}},
		{"b", [][]byte{[]byte("2")}},
		{"A", [][]byte{[]byte("4")}},
		{"missing", nil},
		{"", nil},
	}
	for _, tc := range tests {
		t.Run("name "+tc.name, func(t *testing.T) {
			got := m.CustomNamed(tc.name)
			if len(got) != len(tc.want) {
				t.Fatalf("CustomNamed(%q) returned %d payloads %q, want %d %q", tc.name, len(got), got, len(tc.want), tc.want)
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.want[i]) {
					t.Errorf("CustomNamed(%q)[%d] = %q, want %q", tc.name, i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestModuleHasExport(t *testing.T) {
	m, err := Parse(module(section(sectionExport, vec(exp("_start", KindFunc, 0), exp("memory", KindMemory, 0)))))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		kind byte
		want bool
	}{
		{"_start", KindFunc, true},
		{"memory", KindMemory, true},
		{"_start", KindMemory, false},
		{"memory", KindFunc, false},
		{"main", KindFunc, false},
		{"_START", KindFunc, false},
	}
	for _, tc := range tests {
		if got := m.HasExport(tc.name, tc.kind); got != tc.want {
			t.Errorf("HasExport(%q, %d) = %v, want %v", tc.name, tc.kind, got, tc.want)
		}
	}
	if (&Module{}).HasExport("_start", KindFunc) {
		t.Error("empty module HasExport(_start) = true, want false")
	}
}

func TestSetCustomSection(t *testing.T) {
	const target = "wasmcp.manifest"
	keepA := custom("a", []byte("first"))
	types := typeSection()
	imports := section(sectionImport, vec(imp("env", "f", KindFunc, leb(0))))
	funcs := funcSection()
	mem := section(sectionMemory, vec(limits(1, 1, 2)))
	exports := section(sectionExport, vec(exp("_start", KindFunc, 1)))
	code := codeSection()
	keepB := custom("b", []byte("second"))
	// A section whose name merely starts with the target is not the target.
	keepPrefix := custom(target+"2", []byte("prefix"))
	old1 := custom(target, []byte(`{"old":1}`))
	old2 := custom(target, nil)

	newSection := func(n string, payload []byte) []byte { return custom(n, payload) }

	tests := []struct {
		name    string
		input   []byte
		secName string
		payload []byte
		want    []byte
	}{
		{
			name:    "appends to a module without the section",
			input:   module(types, funcs, exports, code),
			secName: target,
			payload: []byte(`{"abi":1}`),
			want:    module(types, funcs, exports, code, newSection(target, []byte(`{"abi":1}`))),
		},
		{
			name:    "header only",
			input:   header(),
			secName: target,
			payload: []byte("x"),
			want:    module(newSection(target, []byte("x"))),
		},
		{
			name:    "replaces every section of the name and keeps the rest in place",
			input:   module(keepA, old1, types, imports, funcs, old2, mem, keepPrefix, exports, code, keepB, old1),
			secName: target,
			payload: []byte(`{"abi":1,"new":true}`),
			want:    module(keepA, types, imports, funcs, mem, keepPrefix, exports, code, keepB, newSection(target, []byte(`{"abi":1,"new":true}`))),
		},
		{
			name:    "section that is already last is moved nowhere",
			input:   module(types, old1),
			secName: target,
			payload: []byte(`{"old":1}`),
			want:    module(types, old1),
		},
		{
			name:    "empty payload",
			input:   module(types, old1),
			secName: target,
			payload: nil,
			want:    module(types, newSection(target, nil)),
		},
		{
			name:    "empty name replaces only empty-named sections",
			input:   module(custom("", []byte("e")), keepA),
			secName: "",
			payload: []byte("f"),
			want:    module(keepA, newSection("", []byte("f"))),
		},
		{
			name:    "name comparison is case-sensitive",
			input:   module(custom("A", []byte("upper")), keepA),
			secName: "a",
			payload: []byte("new"),
			want:    module(custom("A", []byte("upper")), newSection("a", []byte("new"))),
		},
		{
			name:    "long name and payload need multi-byte sizes",
			input:   module(types),
			secName: strings.Repeat("n", 130),
			payload: bytes.Repeat([]byte{0xab}, 20000),
			want:    module(types, newSection(strings.Repeat("n", 130), bytes.Repeat([]byte{0xab}, 20000))),
		},
		{
			name:    "padded section sizes of kept sections are copied verbatim",
			input:   cat(header(), []byte{1, 0x84, 0x80, 0x80, 0x80, 0x00, 0x01, 0x60, 0x00, 0x00}, old1),
			secName: target,
			payload: []byte("p"),
			want:    cat(header(), []byte{1, 0x84, 0x80, 0x80, 0x80, 0x00, 0x01, 0x60, 0x00, 0x00}, newSection(target, []byte("p"))),
		},
		{
			name:    "custom section with an unreadable name is kept",
			input:   module(section(sectionCustom, []byte{0x01, 0xff}), old1),
			secName: target,
			payload: []byte("p"),
			want:    module(section(sectionCustom, []byte{0x01, 0xff}), newSection(target, []byte("p"))),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := bytes.Clone(tc.input)
			got, err := SetCustomSection(tc.input, tc.secName, tc.payload)
			if err != nil {
				t.Fatalf("SetCustomSection: %v", err)
			}
			if !bytes.Equal(tc.input, before) {
				t.Error("SetCustomSection modified its input")
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("SetCustomSection:\n got % x\nwant % x", got, tc.want)
			}
			if len(got) > 0 && len(tc.input) > 0 && &got[0] == &tc.input[0] {
				t.Error("result shares its backing array with the input")
			}
		})
	}
}

func TestSetCustomSectionReparses(t *testing.T) {
	const target = "wasmcp.manifest"
	input := module(
		custom("producers", []byte("go")),
		section(sectionImport, vec(imp("wasi_snapshot_preview1", "fd_write", KindFunc, leb(0)), imp("env", "mem", KindMemory, limits(0, 1)))),
		custom(target, []byte("old")),
		section(sectionExport, vec(exp("_start", KindFunc, 1))),
		custom("name", []byte{0x00}),
		custom(target, []byte("older")),
	)
	orig, err := Parse(input)
	if err != nil {
		t.Fatalf("Parse(input): %v", err)
	}
	payload := []byte(`{"abi":1,"tools":[]}`)
	out, err := SetCustomSection(input, target, payload)
	if err != nil {
		t.Fatalf("SetCustomSection: %v", err)
	}
	got, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(result): %v", err)
	}
	if p := got.CustomNamed(target); len(p) != 1 || !bytes.Equal(p[0], payload) {
		t.Errorf("CustomNamed(%q) = %q, want exactly [%q]", target, p, payload)
	}
	if !slices.Equal(got.Imports, orig.Imports) || !slices.Equal(got.Exports, orig.Exports) || !slices.Equal(got.Memories, orig.Memories) {
		t.Errorf("imports/exports/memories changed:\n got %+v\nwant %+v", *got, *orig)
	}
	wantCustom := []string{"producers", "name", target}
	var gotCustom []string
	for _, c := range got.Custom {
		gotCustom = append(gotCustom, c.Name)
	}
	if !slices.Equal(gotCustom, wantCustom) {
		t.Errorf("custom section order = %q, want %q", gotCustom, wantCustom)
	}

	// Setting the same section again is a fixed point.
	again, err := SetCustomSection(out, target, payload)
	if err != nil {
		t.Fatalf("second SetCustomSection: %v", err)
	}
	if !bytes.Equal(again, out) {
		t.Errorf("second SetCustomSection changed the module:\n first % x\nsecond % x", out, again)
	}
}

func TestSetCustomSectionErrors(t *testing.T) {
	good := module(typeSection())
	tests := []struct {
		name    string
		input   []byte
		secName string
		notWasm bool
		wantErr string
	}{
		{name: "name not UTF-8", input: good, secName: "bad\xff", wantErr: "not UTF-8"},
		{name: "name a lone surrogate encoding", input: good, secName: "\xed\xa0\x80", wantErr: "not UTF-8"},
		{name: "empty input", input: nil, secName: "x", notWasm: true},
		{name: "bad magic", input: []byte("\x00wasm\x01\x00\x00"), secName: "x", notWasm: true},
		{name: "component", input: []byte("\x00asm\x0d\x00\x01\x00"), secName: "x", wantErr: "not a core module"},
		{name: "truncated section", input: cat(good, []byte{1, 10, 0}), secName: "x", wantErr: "claims 10 bytes"},
		{name: "section size too long", input: cat(good, []byte{0, 0x80, 0x80, 0x80, 0x80, 0x80}), secName: "x", wantErr: "too long"},
		{name: "section size missing", input: cat(good, []byte{0}), secName: "x", wantErr: "unexpected end"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := SetCustomSection(tc.input, tc.secName, []byte("p"))
			if err == nil {
				t.Fatalf("SetCustomSection succeeded with % x, want an error", out)
			}
			if out != nil {
				t.Errorf("SetCustomSection returned % x alongside error", out)
			}
			if got := errors.Is(err, ErrNotWasm); got != tc.notWasm {
				t.Errorf("errors.Is(%q, ErrNotWasm) = %v, want %v", err, got, tc.notWasm)
			}
			if tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

// sameInterface reports whether a and b import, export and declare memory
// alike. Imports hold their function types by pointer, so what they point
// to is compared.
func sameInterface(a, b *Module) bool {
	return reflect.DeepEqual(a.Imports, b.Imports) && slices.Equal(a.Exports, b.Exports) && slices.Equal(a.Memories, b.Memories)
}

func FuzzParse(f *testing.F) {
	f.Add(header(), "wasmcp.manifest", []byte(`{"abi":1}`))
	f.Add(module(custom("wasmcp.manifest", []byte("old")), typeSection(), custom("other", []byte{1, 2})), "wasmcp.manifest", []byte("new"))
	f.Add(module(
		typeSection(),
		section(sectionImport, vec(
			imp("wasi_snapshot_preview1", "fd_write", KindFunc, leb(0)),
			imp("env", "t", KindTable, cat([]byte{0x70}, limits(0x01, 1, 2))),
			imp("env", "m", KindMemory, limits(0x05, 1, 1<<40)),
			imp("env", "g", KindGlobal, []byte{0x7f, 0x00}),
			imp("env", "e", KindTag, []byte{0x00, 0x00}),
		)),
		funcSection(),
		section(sectionMemory, vec(limits(0x00, 1))),
		section(sectionExport, vec(exp("_start", KindFunc, 1), exp("memory", KindMemory, 0))),
		codeSection(),
	), "name", []byte{})
	f.Add([]byte("\x00asm\x0d\x00\x01\x00"), "x", []byte("y"))
	f.Add(module(section(sectionTable, vec(table(0x00, 5), table(0x01, 1, 1<<20)))), "t", []byte("z"))
	f.Add(cat(header(), []byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}), "", []byte(nil))
	if indirect, err := wattest.Assemble("indirect"); err == nil {
		f.Add(indirect, "", []byte(nil))
	}

	f.Fuzz(func(t *testing.T, data []byte, secName string, payload []byte) {
		orig := bytes.Clone(data)
		m, err := Parse(data)
		if !bytes.Equal(data, orig) {
			t.Fatal("Parse modified its input")
		}
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a module alongside error %v", err)
			}
			return
		}
		if capped, _, err := CapTables(data, 1000); err == nil {
			again, _, err := CapTables(capped, 1000)
			if err != nil || !bytes.Equal(again, capped) {
				t.Fatalf("capping a capped module: %v\n% x\n% x", err, capped, again)
			}
			if got, err := Parse(capped); err != nil || !sameInterface(got, m) {
				t.Fatalf("CapTables changed what Parse reads (%v)", err)
			}
		}
		switch direct, applied, err := DirectCalls(data, 64); {
		case !bytes.Equal(data, orig):
			t.Fatal("DirectCalls modified its input")
		case err != nil:
			t.Fatalf("DirectCalls failed on a module that parses: %v", err)
		case !applied && !bytes.Equal(direct, data):
			t.Fatal("DirectCalls changed a module it did not rewrite")
		case applied:
			if got, err := Parse(direct); err != nil || !sameInterface(got, m) {
				t.Fatalf("DirectCalls changed what Parse reads of the module's interface (%v)", err)
			}
		}
		out, err := SetCustomSection(data, secName, payload)
		if !bytes.Equal(data, orig) {
			t.Fatal("SetCustomSection modified its input")
		}
		if !utf8.ValidString(secName) {
			if err == nil {
				t.Fatalf("SetCustomSection accepted non-UTF-8 name %q", secName)
			}
			return
		}
		if err != nil {
			t.Fatalf("SetCustomSection failed on a module that parses: %v", err)
		}
		got, err := Parse(out)
		if err != nil {
			t.Fatalf("result of SetCustomSection does not parse: %v\ninput % x\noutput % x", err, data, out)
		}
		if p := got.CustomNamed(secName); len(p) != 1 || !bytes.Equal(p[0], payload) {
			t.Fatalf("result has sections %q named %q, want exactly [%q]", p, secName, payload)
		}
		if !sameInterface(got, m) {
			t.Fatalf("SetCustomSection changed what Parse reads:\nbefore %+v\n after %+v", *m, *got)
		}
		// Other custom sections survive in order; the new one is last.
		var wantOthers []CustomSection
		for _, c := range m.Custom {
			if c.Name != secName {
				wantOthers = append(wantOthers, c)
			}
		}
		want := &Module{Imports: m.Imports, Exports: m.Exports, Memories: m.Memories,
			Custom: append(wantOthers, CustomSection{Name: secName, Payload: payload})}
		if !equalModules(got, want) {
			t.Fatalf("custom sections after SetCustomSection:\n got %+v\nwant %+v", got.Custom, want.Custom)
		}
	})
}

func TestUleb64RefusesBitsPast64(t *testing.T) {
	r := &reader{b: []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}}
	if _, err := r.uleb(10); err == nil || !strings.Contains(err.Error(), "overflows 64 bits") {
		t.Fatalf("2^64 decoded with err %v; want an overflow error", err)
	}
	r = &reader{b: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}}
	if v, err := r.uleb(10); err != nil || v != ^uint64(0) {
		t.Fatalf("2^64-1 = %d, %v", v, err)
	}
}

func TestFuncTypeString(t *testing.T) {
	for _, tc := range []struct {
		t    FuncType
		want string
	}{
		{FuncType{}, "() -> ()"},
		{FuncType{Params: []ValType{I32, I32, I32}, Results: []ValType{I32}}, "(i32, i32, i32) -> i32"},
		{FuncType{Params: []ValType{I64}, Results: []ValType{F32, V128}}, "(i64) -> (f32, v128)"},
		{FuncType{Params: []ValType{FuncRef, ExternRef, 0x40}}, "(funcref, externref, 0x40) -> ()"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("%#v.String() = %q; want %q", tc.t, got, tc.want)
		}
	}
}
