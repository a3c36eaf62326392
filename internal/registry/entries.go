package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/schema"
)

// Read is what reading one URI takes.
type Read struct {
	// Resource is the declared resource at the URI; nil for a URI a
	// template matched.
	Resource *Resource
	// Template is the template that matched the URI, when no resource is
	// declared at it.
	Template *Template
	// Entry is the module's resources/read entry point, run as a tool is;
	// nil when the resource's contents are in its manifest.
	Entry *Tool
	// Arguments are the template's variables, as the URI gave them.
	Arguments map[string]any
}

// MIMEType is the MIME type the resource or template declares.
func (r Read) MIMEType() string {
	if r.Resource != nil {
		return r.Resource.Spec.MIMEType
	}
	return r.Template.Spec.MIMEType
}

// entrySchema is the input schema of every module's entry points other
// than tools: the host writes their stdin, so it only documents it.
var entrySchema = sync.OnceValues(func() (*schema.Schema, error) {
	return schema.Compile(json.RawMessage(`{"type":"object"}`))
})

// entry returns a module's entry point of the given name (abi.EntryReadResource,
// abi.EntryGetPrompt), run as a tool whose output is a JSON object; nil
// when the module's manifest does not need it.
func entry(m *Module, name string, needed bool) (*Tool, error) {
	if !needed {
		return nil, nil
	}
	input, err := entrySchema()
	if err != nil {
		return nil, fmt.Errorf("compiling the schema of %s: %w", name, err)
	}
	return &Tool{Module: m, Input: input, Spec: abi.Tool{Name: name, Description: "the module's " + name, Output: abi.OutputJSON}}, nil
}

// needsReader says whether the module has resources whose contents its
// manifest lacks.
func needsReader(m *Module) bool {
	needed := len(m.templates) > 0
	for _, r := range m.resources {
		needed = needed || !r.Spec.Static()
	}
	return needed
}

// needsPrompter says whether the module has prompts that are not templates.
func needsPrompter(m *Module) bool {
	for _, p := range m.prompts {
		if p.Spec.Messages == nil {
			return true
		}
	}
	return false
}

// needsCompleter says whether a prompt or template of the module has the
// module complete it.
func needsCompleter(m *Module) bool {
	for _, p := range m.prompts {
		if p.Spec.Complete == abi.CompleteModule {
			return true
		}
	}
	for _, t := range m.templates {
		if t.Spec.Complete == abi.CompleteModule {
			return true
		}
	}
	return false
}

// Completion is what completing one prompt argument or template variable
// takes: the values its manifest declares, or its module's entry point.
type Completion struct {
	// Values are the declared values; none for one that declares none.
	Values []string
	// Entry is the module's completion/complete entry point, for an
	// argument or variable that declares no values of a prompt or template
	// the module completes; nil otherwise.
	Entry *Tool
}

// ErrNoCompletionRef is the error of FindCompletion for a prompt or
// template that is not served.
var ErrNoCompletionRef = errors.New("not served")

// FindCompletion finds what completing the argument name of the prompt
// key (prompt true) or the variable name of the resource template key
// takes. An argument or variable the prompt or template does not have has
// no values and runs nothing: a client's guess never starts a module.
func (c *Catalog) FindCompletion(prompt bool, key, name string) (Completion, error) {
	if prompt {
		p, ok := c.Prompt(key)
		if !ok {
			return Completion{}, fmt.Errorf("prompt %q: %w", key, ErrNoCompletionRef)
		}
		for _, a := range p.Spec.Arguments {
			if a.Name != name {
				continue
			}
			if len(a.Completions) == 0 && p.Spec.Complete == abi.CompleteModule {
				return Completion{Entry: p.Module.completer}, nil
			}
			return Completion{Values: a.Completions}, nil
		}
		return Completion{}, nil
	}
	t, ok := c.Template(key)
	if !ok {
		return Completion{}, fmt.Errorf("resource template %q: %w", key, ErrNoCompletionRef)
	}
	if values := t.Spec.Completions[name]; len(values) > 0 || t.Spec.Complete != abi.CompleteModule || !slices.Contains(t.Match.Varnames(), name) {
		return Completion{Values: values}, nil
	}
	return Completion{Entry: t.Module.completer}, nil
}

// AcquireCompletion is FindCompletion in the catalog in service; when the
// completion runs a module, the module is held as Acquire does, and the
// caller releases it (Entry.Module.Release) when the run ends.
func (r *Registry) AcquireCompletion(prompt bool, key, name string) (*Catalog, Completion, error) {
	for {
		cat := r.current.Load()
		c, err := cat.FindCompletion(prompt, key, name)
		if err != nil || c.Entry == nil || c.Entry.Module.Acquire() {
			return cat, c, err
		}
	}
}

// FindRead finds what reading uri takes: a declared resource first, then
// the first template, in the order of Templates, that matches it.
func (c *Catalog) FindRead(uri string) (Read, bool) {
	if r, ok := c.byURI[uri]; ok {
		rd := Read{Resource: r}
		if !r.Spec.Static() {
			rd.Entry, rd.Arguments = r.Module.reader, map[string]any{}
		}
		return rd, true
	}
	for _, t := range c.Templates {
		if !t.Match.Regexp().MatchString(uri) {
			continue
		}
		args := map[string]any{}
		for name, v := range t.Match.Match(uri) {
			if list := v.List(); len(list) > 1 {
				args[name] = list
			} else {
				args[name] = v.String()
			}
		}
		return Read{Template: t, Entry: t.Module.reader, Arguments: args}, true
	}
	return Read{}, false
}

// AcquireRead finds what reading uri takes in the catalog in service and,
// when that runs a module, holds the module as Acquire does: the caller
// then releases it (Entry.Module.Release) when the run ends.
func (r *Registry) AcquireRead(uri string) (*Catalog, Read, bool) {
	for {
		cat := r.current.Load()
		rd, ok := cat.FindRead(uri)
		if !ok {
			return nil, Read{}, false
		}
		if rd.Entry == nil || rd.Entry.Module.Acquire() {
			return cat, rd, true
		}
	}
}

// Prompt is one prompt a module declares.
type Prompt struct {
	Module *Module
	Spec   abi.Prompt
	// Entry is the module's prompts/get entry point, run as a tool is;
	// nil for a prompt served from its declared messages.
	Entry *Tool
}

func (p *Prompt) module() *Module { return p.Module }

// Prompt returns the prompt with the given name.
func (c *Catalog) Prompt(name string) (*Prompt, bool) {
	p, ok := c.byPrompt[name]
	return p, ok
}

// AcquirePrompt finds a prompt in the catalog in service and, when getting
// it runs its module, holds the module as Acquire does: the caller then
// releases it (Entry.Module.Release) when the run ends.
func (r *Registry) AcquirePrompt(name string) (*Catalog, *Prompt, bool) {
	for {
		cat := r.current.Load()
		p, ok := cat.Prompt(name)
		if !ok {
			return nil, nil, false
		}
		if p.Entry == nil || p.Entry.Module.Acquire() {
			return cat, p, true
		}
	}
}
