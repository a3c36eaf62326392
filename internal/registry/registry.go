// Package registry owns the modules a server serves. It loads a tool
// directory and the operator's policy into a Catalog, keeps one catalog in
// service, counts the runs that use each module, and on each reload works
// out a plan from what serves now and what the directory and the policy
// file hold (plan), puts the result in service at once, and frees the
// modules no longer served once their last run ends.
//
// Loading reads and checks every file and compiles schemas, but never
// compiles Wasm, so a catalog is ready as soon as the files are read;
// compiling is each module's, on demand (Module.Compiled) or ahead
// (Catalog.Warm).
package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/policy"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// Options configure a Registry.
type Options struct {
	// Dir is the tool directory: every *.wasm file directly in it (not in
	// subdirectories) is a module.
	Dir string
	// PolicyFile grants tools files, environment, network and secrets;
	// "" grants nothing.
	PolicyFile string
	// Sources, when set, gives the directories that tool sources (OCI
	// references) fill, read at each load after Dir. Their modules are
	// served as Dir's are, granted by stem as Dir's are; a stem that Dir
	// or an earlier source serves is refused.
	Sources func() []Source
	LoadOptions
}

// Source is a directory of modules that a tool source fills.
type Source struct {
	// Name names the source in errors: its reference.
	Name string
	// Dir is its directory, "" while it has none.
	Dir string
	// Err, when not nil, says why the source could not be brought up to
	// date; it is recorded in the catalog's Errors under Name.
	Err error
}

// LoadOptions configure how one module file loads.
type LoadOptions struct {
	Engine *sandbox.Engine
	// Ceilings are the server's limits; a manifest may only lower them.
	Ceilings sandbox.Limits
	Logger   *slog.Logger
	// Observer is told of compilations, loads and reloads; nil means
	// observe.Nop.
	Observer observe.Observer
}

func (o LoadOptions) withDefaults() LoadOptions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Observer == nil {
		o.Observer = observe.Nop{}
	}
	return o
}

// Registry holds the catalog in service.
type Registry struct {
	opts    Options
	current atomic.Pointer[Catalog]

	mu       sync.Mutex // one reload at a time
	onChange []func(Change)
	// snapshotting counts the snapshots a reload is making again.
	snapshotting sync.WaitGroup
}

// Change is a catalog put in service.
type Change struct {
	// Old is the catalog it replaced, New the one now serving.
	Old, New *Catalog
	// Unused are the modules of Old that New does not serve. They are
	// freed once their last run ends; whoever holds one (a prepared
	// instance) should let go.
	Unused []*Module
}

// PolicyChanged reports whether New grants from another policy than Old:
// what was worked out from Old's (an instance prepared with its mounts and
// environment) no longer holds.
func (c Change) PolicyChanged() bool { return c.Old.Policy != c.New.Policy }

// Open loads the directory and the policy file. It fails when the
// directory cannot be read or the policy does not load; a module that does
// not load is recorded in the catalog's Errors and logged, never fatal.
func Open(opts Options) (*Registry, error) {
	opts.LoadOptions = opts.LoadOptions.withDefaults()
	r := &Registry{opts: opts}
	files, refused, err := r.scanAll(nil)
	if err != nil {
		return nil, err
	}
	pol := readPolicy(opts.PolicyFile)
	if pol.err != nil {
		return nil, pol.err
	}
	cat, _ := plan(nil, files, pol, opts.Logger)
	cat.Errors = append(cat.Errors, refused...)
	r.current.Store(cat)
	opts.Observer.Loaded(len(cat.Modules), len(cat.Errors))
	return r, nil
}

// Ceilings returns the server's limits, which no module's exceed.
func (r *Registry) Ceilings() sandbox.Limits { return r.opts.Ceilings }

// Current returns the catalog in service.
func (r *Registry) Current() *Catalog { return r.current.Load() }

// ErrUnknownTool is returned by Acquire for a name no module provides.
var ErrUnknownTool = errors.New("unknown tool")

// Acquire finds a tool in the catalog in service and holds its module for
// a run: the caller releases it (t.Module.Release) when the run ends. A
// module freed by a reload between the lookup and the hold means that its
// successor is in service, so the lookup is repeated. The catalog returned
// is the one the tool was found in, whose policy grants the run.
func (r *Registry) Acquire(name string) (*Catalog, *Tool, error) {
	for {
		cat := r.current.Load()
		t, ok := cat.Lookup(name)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
		}
		if t.Module.Acquire() {
			return cat, t, nil
		}
	}
}

// OnChange registers f to be called after each reload that put a new
// catalog in service, before its unused modules are retired.
func (r *Registry) OnChange(f func(Change)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onChange = append(r.onChange, f)
}

