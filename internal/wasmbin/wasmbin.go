// Package wasmbin reads and edits the few parts of a WebAssembly binary that
// wasmcp needs before, or without, compiling it: custom sections, imports,
// exports and the declared memory.
//
// Listing tools must never compile a module (compiling a large Go module
// takes over a second), and wazero offers no decode-only API, so this package
// walks the section headers itself. It trusts nothing: every length is
// checked against the bytes that remain.
package wasmbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

var magic = []byte{0x00, 'a', 's', 'm'}

// coreVersion is the only binary version wasmcp accepts; components (the
// component model's layer 1 binaries) carry another.
const coreVersion = 1

// Section ids from the core specification.
const (
	sectionCustom = 0
	sectionImport = 2
	sectionMemory = 5
	sectionExport = 7
)

// External kinds of imports and exports.
const (
	KindFunc   byte = 0
	KindTable  byte = 1
	KindMemory byte = 2
	KindGlobal byte = 3
	KindTag    byte = 4
)

// Import is one entry of the import section.
type Import struct {
	Module, Name string
	Kind         byte
}

// Export is one entry of the export section.
type Export struct {
	Name string
	Kind byte
}

// Memory is a memory the module defines or imports.
type Memory struct {
	MinPages uint64
	MaxPages uint64 // valid only when HasMax
	HasMax   bool
	Imported bool
}

// CustomSection is a custom section's name and payload.
type CustomSection struct {
	Name    string
	Payload []byte
}

// Module is what Parse reads from a binary.
type Module struct {
	Imports  []Import
	Exports  []Export
	Memories []Memory
	Custom   []CustomSection
}

// CustomNamed returns the payloads of every custom section with the given name.
func (m *Module) CustomNamed(name string) [][]byte {
	var out [][]byte
	for _, c := range m.Custom {
		if c.Name == name {
			out = append(out, c.Payload)
		}
	}
	return out
}

// HasExport reports whether the module exports name with the given kind.
func (m *Module) HasExport(name string, kind byte) bool {
	for _, e := range m.Exports {
		if e.Name == name && e.Kind == kind {
			return true
		}
	}
	return false
}

// ErrNotWasm means the bytes do not start with the Wasm magic number.
var ErrNotWasm = errors.New("not a WebAssembly binary (bad magic number)")

