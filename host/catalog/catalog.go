// Package catalog loads a directory of tool modules: it finds each module's
// manifest, checks it, compiles its schemas and indexes its tools by name. It
// reads and parses but never compiles Wasm, so a catalog is ready as soon as
// the files are read; compiling is left to the module, on demand.
package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host/sandbox"
	"github.com/wasmcp/wasmcp/host/schema"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// MaxModuleSize bounds a module file. The largest real tools (Go guests) are
// a few MiB; the bound keeps a stray disk image in the directory from being
// read into memory.
const MaxModuleSize = 64 << 20

// Module is one loaded .wasm file.
type Module struct {
	// Path is the module's file.
	Path string
	// Stem is the file name without ".wasm"; it is argv[0] of every run.
	Stem string
	// SHA256 is the hex digest of the module's bytes.
	SHA256 string
	// ManifestFrom says where the manifest came from: the sidecar's path, or
	// "embedded" for the custom section.
	ManifestFrom string
	// Manifest is the module's checked manifest.
	Manifest *abi.Manifest
	// Limits are the module's effective limits: its manifest's, clamped to
	// the server's ceilings.
	Limits sandbox.Limits

	wasm    []byte
	engine  *sandbox.Engine
	once    sync.Once
	done    chan struct{}
	program *sandbox.Compiled
	err     error
}