// Reload reads the directory and the policy file again, and puts what plan
// makes of them in service. Calls already running finish on the modules
// they started with. It fails, changing nothing, only when the directory
// cannot be read.
func (r *Registry) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.current.Load()
	files, refused, err := r.scanAll(old)
	r.opts.Observer.Reloaded(err)
	if err != nil {
		return err
	}
	cat, unused := plan(old, files, readPolicy(r.opts.PolicyFile), r.opts.Logger)
	cat.Errors = append(cat.Errors, refused...)
	r.current.Store(cat)
	r.opts.Observer.Loaded(len(cat.Modules), len(cat.Errors))
	change := Change{Old: old, New: cat, Unused: unused}
	if change.PolicyChanged() {
		// A snapshot is remade whenever the grants change, although its
		// start-up sees none of them (docs/design.md, "Snapshots"): so
		// that nothing made under old grants outlives them, whatever a
		// start-up may see one day.
		for _, m := range cat.Modules {
			r.snapshotting.Go(m.resnapshot)
		}
	}
	for _, f := range r.onChange {
		f(change)
	}
	for _, m := range unused {
		m.retire()
	}
	return nil
}

// scanAll scans the tool directory, then each source's. A source's module
// whose stem is served already is left out, and recorded as refused: a
// stem names one module, the one the policy grants by that name. So is a
// source that failed, or whose directory cannot be read; only the tool
// directory's failing to be read fails the scan.
func (r *Registry) scanAll(prev *Catalog) (files []loaded, refused []LoadError, err error) {
	files, err = scan(r.opts.Dir, r.opts.LoadOptions, prev)
	if err != nil || r.opts.Sources == nil {
		return files, nil, err
	}
	servedBy := map[string]string{}
	for _, f := range files {
		servedBy[stemOf(f.path)] = f.path
	}
	for _, src := range r.opts.Sources() {
		if src.Err != nil {
			refused = append(refused, LoadError{Path: src.Name, Err: src.Err})
		}
		if src.Dir == "" {
			continue
		}
		more, err := scan(src.Dir, r.opts.LoadOptions, prev)
		if err != nil {
			refused = append(refused, LoadError{Path: src.Name, Err: err})
			continue
		}
		for _, f := range more {
			stem := stemOf(f.path)
			if other, dup := servedBy[stem]; dup {
				err := fmt.Errorf("module %q of %s is not served: %s is served under that name already; rename one of them", stem, src.Name, other)
				r.opts.Logger.Warn("duplicate module", "file", f.path, "source", src.Name, "kept", other)
				refused = append(refused, LoadError{Path: f.path, Err: err})
				continue
			}
			servedBy[stem] = f.path
			files = append(files, f)
		}
	}
	return files, refused, nil
}

// stemOf is the stem of a module's path.
func stemOf(path string) string { return strings.TrimSuffix(filepath.Base(path), ".wasm") }

// scan loads every *.wasm file directly in dir, in parallel: reading and
// walking modules is most of the time a load takes, and files are
// independent. A file whose load in prev has a stamp that still holds
// (see stamp) is not read again: it gives what it gave then, so a reload
// reads only what changed, however large the directory.
func scan(dir string, opts LoadOptions, prev *Catalog) ([]loaded, error) {
	opts = opts.withDefaults()
	start := time.Now()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading tool directory: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".wasm") && !e.IsDir() {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	var loads map[string]loaded
	if prev != nil {
		loads = prev.loads
	}
	files := make([]loaded, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Go(func() {
			for i := range next {
				path := paths[i]
				if l, ok := loads[path]; ok && l.stamp.holds(path, opts) {
					l.reused = true
					files[i] = l
					continue
				}
				m, st, sigs, err := loadFile(path, opts)
				files[i] = loaded{path: path, m: m, err: err, stamp: st, sigs: sigs}
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	unchanged := 0
	for _, f := range files {
		if f.reused {
			unchanged++
		}
	}
	opts.Logger.Debug("read the tool directory", "dir", dir, "files", len(files), "unchanged", unchanged, "duration", time.Since(start))
	return files, nil
}

// maxPolicySize bounds a policy file: policies are a few KiB.
const maxPolicySize = 1 << 20

// readPolicy reads the policy file, if there is one.
func readPolicy(path string) policyRead {
	if path == "" {
		return policyRead{}
	}
	data, _, err := readRegular(path, maxPolicySize)
	if err != nil {
		return policyRead{path: path, err: fmt.Errorf("policy: %w", err)}
	}
	p, err := policy.Load(path)
	// The keys count with the file's content: a key file it names may
	// change while it does not.
	sum := sha256.New()
	sum.Write(data)
	for _, k := range p.Keys() {
		fmt.Fprintf(sum, "\n%s=%s", k.Name, k.Key)
	}
	return policyRead{path: path, p: p, hash: hex.EncodeToString(sum.Sum(nil)), err: err}
}