// Parse reads the sections wasmcp needs. Sections it does not need are
// skipped unread; their contents are validated later by the compiler.
func Parse(b []byte) (*Module, error) {
	r, err := newReader(b)
	if err != nil {
		return nil, err
	}
	m := &Module{}
	for !r.done() {
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		sr := &reader{b: body}
		switch id {
		case sectionCustom:
			name, err := sr.name()
			if err != nil {
				return nil, fmt.Errorf("custom section: %w", err)
			}
			m.Custom = append(m.Custom, CustomSection{Name: name, Payload: sr.b[sr.off:]})
		case sectionImport:
			err = parseImports(sr, m)
		case sectionMemory:
			err = parseMemories(sr, m)
		case sectionExport:
			err = parseExports(sr, m)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// SetCustomSection returns a copy of b in which every custom section called
// name is removed and one holding payload is appended. Custom sections may
// stand anywhere, so appending keeps the module valid.
func SetCustomSection(b []byte, name string, payload []byte) ([]byte, error) {
	if !utf8.ValidString(name) {
		return nil, errors.New("custom section name is not UTF-8")
	}
	r, err := newReader(b)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), b[:8]...)
	for !r.done() {
		start := r.off
		id, body, err := r.section()
		if err != nil {
			return nil, err
		}
		if id == sectionCustom {
			if n, err := (&reader{b: body}).name(); err == nil && n == name {
				continue
			}
		}
		out = append(out, b[start:r.off]...)
	}
	var content []byte
	content = binary.AppendUvarint(content, uint64(len(name)))
	content = append(content, name...)
	content = append(content, payload...)
	out = append(out, sectionCustom)
	out = binary.AppendUvarint(out, uint64(len(content)))
	return append(out, content...), nil
}

func parseImports(r *reader, m *Module) error {
	n, err := r.u32()
	if err != nil {
		return fmt.Errorf("import section: %w", err)
	}
	for i := uint32(0); i < n; i++ {
		var imp Import
		if imp.Module, err = r.name(); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		if imp.Name, err = r.name(); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		if imp.Kind, err = r.byte(); err != nil {
			return fmt.Errorf("import %d: %w", i, err)
		}
		switch imp.Kind {
		case KindFunc:
			_, err = r.u32()
		case KindTable:
			if _, err = r.byte(); err == nil { // reference type
				_, err = r.limits()
			}
		case KindMemory:
			var mem Memory
			if mem, err = r.limits(); err == nil {
				mem.Imported = true
				m.Memories = append(m.Memories, mem)
			}
		case KindGlobal:
			if _, err = r.byte(); err == nil { // value type
				_, err = r.byte() // mutability
			}
		case KindTag:
			if _, err = r.byte(); err == nil { // attribute
				_, err = r.u32()
			}
		default:
			err = fmt.Errorf("unknown import kind 0x%02x", imp.Kind)
		}
		if err != nil {
			return fmt.Errorf("import %d (%s.%s): %w", i, imp.Module, imp.Name, err)
		}
		m.Imports = append(m.Imports, imp)
	}
	return nil
}

func parseMemories(r *reader, m *Module) error {
	n, err := r.u32()
	if err != nil {
		return fmt.Errorf("memory section: %w", err)
	}
	for i := uint32(0); i < n; i++ {
		mem, err := r.limits()
		if err != nil {
			return fmt.Errorf("memory %d: %w", i, err)
		}
		m.Memories = append(m.Memories, mem)
	}
	return nil
}

func parseExports(r *reader, m *Module) error {
	n, err := r.u32()
	if err != nil {
		return fmt.Errorf("export section: %w", err)
	}
	for i := uint32(0); i < n; i++ {
		var e Export
		if e.Name, err = r.name(); err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		if e.Kind, err = r.byte(); err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		if _, err = r.u32(); err != nil {
			return fmt.Errorf("export %d: %w", i, err)
		}
		m.Exports = append(m.Exports, e)
	}
	return nil
}

// reader walks a byte slice; every method fails rather than reads past the end.
type reader struct {
	b   []byte
	off int
}

var errShort = errors.New("unexpected end of section")

func newReader(b []byte) (*reader, error) {
	if len(b) < 8 || !bytes.Equal(b[:4], magic) {
		return nil, ErrNotWasm
	}
	if v := binary.LittleEndian.Uint32(b[4:8]); v != coreVersion {
		return nil, fmt.Errorf("binary version %#x is not a core module (version 1); components are not supported", v)
	}
	return &reader{b: b, off: 8}, nil
}

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) section() (id byte, body []byte, err error) {
	if id, err = r.byte(); err != nil {
		return 0, nil, err
	}
	size, err := r.u32()
	if err != nil {
		return 0, nil, fmt.Errorf("section %d: %w", id, err)
	}
	if uint64(size) > uint64(len(r.b)-r.off) {
		return 0, nil, fmt.Errorf("section %d claims %d bytes, only %d remain", id, size, len(r.b)-r.off)
	}
	body = r.b[r.off : r.off+int(size)]
	r.off += int(size)
	return id, body, nil
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(5)
	return uint32(v), err
}

// uleb decodes an unsigned LEB128 of at most maxBytes bytes.
func (r *reader) uleb(maxBytes int) (uint64, error) {
	var v uint64
	for i := 0; i < maxBytes; i++ {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == 9 && c&0x80 == 0 && c > 0x01 {
			// The tenth byte carries only the 64th bit.
			return 0, errors.New("integer overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			if maxBytes == 5 && v > 0xffffffff {
				return 0, errors.New("integer overflows 32 bits")
			}
			return v, nil
		}
	}
	return 0, errors.New("integer is too long")
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(len(r.b)-r.off) {
		return "", errShort
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	if !utf8.Valid(s) {
		return "", errors.New("name is not UTF-8")
	}
	return string(s), nil
}

// limits reads a memory or table type's limits: a flag byte (bit 0: has a
// maximum, bit 1: shared, bit 2: 64-bit), then the minimum and maybe maximum.
func (r *reader) limits() (Memory, error) {
	flag, err := r.byte()
	if err != nil {
		return Memory{}, err
	}
	if flag > 0x07 {
		return Memory{}, fmt.Errorf("unknown limits flag 0x%02x", flag)
	}
	width := 5
	if flag&0x04 != 0 {
		width = 10
	}
	var mem Memory
	if mem.MinPages, err = r.uleb(width); err != nil {
		return Memory{}, err
	}
	if flag&0x01 != 0 {
		mem.HasMax = true
		if mem.MaxPages, err = r.uleb(width); err != nil {
			return Memory{}, err
		}
	}
	return mem, nil
}
