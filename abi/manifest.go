// Package abi defines the contract between wasmcp and the tools it hosts:
// the manifest that describes a module's tools, where the manifest is found,
// and the constants a guest relies on. docs/abi.md is the prose version of
// this package; the two change together.
package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Version is the ABI version this server implements. A manifest must name it
// in its "abi" field.
const Version = 1

// CustomSection is the name of the Wasm custom section that carries an
// embedded manifest.
const CustomSection = "wasmcp.manifest"

// InitSection is the name of the Wasm custom section whose bytes a reactor's
// wasmcp_init reads as its stdin: the tool's own code or data for a
// language runtime (a script's bytecode, a Python package).
const InitSection = "wasmcp.init"

// Start says how a module is run for a call.
type Start string

// The ways a module starts. The zero value means StartCommand.
const (
	// StartCommand runs the module's _start once per call, in a fresh
	// instance.
	StartCommand Start = "command"
	// StartReactor initialises the module once (ExportInitialize, then
	// ExportInit) and runs ExportRun once per call, in a fresh instance
	// made from the initialised one where the host can.
	StartReactor Start = "reactor"
)

// The exports of a reactor, in the order they are called.
const (
	// ExportInitialize is the reactor constructor of wasi-libc and Go
	// (optional).
	ExportInitialize = "_initialize"
	// ExportInit is the runtime's own start-up (optional), run once with
	// the InitSection as stdin.
	ExportInit = "wasmcp_init"
	// ExportRun runs one call (required).
	ExportRun = "wasmcp_run"
)

// SidecarSuffix is appended to a module's stem to name its sidecar manifest:
// calc.wasm is described by calc.manifest.json.
const SidecarSuffix = ".manifest.json"

// SignatureSuffix names a file's detached minisign signature: calc.wasm
// is signed by calc.wasm.minisig, and its sidecar calc.manifest.json by
// calc.manifest.json.minisig.
const SignatureSuffix = ".minisig"

// MaxManifestSize bounds a manifest's encoded size. Manifests are read before
// any tool runs, so an unbounded one would let a tool directory exhaust the
// server's memory at load.
const MaxManifestSize = 1 << 20

// MaxTools bounds the number of tools one module may declare.
const MaxTools = 256

// toolName is the name rule the MCP conformance suite checks; it is stricter
// than the specification's 128 characters, so names that pass it work with
// every client.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,64}$`)

// OutputMode says how a tool's stdout becomes a tool result.
type OutputMode string

// The output modes. The zero value means OutputText.
const (
	// OutputText turns stdout into one text content block.
	OutputText OutputMode = "text"
	// OutputJSON parses stdout as a JSON object that becomes structuredContent,
	// with its serialized form as a text block beside it.
	OutputJSON OutputMode = "json"
	// OutputResult parses stdout as a complete MCP CallToolResult.
	OutputResult OutputMode = "result"
)

// Manifest describes the tools of one module.
type Manifest struct {
	// ABI is the ABI version the module was written for.
	ABI int `json:"abi"`
	// Tools lists the tools the module implements. A module declares at
	// least one tool, resource, resource template or prompt.
	Tools []Tool `json:"tools,omitempty"`
	// Resources lists the resources the module serves.
	Resources []Resource `json:"resources,omitempty"`
	// ResourceTemplates lists the families of resources the module serves.
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	// Prompts lists the prompts the module serves.
	Prompts []Prompt `json:"prompts,omitempty"`
	// Limits are the module's own, tighter limits. The server clamps them to
	// its ceilings.
	Limits Limits `json:"limits,omitzero"`
	// Permissions are what the module's tools ask for: files, environment,
	// network, secrets. The operator's policy decides what they get.
	Permissions *Permissions `json:"permissions,omitempty"`
	// Start says whether the module is a command (the default) or a
	// reactor.
	Start Start `json:"start,omitempty"`
}

