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
	// Policy is the operator's grants; nil grants nothing.
	Policy *policy.Policy
	// Errors lists skipped files and skipped tools, and a policy file that
	// did not load.
	Errors []LoadError

	byName     map[string]*Tool
	policyHash string // of the policy file's content, "" without one
	// loads are what loading each file gave, by path, for the files whose
	// stamp may hold at the next reload (see scan).
	loads map[string]loaded
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