// Compiled returns the compiled module, compiling it on first use. Calls
// that arrive during compilation wait for it, or for ctx.
func (m *Module) Compiled(ctx context.Context) (*sandbox.Compiled, error) {
	m.once.Do(func() {
		go func() {
			defer close(m.done)
			m.program, m.err = m.engine.Compile(context.Background(), m.wasm)
			if m.err == nil {
				m.wasm = nil // the compiled form is all that is needed now
			}
		}()
	})
	select {
	case <-m.done:
		return m.program, m.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Tool is one tool of a module, with its schemas compiled.
type Tool struct {
	Module *Module
	Spec   abi.Tool
	Input  *schema.Schema
	Output *schema.Schema // nil when the tool declares no outputSchema
}

// LoadError records a file that was skipped, and why.
type LoadError struct {
	Path string
	Err  error
}

func (e LoadError) Error() string { return e.Path + ": " + e.Err.Error() }

// Catalog is the loaded contents of a tool directory.
type Catalog struct {
	// Modules are the loaded modules, by file name.
	Modules []*Module
	// Tools are every served tool, sorted by name.
	Tools []*Tool
	// Errors lists skipped files and skipped tools.
	Errors []LoadError

	byName map[string]*Tool
}

// Lookup returns the tool with the given name.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Options configure Load.
type Options struct {
	Engine *sandbox.Engine
	// Ceilings are the server's limits; a manifest may only lower them.
	Ceilings sandbox.Limits
	Logger   *slog.Logger
}

// Load reads every *.wasm file directly in dir (not in subdirectories). A
// file that cannot be loaded is recorded in Errors and logged; it never
// stops the others. Files are taken in lexical order, and when two modules
// declare the same tool name the first keeps it: the rule is deterministic
// and visible from a directory listing.
func Load(dir string, opts Options) (*Catalog, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading tool directory: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Catalog{byName: map[string]*Tool{}}
	for _, e := range entries { // ReadDir sorts by file name
		if !strings.HasSuffix(e.Name(), ".wasm") || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		m, tools, err := LoadFile(path, opts)
		if err != nil {
			log.Warn("skipping module", "file", path, "reason", err)
			c.Errors = append(c.Errors, LoadError{Path: path, Err: err})
			continue
		}
		c.Modules = append(c.Modules, m)
		for _, t := range tools {
			if prev, dup := c.byName[t.Spec.Name]; dup {
				err := fmt.Errorf("tool %q is already provided by %s; this one is not served", t.Spec.Name, prev.Module.Path)
				log.Warn("duplicate tool name", "file", path, "tool", t.Spec.Name, "kept", prev.Module.Path)
				c.Errors = append(c.Errors, LoadError{Path: path, Err: err})
				continue
			}
			c.byName[t.Spec.Name] = t
			c.Tools = append(c.Tools, t)
		}
		log.Info("loaded module", "file", path, "manifest", m.ManifestFrom, "tools", len(tools), "sha256", m.SHA256[:12])
	}
	sort.Slice(c.Tools, func(i, j int) bool { return c.Tools[i].Spec.Name < c.Tools[j].Spec.Name })
	return c, nil
}

// Warm compiles every module in the background, one at a time, so that first
// calls rarely wait. It returns at once; compilation stops early when ctx
// ends.
func (c *Catalog) Warm(ctx context.Context, log *slog.Logger) {
	go func() {
		for _, m := range c.Modules {
			if _, err := m.Compiled(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Warn("module does not compile", "file", m.Path, "reason", err)
			}
		}
	}()
}

// LoadFile loads one module file and its manifest, as Load does for each
// file of a directory.
func LoadFile(path string, opts Options) (*Module, []*Tool, error) {
	wasm, err := ReadModule(path)
	if err != nil {
		return nil, nil, err
	}
	parsed, err := wasmbin.Parse(wasm)
	if err != nil {
		return nil, nil, err
	}
	if err := opts.Engine.CheckModule(parsed); err != nil {
		return nil, nil, err
	}
	stem := strings.TrimSuffix(filepath.Base(path), ".wasm")
	manifest, from, err := findManifest(path, stem, parsed)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(wasm)
	m := &Module{
		Path:         path,
		Stem:         stem,
		SHA256:       hex.EncodeToString(sum[:]),
		ManifestFrom: from,
		Manifest:     manifest,
		Limits:       Clamp(manifest.Limits, opts.Ceilings, opts.Logger, path),
		wasm:         wasm,
		engine:       opts.Engine,
		done:         make(chan struct{}),
	}
	tools := make([]*Tool, 0, len(manifest.Tools))
	for _, spec := range manifest.Tools {
		t := &Tool{Module: m, Spec: spec}
		if t.Input, err = schema.Compile(spec.InputSchema); err != nil {
			return nil, nil, fmt.Errorf("tool %q: inputSchema: %w", spec.Name, err)
		}
		if len(spec.OutputSchema) > 0 {
			if t.Output, err = schema.Compile(spec.OutputSchema); err != nil {
				return nil, nil, fmt.Errorf("tool %q: outputSchema: %w", spec.Name, err)
			}
		}
		tools = append(tools, t)
	}
	return m, tools, nil
}

// findManifest prefers the sidecar file, so an author can edit a manifest
// without rebuilding; the custom section is the single-file fallback.
func findManifest(path, stem string, parsed *wasmbin.Module) (*abi.Manifest, string, error) {
	sidecar := filepath.Join(filepath.Dir(path), stem+abi.SidecarSuffix)
	data, err := readRegular(sidecar, abi.MaxManifestSize)
	switch {
	case err == nil:
		m, err := abi.ParseManifest(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", filepath.Base(sidecar), err)
		}
		return m, sidecar, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", err
	}
	sections := parsed.CustomNamed(abi.CustomSection)
	switch len(sections) {
	case 0:
		return nil, "", fmt.Errorf("no manifest: add %s beside it, or embed one with `wasmcp pack`", stem+abi.SidecarSuffix)
	case 1:
		m, err := abi.ParseManifest(sections[0])
		if err != nil {
			return nil, "", fmt.Errorf("embedded manifest: %w", err)
		}
		return m, "embedded", nil
	default:
		return nil, "", fmt.Errorf("%d %q custom sections; a module may embed one manifest", len(sections), abi.CustomSection)
	}
}

// ReadModule reads a module file as Load does: a regular file of at most
// MaxModuleSize bytes.
func ReadModule(path string) ([]byte, error) { return readRegular(path, MaxModuleSize) }

// readRegular reads a regular file of at most limit bytes. It refuses
// devices, FIFOs and sockets before opening them, because opening a FIFO
// blocks and reading a device may never end.
func readRegular(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit", filepath.Base(path), fi.Size(), limit)
	}
	// O_NONBLOCK: if the file was swapped for a FIFO since Stat, open must
	// not hang.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past the %d-byte limit while being read", filepath.Base(path), limit)
	}
	return data, nil
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
