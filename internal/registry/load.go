package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/yosida95/uritemplate/v3"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/schema"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// MaxSchemaNodes bounds the objects and booleans (each a possible
// subschema) of all of a manifest's schemas together: four times what one
// schema may hold, so that loading a manifest of up to 256 tools costs at
// most about what four schemas at schema.MaxNodes do, some tens of
// milliseconds. Real manifests hold a few dozen.
const MaxSchemaNodes = 4 * schema.MaxNodes

// MaxModuleSize bounds a module file. The largest real tools (Go guests) are
// a few MiB; the bound keeps a stray disk image in the directory from being
// read into memory.
const MaxModuleSize = 64 << 20

// LoadFile loads one module file and its manifest, as Load does for each
// file of a directory.
func LoadFile(path string, opts LoadOptions) (*Module, []*Tool, error) {
	m, _, _, err := loadFile(path, opts)
	if err != nil {
		return nil, nil, err
	}
	return m, m.tools, nil
}

// loadFile is LoadFile, the stamp of the files it read, and what
// verifying their signatures needs. Every file is read before any is
// parsed, so that the stamp says what any result, a module or why there
// is none, came from.
func loadFile(path string, opts LoadOptions) (*Module, stamp, *signatures, error) {
	opts = opts.withDefaults()
	st := stamp{at: time.Now(), inputs: opts.inputs()}
	wasm, fi, err := readRegular(path, MaxModuleSize)
	if err != nil {
		return nil, stamp{}, nil, err
	}
	st.wasm, st.ok = statID(fi)
	var signed signedFile
	signed, st.wasmSig = readSignature(path, wasm)
	sigs := &signatures{files: []signedFile{signed}}
	sidecar := sidecarOf(path)
	sidecarData, fi, err := readRegular(sidecar, abi.MaxManifestSize)
	switch {
	case err == nil:
		st.sidecar, _ = statID(fi) // as the module's: stat is the same
		signed, st.sidecarSig = readSignature(sidecar, sidecarData)
		sigs.files = append(sigs.files, signed)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, stamp{}, nil, err
	}
	m, err := parseModule(path, opts, wasm, sidecar, sidecarData)
	if err != nil {
		return nil, st, nil, err
	}
	return m, st, sigs, nil
}

// parseModule makes a module of the files read.
func parseModule(path string, opts LoadOptions, wasm []byte, sidecar string, sidecarData []byte) (*Module, error) {
	parsed, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, err
	}
	manifest, from, manifestBytes, merr := findManifest(sidecar, sidecarData, parsed)
	// What is wrong with the module comes first; without a manifest, it
	// is checked as a command.
	start := abi.StartCommand
	if merr == nil {
		start = manifest.StartKind()
	}
	if err := opts.Engine.CheckModule(parsed, start); err != nil {
		return nil, err
	}
	if merr != nil {
		return nil, merr
	}
	var hostImports []string
	for _, imp := range parsed.Imports {
		if imp.Module == abi.HostModule {
			hostImports = append(hostImports, imp.Name)
		}
	}
	if err := manifest.CheckAsks(hostImports, len(parsed.CustomNamed(abi.InitSection)) > 0); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(wasm)
	key := sha256.New()
	key.Write(sum[:])
	key.Write([]byte(from))
	key.Write(manifestBytes)
	m := &Module{
		log:          opts.Logger,
		Path:         path,
		Stem:         stemOf(path),
		SHA256:       hex.EncodeToString(sum[:]),
		Size:         len(wasm),
		ManifestFrom: from,
		Manifest:     manifest,
		Limits:       Clamp(manifest.Limits, opts.Ceilings, opts.Logger, path),
		key:          hex.EncodeToString(key.Sum(nil)),
		observer:     opts.Observer,
		wasm:         wasm,
		inputs:       opts.inputs(),
		cached:       opts.Engine.Cached(wasm),
		done:         make(chan struct{}),
		needed:       make(chan struct{}),
		retiring:     make(chan struct{}),
		unused:       make(chan struct{}),
	}
	tools := make([]*Tool, 0, len(manifest.Tools))
	nodes := 0
	compile := func(spec abi.Tool, which string, raw json.RawMessage) (*schema.Schema, error) {
		if nodes > MaxSchemaNodes {
			return nil, fmt.Errorf("the manifest's schemas hold more than %d objects and booleans in all, this server's limit: share repeated parts through $defs", MaxSchemaNodes)
		}
		s, err := schema.Compile(raw)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %s: %w", spec.Name, which, err)
		}
		nodes += s.Nodes()
		return s, nil
	}
	for _, spec := range manifest.Tools {
		t := &Tool{Module: m, Spec: spec}
		if t.Input, err = compile(spec, "inputSchema", spec.InputSchema); err != nil {
			return nil, err
		}
		if len(spec.OutputSchema) > 0 {
			if t.Output, err = compile(spec, "outputSchema", spec.OutputSchema); err != nil {
				return nil, err
			}
		}
		tools = append(tools, t)
	}
	if nodes > MaxSchemaNodes {
		return nil, fmt.Errorf("the manifest's schemas hold %d objects and booleans in all; this server allows %d: share repeated parts through $defs", nodes, MaxSchemaNodes)
	}
	m.tools = tools
	for _, spec := range manifest.Resources {
		m.resources = append(m.resources, &Resource{Module: m, Spec: spec})
	}
	for _, spec := range manifest.ResourceTemplates {
		// The manifest's check parsed it already.
		match, err := uritemplate.New(spec.URITemplate)
		if err != nil {
			return nil, fmt.Errorf("resource template %q: %w", spec.URITemplate, err)
		}
		m.templates = append(m.templates, &Template{Module: m, Spec: spec, Match: match})
	}
	for _, spec := range manifest.Prompts {
		m.prompts = append(m.prompts, &Prompt{Module: m, Spec: spec})
	}
	if m.reader, err = entry(m, abi.EntryReadResource, needsReader(m)); err != nil {
		return nil, err
	}
	prompter, err := entry(m, abi.EntryGetPrompt, needsPrompter(m))
	if err != nil {
		return nil, err
	}
	if m.completer, err = entry(m, abi.EntryComplete, needsCompleter(m)); err != nil {
		return nil, err
	}
	for _, p := range m.prompts {
		if p.Spec.Messages == nil {
			p.Entry = prompter
		}
	}
	return m, nil
}

