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

// readSchema is the input schema of every module's resources/read entry
// point: the host writes its stdin, so it only documents it.
var readSchema = sync.OnceValues(func() (*schema.Schema, error) {
	return schema.Compile(json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string"},"arguments":{"type":"object"}},"required":["uri","arguments"]}`))
})

// readEntry returns the resources/read entry point of a module that has
// resources whose contents its manifest lacks, nil for one that has none.
func readEntry(m *Module) (*Tool, error) {
	needed := len(m.templates) > 0
	for _, r := range m.resources {
		needed = needed || !r.Spec.Static()
	}
	if !needed {
		return nil, nil
	}
	input, err := readSchema()
	if err != nil {
		return nil, fmt.Errorf("compiling the schema of %s: %w", abi.EntryReadResource, err)
	}
	return &Tool{Module: m, Input: input, Spec: abi.Tool{
		Name:        abi.EntryReadResource,
		Description: "reads one of the module's resources",
		Output:      abi.OutputJSON,
	}}, nil
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
