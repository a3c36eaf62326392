// Package catalog loads a directory of tool modules: it finds each module's
// manifest, checks it, compiles its schemas and indexes its tools by name. It
// reads and parses but never compiles Wasm, so a catalog is ready as soon as
// the files are read; compiling is left to the module, on demand.
package registry

import (
	"bytes"
	"cmp"
	"context"
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
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/observe"
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

// Module is one loaded .wasm file.
type Module struct {
	// Path is the module's file.
	Path string
	// Stem is the file name without ".wasm"; it is argv[0] of every run.
	Stem string
	// SHA256 is the hex digest of the module's bytes.
	SHA256 string
	// Size is the module file's size in bytes.
	Size int
	// ManifestFrom says where the manifest came from: the sidecar's path, or
	// "embedded" for the custom section.
	ManifestFrom string
	// Manifest is the module's checked manifest.
	Manifest *abi.Manifest
	// Limits are the module's effective limits: its manifest's, clamped to
	// the server's ceilings.
	Limits sandbox.Limits

	// key identifies the module's content: its bytes and its sidecar's. A
	// reload keeps a module whose key is unchanged, compiled code and all.
	key      string
	tools    []*Tool
	observer observe.Observer
	log      *slog.Logger

	wasm    []byte
	engine  *sandbox.Engine
	once    sync.Once
	done    chan struct{}
	program *sandbox.Compiled
	err     error

	// users counts runs in progress; a retired module's code is freed when
	// the last one ends.
	mu      sync.Mutex
	users   int
	retired bool
	freed   bool
}

// Acquire marks the start of a run. It returns false once the module has
// been retired and freed: the caller then looks the tool up again, and runs
// the version that replaced it.
func (m *Module) Acquire() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return false
	}
	m.users++
	return true
}

// Release marks the end of a run begun with Acquire.
func (m *Module) Release() {
	m.mu.Lock()
	m.users--
	free := m.retired && m.users == 0 && !m.freed
	if free {
		m.freed = true
	}
	m.mu.Unlock()
	if free {
		m.free()
	}
}

// retire frees the module's compiled code once no run uses it. Runs
// already going finish on it; later lookups find its successor.
func (m *Module) retire() {
	m.mu.Lock()
	m.retired = true
	free := m.users == 0 && !m.freed
	if free {
		m.freed = true
	}
	m.mu.Unlock()
	if free {
		m.free()
	}
}

func (m *Module) free() {
	// A compilation still running finishes first; its result is then freed.
	go func() {
		m.once.Do(func() { close(m.done) })
		<-m.done
		if m.program != nil {
			_ = m.program.Close(context.Background())
		}
	}()
}