// findManifest prefers the sidecar file, so an author can edit a manifest
// without rebuilding; the custom section is the single-file fallback.
// data is the sidecar's content (empty, not nil, for an empty file), nil
// if there is none.
func findManifest(sidecar string, data []byte, parsed *wasmbin.Module) (m *abi.Manifest, from string, raw []byte, err error) {
	if data != nil {
		m, err := abi.ParseManifest(data)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", filepath.Base(sidecar), err)
		}
		return m, sidecar, data, nil
	}
	sections := parsed.CustomNamed(abi.CustomSection)
	switch len(sections) {
	case 0:
		return nil, "", nil, fmt.Errorf("no manifest: add %s beside it, or embed one with `wasmcp pack`", filepath.Base(sidecar))
	case 1:
		m, err := abi.ParseManifest(sections[0])
		if err != nil {
			return nil, "", nil, fmt.Errorf("embedded manifest: %w", err)
		}
		return m, "embedded", sections[0], nil
	default:
		return nil, "", nil, fmt.Errorf("%d %q custom sections; a module may embed one manifest", len(sections), abi.CustomSection)
	}
}

// sidecarOf is the sidecar manifest's path of the module at path.
func sidecarOf(path string) string {
	return strings.TrimSuffix(path, ".wasm") + abi.SidecarSuffix
}

// ReadModule reads a module file as Load does: a regular file of at most
// MaxModuleSize bytes.
func ReadModule(path string) ([]byte, error) { return ReadBounded(path, MaxModuleSize) }

// readRegular reads a regular file of at most limit bytes, and says what
// stat said of the file it opened before reading it. It refuses devices,
// FIFOs and sockets before opening them, because opening a FIFO blocks and
// reading a device may never end.
func readRegular(path string, limit int64) ([]byte, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	if fi.Size() > limit {
		return nil, nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", filepath.Base(path), fi.Size(), limit)
	}
	// O_NONBLOCK: if the file was swapped for a FIFO since Stat, open must
	// not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// The file opened, which is the one read: the path may name another
	// by now.
	if fi, err = f.Stat(); err != nil {
		return nil, nil, err
	}
	// Sized from Stat, so that a module is read in one go rather than
	// through a slice grown and copied a dozen times.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("%s grew past the %d-byte limit while being read", filepath.Base(path), limit)
	}
	return data, fi, nil
}

// Clamp resolves a manifest's limits against the server's ceilings: a zero
// field takes the ceiling, and a field above the ceiling is lowered to it
// and logged, since the operator's ceiling always wins.
func Clamp(asked abi.Limits, ceil sandbox.Limits, log *slog.Logger, path string) sandbox.Limits {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pick := func(field string, asked, ceiling int64, show func(int64) string) int64 {
		switch {
		case asked == 0:
			return ceiling
		case asked > ceiling:
			log.Warn("manifest limit above the server's ceiling; clamped", "file", path, "limit", field, "asked", show(asked), "ceiling", show(ceiling))
			return ceiling
		}
		return asked
	}
	size := func(n int64) string { return abi.Size(n).String() }
	return sandbox.Limits{
		Timeout: time.Duration(pick("timeout", int64(asked.Timeout), int64(ceil.Timeout), func(n int64) string { return time.Duration(n).String() })),
		Memory:  pick("memory", int64(asked.Memory), ceil.Memory, size),
		Output:  pick("output", int64(asked.Output), ceil.Output, size),
	}
}

// ReadBounded reads a regular file of at most limit bytes, as Load reads
// a module's files.
func ReadBounded(path string, limit int64) ([]byte, error) {
	data, _, err := readRegular(path, limit)
	return data, err
}
