package host

import (
	"encoding/json"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// Status is what a server serves, as `wasmcp list --json` prints it and the
// /status endpoint serves it.
type Status struct {
	Tools   []ToolStatus   `json:"tools"`
	Modules []ModuleStatus `json:"modules"`
	// Errors are the files that did not load (or, after CompileAll, did not
	// compile), a tool whose name another module took, and a policy that
	// did not load.
	Errors []FileError `json:"errors"`
	// Sources are the tool sources (OCI references) served besides the
	// tool directory.
	Sources []SourceStatus `json:"sources,omitempty"`
}

// SourceStatus is one tool source: the digest its reference resolved to
// at its last pull, and why its last pull failed, if it did.
type SourceStatus struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest,omitempty"`
	Dir    string `json:"dir,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ToolStatus is one served tool.
type ToolStatus struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Module is the module's file, and Manifest where its manifest came
	// from: the sidecar's path, or "embedded".
	Module   string `json:"module"`
	Manifest string `json:"manifest"`
	Output   string `json:"output"`
	// InputSchema and OutputSchema are the manifest's schemas, as written.
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Limits are the tool's effective limits: its manifest's, within the
	// server's.
	Limits abi.Limits `json:"limits"`
	// Compiled, after CompileAll, says whether its module compiled.
	Compiled *bool `json:"compiled,omitempty"`
}

// ModuleStatus is one loaded module.
type ModuleStatus struct {
	File     string   `json:"file"`
	SHA256   string   `json:"sha256"`
	Manifest string   `json:"manifest"`
	Tools    []string `json:"tools"`
	// Resources are the URIs and URI templates the manifest declares, and
	// Prompts its prompts' names.
	Resources []string `json:"resources,omitempty"`
	Prompts   []string `json:"prompts,omitempty"`
}

// FileError is a file that did not load, and why.
type FileError struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// newStatus describes a catalog. compiled, when not nil, holds each
// module's compile result, by path.
func newStatus(cat *registry.Catalog, compiled map[string]error) Status {
	out := Status{Tools: []ToolStatus{}, Modules: []ModuleStatus{}, Errors: []FileError{}}
	for _, m := range cat.Modules {
		ms := ModuleStatus{File: m.Path, SHA256: m.SHA256, Manifest: m.ManifestFrom, Tools: []string{}}
		for _, t := range m.Manifest.Tools {
			ms.Tools = append(ms.Tools, t.Name)
		}
		for _, r := range m.Manifest.Resources {
			ms.Resources = append(ms.Resources, r.URI)
		}
		for _, t := range m.Manifest.ResourceTemplates {
			ms.Resources = append(ms.Resources, t.URITemplate)
		}
		for _, p := range m.Manifest.Prompts {
			ms.Prompts = append(ms.Prompts, p.Name)
		}
		out.Modules = append(out.Modules, ms)
		if err := compiled[m.Path]; err != nil {
			out.Errors = append(out.Errors, FileError{File: m.Path, Error: "does not compile: " + err.Error()})
		}
	}
	for _, t := range cat.Tools {
		ts := ToolStatus{
			Name:         t.Spec.Name,
			Description:  t.Spec.Description,
			Module:       t.Module.Path,
			Manifest:     t.Module.ManifestFrom,
			Output:       string(t.Spec.Mode()),
			InputSchema:  t.Spec.InputSchema,
			OutputSchema: t.Spec.OutputSchema,
			Limits: abi.Limits{
				Timeout: abi.Duration(t.Module.Limits.Timeout),
				Memory:  abi.Size(t.Module.Limits.Memory),
				Output:  abi.Size(t.Module.Limits.Output),
			},
		}
		if compiled != nil {
			ok := compiled[t.Module.Path] == nil
			ts.Compiled = &ok
		}
		out.Tools = append(out.Tools, ts)
	}
	for _, e := range cat.Errors {
		out.Errors = append(out.Errors, FileError{File: e.Path, Error: e.Err.Error()})
	}
	return out
}