// StartKind returns how the module starts, resolving the default.
func (m *Manifest) StartKind() Start {
	if m.Start == "" {
		return StartCommand
	}
	return m.Start
}

// Tool describes one tool. Its fields mirror MCP's Tool, plus Output.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
	Icons        []Icon          `json:"icons,omitempty"`
	Meta         Meta            `json:"_meta,omitempty"`
	Output       OutputMode      `json:"output,omitempty"`
	// Client names the client capabilities the tool needs
	// (ClientElicitation, ClientSampling, ClientRoots): a call from a
	// client that lacks one is refused before the tool runs, and the tool
	// may ask the client only for these.
	Client []string `json:"client,omitempty"`
	// Examples are calls the tool's author declares with the answer each
	// must get. `wasmcp test` runs them in the sandbox; the server neither
	// runs nor serves them.
	Examples  []Example  `json:"examples,omitempty"`
	Execution *Execution `json:"execution,omitempty"`
}

// Execution is how a tool may be run: MCP's Tool.execution.
type Execution struct {
	// TaskSupport says whether a call may, or must, run as a task that the
	// client polls (MCP 2025-11-25 tasks). The zero value means
	// TaskForbidden.
	TaskSupport TaskSupport `json:"taskSupport,omitempty"`
	// AskFirst, for a tool that may run as a task and asks the client, has
	// a 2026-07-28 call from a client with the tasks extension gather its
	// answers by plain input-required rounds first, and become a task only
	// on the round that has them (docs/abi.md, "Tasks"). It is wasmcp's,
	// not MCP's: tools/list does not show it.
	AskFirst bool `json:"askFirst,omitempty"`
}

// TaskSupport says whether a tool's calls run as tasks.
type TaskSupport string

// The kinds of task support, as MCP names them.
const (
	// TaskForbidden: a call never runs as a task.
	TaskForbidden TaskSupport = "forbidden"
	// TaskOptional: a client may run a call as a task, or wait for it.
	TaskOptional TaskSupport = "optional"
	// TaskRequired: a call runs only as a task.
	TaskRequired TaskSupport = "required"
)

// Tasks returns the tool's task support, resolving the default.
func (t *Tool) Tasks() TaskSupport {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return TaskForbidden
	}
	return t.Execution.TaskSupport
}

// AsksFirst reports whether the tool gathers its answers before it
// becomes a task (Execution.AskFirst).
func (t *Tool) AsksFirst() bool { return t.Execution != nil && t.Execution.AskFirst }

// Example is one call of a tool and what it must answer. With none of
// Result, Contains and IsError, the call must succeed.
type Example struct {
	// Name says what the example shows; `wasmcp test` reports by it.
	Name string `json:"name,omitempty"`
	// Arguments are the call's arguments, an object ({} when left out).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Result is the text the answer must be: its text content, the parts
	// joined by newlines.
	Result *string `json:"result,omitempty"`
	// Contains is text the answer's text must contain.
	Contains string `json:"contains,omitempty"`
	// IsError says the call must fail: be a tool error (isError), whose
	// text Result and Contains then check.
	IsError bool `json:"isError,omitempty"`
}

// MaxExamples bounds the examples of one tool.
const MaxExamples = 64

// Annotations are MCP's tool hints. They are advice to clients, never trusted
// by the server.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Limits are per-module resource limits. A zero field means "the server's
// ceiling".
type Limits struct {
	Timeout Duration `json:"timeout,omitzero"`
	Memory  Size     `json:"memory,omitzero"`
	Output  Size     `json:"output,omitzero"`
}

