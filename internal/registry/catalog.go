package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/wasmcp/wasmcp/internal/policy"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// Catalog is what a registry serves at one time: the modules of its tool
// directory, their tools, the policy that grants them what they ask for,
// and what failed to load. A catalog never changes; a reload puts a new one
// in service.
type Catalog struct {
	// Modules are the loaded modules, by file name.
	Modules []*Module
	// Tools are every served tool, sorted by name.
	Tools []*Tool
	// Resources are every served resource, sorted by URI.
	Resources []*Resource
	// Templates are every served resource template, sorted by template.
	Templates []*Template
	// Prompts are every served prompt, sorted by name.
	Prompts []*Prompt
	// Policy is the operator's grants; nil grants nothing.
	Policy *policy.Policy
	// Errors lists skipped files and skipped tools, and a policy file that
	// did not load.
	Errors []LoadError

	byName     map[string]*Tool
	byURI      map[string]*Resource
	byTemplate map[string]*Template
	byPrompt   map[string]*Prompt
	spaces     spaces
	policyHash string // of the policy file's content, "" without one
	// loads are what loading each file gave, by path, for the files whose
	// stamp may hold at the next reload (see scan).
	loads map[string]loaded
	// sigs are the signatures of the version serving from each file, by
	// path: a later policy verifies them again.
	sigs map[string]*signatures
}

// LoadError records a file that was skipped, and why.
type LoadError struct {
	Path string
	Err  error
}

func (e LoadError) Error() string { return e.Path + ": " + e.Err.Error() }

// Lookup returns the tool with the given name.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Resource returns the resource with the given URI.
func (c *Catalog) Resource(uri string) (*Resource, bool) {
	r, ok := c.byURI[uri]
	return r, ok
}

// Template returns the resource template with the given uriTemplate.
func (c *Catalog) Template(uriTemplate string) (*Template, bool) {
	t, ok := c.byTemplate[uriTemplate]
	return t, ok
}

// add serves a module's tools, resources, resource templates and prompts,
// leaving out names an earlier file claimed and URIs an earlier file
// serves.
func (c *Catalog) add(m *Module, log *slog.Logger) {
	c.Modules = append(c.Modules, m)
	for _, t := range m.tools {
		if claim(c, c.byName, t.Spec.Name, t, "tool", log) {
			c.Tools = append(c.Tools, t)
		}
	}
	for _, r := range m.resources {
		if c.spaces.claim(c, m, r.Spec.URI, false, "resource", log) {
			c.byURI[r.Spec.URI] = r
			c.Resources = append(c.Resources, r)
		}
	}
	for _, t := range m.templates {
		if c.spaces.claim(c, m, t.Spec.URITemplate, true, "resource template", log) {
			c.byTemplate[t.Spec.URITemplate] = t
			c.Templates = append(c.Templates, t)
		}
	}
	for _, p := range m.prompts {
		if claim(c, c.byPrompt, p.Spec.Name, p, "prompt", log) {
			c.Prompts = append(c.Prompts, p)
		}
	}
}

// claim serves v under key unless an earlier file's item has the key, which
// is recorded as the later file's load error naming both files.
func claim[T interface{ module() *Module }](c *Catalog, served map[string]T, key string, v T, kind string, log *slog.Logger) bool {
	if prev, dup := served[key]; dup {
		path := v.module().Path
		err := fmt.Errorf("%s %q is already provided by %s; this one is not served", kind, key, prev.module().Path)
		log.Warn("duplicate "+kind, "file", path, "name", key, "kept", prev.module().Path)
		c.Errors = append(c.Errors, LoadError{Path: path, Err: err})
		return false
	}
	served[key] = v
	return true
}

// Warm compiles every module in the background, one at a time, so that
// first calls rarely wait: those whose code is in the compilation cache
// first (they only load, in milliseconds), then the smallest first, so
// that one large module (or a hostile one, until its bound stops it) does
// not keep the rest waiting. These compilations are made ahead of need: a
// call's module compiles before them, and in the slot of one of them if it
// must (sandbox.CompileOptions), so a slow module delays only the warm-up.
// It returns at once, with a channel closed when it is done; it stops
// early when ctx ends.
func (c *Catalog) Warm(ctx context.Context, log *slog.Logger) <-chan struct{} {
	done := make(chan struct{})
	modules := slices.Clone(c.Modules)
	slices.SortStableFunc(modules, func(a, b *Module) int {
		if a.cached != b.cached {
			if a.cached {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Size, b.Size)
	})
	go func() {
		defer close(done)
		for _, m := range modules {
			if err := m.warm(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				if errors.Is(err, sandbox.ErrStopped) {
					continue // a reload retired it
				}
				log.Warn("module does not compile", "file", m.Path, "reason", err)
			}
		}
	}()
	return done
}