// Compiled returns the compiled module, compiling it on first use. Calls
// that arrive during compilation wait for it, or for ctx.
func (m *Module) Compiled(ctx context.Context) (*sandbox.Compiled, error) {
	m.once.Do(func() {
		go func() {
			defer close(m.done)
			m.log.Debug("compiling module", "file", m.Path, "size", m.Size)
			start := time.Now()
			// The compilation is the module's, shared by every call that
			// waits for it: no one caller's context may end it. The engine
			// bounds it.
			m.program, m.err = m.engine.Compile(context.Background(), m.wasm)
			d := time.Since(start)
			m.observer.Compiled(m.Path, d, m.err)
			if m.err == nil {
				m.log.Debug("module compiled", "file", m.Path, "duration", d)
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
	// Observer is told of compilations; nil means observe.Nop.
	Observer observe.Observer
}

// Load reads every *.wasm file directly in dir (not in subdirectories). A
// file that cannot be loaded is recorded in Errors and logged; it never
// stops the others. Files are taken in lexical order, and when two modules
// declare the same tool name the first keeps it: the rule is deterministic
// and visible from a directory listing.
func Load(dir string, opts Options) (*Catalog, error) {
	c, _, err := Reload(nil, dir, opts)
	return c, err
}

// Reload reads dir again, as Load does, against the catalog now serving.
// A module whose bytes and sidecar are unchanged is kept as it is, compiled
// code included. A module that no longer loads keeps serving its previous
// version, and the error is recorded: a broken update must not take down a
// working tool. Reload returns the modules of prev that the new catalog no
// longer uses, for Retire once the new catalog is in service.
func Reload(prev *Catalog, dir string, opts Options) (*Catalog, []*Module, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading tool directory: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	previous := map[string]*Module{}
	if prev != nil {
		for _, m := range prev.Modules {
			previous[m.Path] = m
		}
	}
	c := &Catalog{byName: map[string]*Tool{}}
	kept := map[*Module]bool{}
	for _, e := range entries { // ReadDir sorts by file name
		if !strings.HasSuffix(e.Name(), ".wasm") || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		old := previous[path]
		m, _, err := LoadFile(path, opts)
		switch {
		case err != nil && old != nil:
			err = fmt.Errorf("the new version does not load, so the previous one (sha256 %s) keeps serving: %w", old.SHA256[:12], err)
			log.Warn("keeping the previous version of a module", "file", path, "reason", err)
			c.Errors = append(c.Errors, LoadError{Path: path, Err: err})
			m = old
		case err != nil:
			log.Warn("skipping module", "file", path, "reason", err)
			c.Errors = append(c.Errors, LoadError{Path: path, Err: err})
			continue
		case old != nil && old.key == m.key:
			m = old
		default:
			log.Info("loaded module", "file", path, "manifest", m.ManifestFrom, "tools", len(m.tools), "sha256", m.SHA256[:12])
		}
		kept[m] = true
		c.add(m, log)
	}
	sort.Slice(c.Tools, func(i, j int) bool { return c.Tools[i].Spec.Name < c.Tools[j].Spec.Name })
	var unused []*Module
	if prev != nil {
		for _, m := range prev.Modules {
			if !kept[m] {
				unused = append(unused, m)
			}
		}
	}
	return c, unused, nil
}

// add serves a module's tools, leaving out names an earlier file claimed.
func (c *Catalog) add(m *Module, log *slog.Logger) {
	c.Modules = append(c.Modules, m)
	for _, t := range m.tools {
		if prev, dup := c.byName[t.Spec.Name]; dup {
			err := fmt.Errorf("tool %q is already provided by %s; this one is not served", t.Spec.Name, prev.Module.Path)
			log.Warn("duplicate tool name", "file", m.Path, "tool", t.Spec.Name, "kept", prev.Module.Path)
			c.Errors = append(c.Errors, LoadError{Path: m.Path, Err: err})
			continue
		}
		c.byName[t.Spec.Name] = t
		c.Tools = append(c.Tools, t)
	}
}

// Retire frees modules that Reload reported unused, each once the runs
// still using it have ended.
func Retire(modules []*Module) {
	for _, m := range modules {
		m.retire()
	}
}

// Warm compiles every module in the background, one at a time and the
// smallest first, so that first calls rarely wait: small modules compile in
// milliseconds, and one large module (or a hostile one, until its bound
// stops it) does not keep the rest waiting. It returns at once, with a
// channel closed when it is done; it stops early when ctx ends.
func (c *Catalog) Warm(ctx context.Context, log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	modules := slices.Clone(c.Modules)
	slices.SortStableFunc(modules, func(a, b *Module) int { return cmp.Compare(a.Size, b.Size) })
	go func() {
		defer close(done)
		for _, m := range modules {
			if _, err := m.Compiled(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Warn("module does not compile", "file", m.Path, "reason", err)
			}
		}
	}()
	return done
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
	manifest, from, manifestBytes, err := findManifest(path, stem, parsed)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(wasm)
	key := sha256.New()
	key.Write(sum[:])
	key.Write([]byte(from))
	key.Write(manifestBytes)
	observer := opts.Observer
	if observer == nil {
		observer = observe.Nop{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Module{
		log:          log,
		Path:         path,
		Stem:         stem,
		SHA256:       hex.EncodeToString(sum[:]),
		Size:         len(wasm),
		ManifestFrom: from,
		Manifest:     manifest,
		Limits:       Clamp(manifest.Limits, opts.Ceilings, opts.Logger, path),
		key:          hex.EncodeToString(key.Sum(nil)),
		observer:     observer,
		wasm:         wasm,
		engine:       opts.Engine,
		done:         make(chan struct{}),
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
			return nil, nil, err
		}
		if len(spec.OutputSchema) > 0 {
			if t.Output, err = compile(spec, "outputSchema", spec.OutputSchema); err != nil {
				return nil, nil, err
			}
		}
		tools = append(tools, t)
	}
	if nodes > MaxSchemaNodes {
		return nil, nil, fmt.Errorf("the manifest's schemas hold %d objects and booleans in all; this server allows %d: share repeated parts through $defs", nodes, MaxSchemaNodes)
	}
	m.tools = tools
	return m, tools, nil
}

// findManifest prefers the sidecar file, so an author can edit a manifest
// without rebuilding; the custom section is the single-file fallback.
func findManifest(path, stem string, parsed *wasmbin.Module) (m *abi.Manifest, from string, raw []byte, err error) {
	sidecar := filepath.Join(filepath.Dir(path), stem+abi.SidecarSuffix)
	data, err := readRegular(sidecar, abi.MaxManifestSize)
	switch {
	case err == nil:
		m, err := abi.ParseManifest(data)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: %w", filepath.Base(sidecar), err)
		}
		return m, sidecar, data, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", nil, err
	}
	sections := parsed.CustomNamed(abi.CustomSection)
	switch len(sections) {
	case 0:
		return nil, "", nil, fmt.Errorf("no manifest: add %s beside it, or embed one with `wasmcp pack`", stem+abi.SidecarSuffix)
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
	// Sized from Stat, so that a module is read in one go rather than
	// through a slice grown and copied a dozen times.
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
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