// ParseManifest decodes and checks a manifest. Unknown fields are errors, so
// that a misspelt field is reported rather than silently ignored. Schemas are
// checked only for shape here; compiling them is the host's job.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > MaxManifestSize {
		return nil, fmt.Errorf("manifest is %d bytes, over the %d-byte limit", len(data), MaxManifestSize)
	}
	// encoding/json matches field names without regard to case and lets a
	// repeated key overwrite the first, so "inputschema" would be taken for
	// "inputSchema". The key check refuses both before decoding.
	if err := checkKeys(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON for ABI %d: %w", Version, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("manifest has data after its JSON object")
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Check reports the first rule the manifest breaks.
func (m *Manifest) Check() error {
	if m.ABI != Version {
		if m.ABI == 0 {
			return fmt.Errorf(`manifest has no "abi" field; this server implements abi %d`, Version)
		}
		return fmt.Errorf("manifest asks for abi %d; this server implements abi %d", m.ABI, Version)
	}
	if len(m.Tools)+len(m.Resources)+len(m.ResourceTemplates)+len(m.Prompts) == 0 {
		return errors.New("manifest declares no tools, resources, resource templates or prompts")
	}
	if len(m.Tools) > MaxTools {
		return fmt.Errorf("manifest declares %d tools, over the limit of %d", len(m.Tools), MaxTools)
	}
	seen := make(map[string]bool, len(m.Tools))
	for i := range m.Tools {
		t := &m.Tools[i]
		if err := t.check(); err != nil {
			return fmt.Errorf("tool %d (%q): %w", i, t.Name, err)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool name %q is declared twice", t.Name)
		}
		seen[t.Name] = true
	}
	if err := m.checkResources(); err != nil {
		return err
	}
	if err := m.checkToolUIs(); err != nil {
		return err
	}
	if err := m.checkPrompts(); err != nil {
		return err
	}
	switch m.Start {
	case "", StartCommand, StartReactor:
	default:
		return fmt.Errorf(`"start" must be "command" or "reactor", not %q`, m.Start)
	}
	if m.Limits.Timeout < 0 || m.Limits.Memory < 0 || m.Limits.Output < 0 {
		return errors.New("limits must not be negative")
	}
	if m.Permissions != nil {
		return m.Permissions.Check()
	}
	return nil
}

func (t *Tool) check() error {
	if !toolName.MatchString(t.Name) {
		return fmt.Errorf("name must match %s", toolName)
	}
	if slices.Contains(reserved, t.Name) {
		return fmt.Errorf("name %q is reserved: a module is started with it to serve what is not a tool", t.Name)
	}
	if strings.TrimSpace(t.Description) == "" {
		return errors.New(`"description" is required: it is what a model reads to choose the tool`)
	}
	if err := checkObjectRoot("inputSchema", t.InputSchema); err != nil {
		return err
	}
	if err := checkIcons(t.Icons); err != nil {
		return err
	}
	if err := t.Meta.check(); err != nil {
		return err
	}
	if t.Execution != nil {
		switch t.Execution.TaskSupport {
		case "", TaskForbidden, TaskOptional, TaskRequired:
		default:
			return fmt.Errorf(`"execution.taskSupport" must be "forbidden", "optional" or "required", not %q`, t.Execution.TaskSupport)
		}
		switch {
		case t.AsksFirst() && t.Tasks() == TaskForbidden:
			return errors.New(`"execution.askFirst" needs "taskSupport": "optional" or "required": it says when a call becomes a task, and this tool's calls never do`)
		case t.AsksFirst() && len(t.Client) == 0:
			return errors.New(`"execution.askFirst" needs "client" (the capabilities the tool asks for): it has a call ask before it becomes a task, and this tool asks nothing`)
		}
	}
	switch t.Output {
	case "", OutputText, OutputJSON, OutputResult:
	default:
		return fmt.Errorf(`"output" must be "text", "json" or "result", not %q`, t.Output)
	}
	if err := checkClient(t.Client); err != nil {
		return err
	}
	if len(t.OutputSchema) > 0 {
		if err := checkObjectRoot("outputSchema", t.OutputSchema); err != nil {
			return err
		}
		if t.Mode() == OutputText {
			return errors.New(`"outputSchema" needs "output": "json" or "result"; a text result has no structuredContent to check`)
		}
	}
	if len(t.Examples) > MaxExamples {
		return fmt.Errorf(`"examples" has %d entries, over the limit of %d`, len(t.Examples), MaxExamples)
	}
	for i, e := range t.Examples {
		if len(e.Arguments) > 0 && e.Arguments[0] != '{' {
			return fmt.Errorf(`example %d: "arguments" must be a JSON object`, i)
		}
	}
	return nil
}

// checkToolUIs checks each tool's _meta.ui against the module's resources:
// a tool's interface must be a ui:// resource of its own module, so that no
// module can dress its tool in another's interface.
func (m *Manifest) checkToolUIs() error {
	resources := make(map[string]string, len(m.Resources))
	for _, r := range m.Resources {
		resources[r.URI] = r.MIMEType
	}
	for i := range m.Tools {
		if err := m.Tools[i].Meta.checkToolUI(resources); err != nil {
			return fmt.Errorf("tool %d (%q): %w", i, m.Tools[i].Name, err)
		}
	}
	return nil
}

// checkClient checks a "client" list of capabilities.
func checkClient(client []string) error {
	for i, c := range client {
		switch c {
		case ClientElicitation, ClientSampling, ClientRoots:
		default:
			return fmt.Errorf(`"client" names %q; one may need %q, %q or %q`, c, ClientElicitation, ClientSampling, ClientRoots)
		}
		if slices.Contains(client[:i], c) {
			return fmt.Errorf(`"client" names %q twice`, c)
		}
	}
	return nil
}

// CheckAsks reports the first of a module's imports of HostModule that
// asks the client for a capability no tool or prompt of the manifest
// declares in "client": such a module could only fail its asks. runtime
// says that the module is a language runtime carrying its tool (it has an
// InitSection): one runtime serves tools that ask and tools that do not,
// so its import of ask_all, which asks for what its request names, is the
// runtime's and not the tool's, and passes. Nothing is given up: each ask
// is checked again at the call against what the tool and the client
// declared, and a tool that declares nothing gets code 7.
func (m *Manifest) CheckAsks(imports []string, runtime bool) error {
	declares := func(c string) bool {
		return slices.ContainsFunc(m.Tools, func(t Tool) bool { return slices.Contains(t.Client, c) || c == "" && len(t.Client) > 0 }) ||
			slices.ContainsFunc(m.Prompts, func(p Prompt) bool { return slices.Contains(p.Client, c) || c == "" && len(p.Client) > 0 })
	}
	for _, name := range imports {
		if name == AskAll && !runtime && !declares("") {
			return fmt.Errorf(`imports %s.%s, which asks the client, but no tool or prompt of its manifest declares what it may ask for ("client": ["elicitation"], "sampling" or "roots"); declare it on those that ask`, HostModule, name)
		}
		ask, ok := AskFunctions[name]
		if ok && !declares(ask.Capability) {
			return fmt.Errorf(`imports %s.%s, which asks the client for %s, but no tool or prompt of its manifest declares "client": [%q]; declare it on those that ask`, HostModule, name, ask.Capability, ask.Capability)
		}
	}
	return nil
}

// Mode returns the tool's output mode, resolving the default.
func (t *Tool) Mode() OutputMode {
	if t.Output == "" {
		return OutputText
	}
	return t.Output
}

// checkObjectRoot requires a JSON object whose "type" is "object", which both
// MCP revisions demand of inputSchema and 2025-11-25 demands of outputSchema.
func checkObjectRoot(field string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return fmt.Errorf("%q is required", field)
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(raw, &root); err != nil {
		return fmt.Errorf("%q must be a JSON object", field)
	}
	var typ string
	if err := json.Unmarshal(root["type"], &typ); err != nil || typ != "object" {
		return fmt.Errorf(`%q must have "type": "object" at its root`, field)
	}
	return nil
}

// Duration is a time.Duration written as a Go duration string ("5s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// String formats the duration as Go does ("5s").
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // as for any other absent limit
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`a duration is a string such as "5s" or "250ms"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}
