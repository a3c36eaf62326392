package registry

import (
	"encoding/json"
	"fmt"
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
