package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// okTool is a tool object that passes every rule.
const okTool = `{"name":"calc","description":"Adds numbers.","inputSchema":{"type":"object"}}`

// withTools wraps tool objects in an otherwise valid manifest.
func withTools(tools ...string) string {
	return `{"abi":1,"tools":[` + strings.Join(tools, ",") + `]}`
}

// withLimits is a valid one-tool manifest with the given limits object.
func withLimits(limits string) string {
	return `{"abi":1,"tools":[` + okTool + `],"limits":` + limits + `}`
}

// toolJSON builds a tool object from okTool's name and description plus the
// given extra members (already JSON-encoded, without braces).
func toolJSON(name string, extra string) string {
	s := fmt.Sprintf(`{"name":%q,"description":"d","inputSchema":{"type":"object"}`, name)
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

// manyTools returns n distinct valid tool objects.
func manyTools(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = toolJSON(fmt.Sprintf("tool_%d", i), "")
	}
	return out
}

func TestParseManifestAccepts(t *testing.T) {
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, m *Manifest)
	}{
		{
			name:  "minimal manifest",
			input: withTools(okTool),
			check: func(t *testing.T, m *Manifest) {
				if m.ABI != Version {
					t.Errorf("ABI = %d, want %d", m.ABI, Version)
				}
				if len(m.Tools) != 1 {
					t.Fatalf("got %d tools, want 1", len(m.Tools))
				}
				tool := m.Tools[0]
				if tool.Name != "calc" || tool.Description != "Adds numbers." {
					t.Errorf("tool = %q/%q, want calc/Adds numbers.", tool.Name, tool.Description)
				}
				if got := string(tool.InputSchema); got != `{"type":"object"}` {
					t.Errorf("InputSchema = %s, want {\"type\":\"object\"}", got)
				}
				if tool.OutputSchema != nil {
					t.Errorf("OutputSchema = %s, want nil", tool.OutputSchema)
				}
				if tool.Annotations != nil {
					t.Errorf("Annotations = %+v, want nil", tool.Annotations)
				}
				if got := tool.Mode(); got != OutputText {
					t.Errorf("Mode() = %q, want %q", got, OutputText)
				}
				if m.Limits != (Limits{}) {
					t.Errorf("Limits = %+v, want zero", m.Limits)
				}
			},
		},
		{
			name: "every optional field",
			input: `{"abi":1,"tools":[{"name":"calculate","title":"Calculator","description":"Does sums.",
				"inputSchema":{"type":"object","properties":{"a":{"type":"number"}}},
				"outputSchema":{"type":"object"},
				"annotations":{"title":"Calc","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
				"output":"json"}],
				"limits":{"timeout":"5s","memory":"32MiB","output":"256KiB"}}`,
			check: func(t *testing.T, m *Manifest) {
				tool := m.Tools[0]
				if tool.Title != "Calculator" {
					t.Errorf("Title = %q, want Calculator", tool.Title)
				}
				if tool.Mode() != OutputJSON {
					t.Errorf("Mode() = %q, want %q", tool.Mode(), OutputJSON)
				}
				a := tool.Annotations
				if a == nil {
					t.Fatal("Annotations = nil, want set")
				}
				if a.Title != "Calc" {
					t.Errorf("Annotations.Title = %q, want Calc", a.Title)
				}
				for _, h := range []struct {
					name string
					got  *bool
					want bool
				}{
					{"readOnlyHint", a.ReadOnlyHint, true},
					{"destructiveHint", a.DestructiveHint, false},
					{"idempotentHint", a.IdempotentHint, true},
					{"openWorldHint", a.OpenWorldHint, false},
				} {
					if h.got == nil || *h.got != h.want {
						t.Errorf("%s = %v, want %v", h.name, h.got, h.want)
					}
				}
				want := Limits{Timeout: Duration(5 * time.Second), Memory: 32 << 20, Output: 256 << 10}
				if m.Limits != want {
					t.Errorf("Limits = %+v, want %+v", m.Limits, want)
				}
			},
		},
		{
			name:  "outputSchema with output result",
			input: withTools(toolJSON("r", `"output":"result","outputSchema":{"type":"object"}`)),
			check: func(t *testing.T, m *Manifest) {
				if m.Tools[0].Mode() != OutputResult {
					t.Errorf("Mode() = %q, want %q", m.Tools[0].Mode(), OutputResult)
				}
			},
		},
		{
			name:  "explicit output text without outputSchema",
			input: withTools(toolJSON("t", `"output":"text"`)),
			check: func(t *testing.T, m *Manifest) {
				if m.Tools[0].Output != OutputText {
					t.Errorf("Output = %q, want %q", m.Tools[0].Output, OutputText)
				}
			},
		},
		{
			name:  "name of exactly 64 characters",
			input: withTools(toolJSON(strings.Repeat("n", 64), "")),
			check: func(t *testing.T, m *Manifest) {
				if len(m.Tools[0].Name) != 64 {
					t.Errorf("name length = %d, want 64", len(m.Tools[0].Name))
				}
			},
		},
		{
			name:  "name using every allowed punctuation",
			input: withTools(toolJSON("a-Z_0.9/x", "")),
			check: func(t *testing.T, m *Manifest) {
				if m.Tools[0].Name != "a-Z_0.9/x" {
					t.Errorf("name = %q, want a-Z_0.9/x", m.Tools[0].Name)
				}
			},
		},
		{
			name:  "one-character name",
			input: withTools(toolJSON("x", "")),
			check: func(t *testing.T, m *Manifest) {
				if m.Tools[0].Name != "x" {
					t.Errorf("name = %q, want x", m.Tools[0].Name)
				}
			},
		},
		{
			name:  "exactly MaxTools tools",
			input: withTools(manyTools(MaxTools)...),
			check: func(t *testing.T, m *Manifest) {
				if len(m.Tools) != MaxTools {
					t.Errorf("got %d tools, want %d", len(m.Tools), MaxTools)
				}
			},
		},
		{
			name:  "names differing only in case are distinct",
			input: withTools(toolJSON("Tool", ""), toolJSON("tool", "")),
			check: func(t *testing.T, m *Manifest) {
				if len(m.Tools) != 2 {
					t.Errorf("got %d tools, want 2", len(m.Tools))
				}
			},
		},
		{
			name:  "surrounding whitespace",
			input: " \n\t" + withTools(okTool) + "\n\n  ",
			check: func(t *testing.T, m *Manifest) {
				if len(m.Tools) != 1 {
					t.Errorf("got %d tools, want 1", len(m.Tools))
				}
			},
		},
		{
			name:  "timeout in milliseconds",
			input: withLimits(`{"timeout":"250ms"}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits.Timeout != Duration(250*time.Millisecond) {
					t.Errorf("Timeout = %v, want 250ms", m.Limits.Timeout)
				}
			},
		},
		{
			name:  "compound timeout",
			input: withLimits(`{"timeout":"1m30s"}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits.Timeout != Duration(90*time.Second) {
					t.Errorf("Timeout = %v, want 1m30s", m.Limits.Timeout)
				}
			},
		},
		{
			name:  "memory as a plain integer",
			input: withLimits(`{"memory":1048576}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits.Memory != 1<<20 {
					t.Errorf("Memory = %d, want %d", m.Limits.Memory, 1<<20)
				}
			},
		},
		{
			name:  "memory as an integer string",
			input: withLimits(`{"memory":"65536"}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits.Memory != 65536 {
					t.Errorf("Memory = %d, want 65536", m.Limits.Memory)
				}
			},
		},
		{
			name:  "output in GiB",
			input: withLimits(`{"output":"1GiB"}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits.Output != 1<<30 {
					t.Errorf("Output = %d, want %d", m.Limits.Output, 1<<30)
				}
			},
		},
		{
			name:  "zero limits",
			input: withLimits(`{"timeout":"0s","memory":0,"output":"0B"}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits != (Limits{}) {
					t.Errorf("Limits = %+v, want zero", m.Limits)
				}
			},
		},
		{
			name:  "empty limits object",
			input: withLimits(`{}`),
			check: func(t *testing.T, m *Manifest) {
				if m.Limits != (Limits{}) {
					t.Errorf("Limits = %+v, want zero", m.Limits)
				}
			},
		},
		{
			name:  "schema keeps extra keywords",
			input: withTools(`{"name":"s","description":"d","inputSchema":{"type":"object","required":["a"],"x-anything":[1,2]}}`),
			check: func(t *testing.T, m *Manifest) {
				var root map[string]any
				if err := json.Unmarshal(m.Tools[0].InputSchema, &root); err != nil {
					t.Fatalf("InputSchema does not decode: %v", err)
				}
				if _, ok := root["x-anything"]; !ok {
					t.Errorf("InputSchema lost x-anything: %s", m.Tools[0].InputSchema)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.input))
			if err != nil {
				t.Fatalf("ParseManifest: got error %v, want success", err)
			}
			tc.check(t, m)
		})
	}
}

func TestParseManifestRejects(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string // a substring of the error
	}{
		// ABI version.
		{"abi missing", `{"tools":[` + okTool + `]}`, `no "abi" field`},
		{"abi zero", `{"abi":0,"tools":[` + okTool + `]}`, `no "abi" field`},
		{"abi 2", `{"abi":2,"tools":[` + okTool + `]}`, "asks for abi 2"},
		{"abi negative", `{"abi":-1,"tools":[` + okTool + `]}`, "asks for abi -1"},
		{"abi as string", `{"abi":"1","tools":[` + okTool + `]}`, "not valid JSON"},
		{"abi as float", `{"abi":1.5,"tools":[` + okTool + `]}`, "not valid JSON"},

		// Start.
		{"start capitalised", `{"abi":1,"start":"Reactor","tools":[` + okTool + `]}`, `"start" must be "command" or "reactor", not "Reactor"`},
		{"start as number", `{"abi":1,"start":1,"tools":[` + okTool + `]}`, "not valid JSON"},

		// Tool count.
		{"tools missing", `{"abi":1}`, "declares no tools"},
		{"tools empty", `{"abi":1,"tools":[]}`, "declares no tools"},
		{"tools null", `{"abi":1,"tools":null}`, "declares no tools"},
		{"tools not an array", `{"abi":1,"tools":{}}`, "not valid JSON"},
		{"one tool over MaxTools", withTools(manyTools(MaxTools + 1)...), fmt.Sprintf("declares %d tools, over the limit of %d", MaxTools+1, MaxTools)},

		// Names.
		{"name missing", withTools(`{"description":"d","inputSchema":{"type":"object"}}`), "name must match"},
		{"name empty", withTools(toolJSON("", "")), "name must match"},
		{"name of 65 characters", withTools(toolJSON(strings.Repeat("n", 65), "")), "name must match"},
		{"name with space", withTools(toolJSON("a b", "")), "name must match"},
		{"name with colon", withTools(toolJSON("ns:tool", "")), "name must match"},
		{"name with at sign", withTools(toolJSON("a@b", "")), "name must match"},
		{"name with non-ASCII letter", withTools(toolJSON("caf\u00e9", "")), "name must match"},
		{"name with trailing newline", withTools(toolJSON("tool\n", "")), "name must match"},
		{"name with NUL", withTools(`{"name":"a\u0000","description":"d","inputSchema":{"type":"object"}}`), "name must match"},
		{"name as number", withTools(`{"name":1,"description":"d","inputSchema":{"type":"object"}}`), "not valid JSON"},
		{"duplicate names", withTools(toolJSON("twin", ""), toolJSON("other", ""), toolJSON("twin", "")), `tool name "twin" is declared twice`},
		{"bad name reported with its index", withTools(okTool, toolJSON("bad name", "")), `tool 1 ("bad name")`},

		// Description.
		{"description missing", withTools(`{"name":"t","inputSchema":{"type":"object"}}`), `"description" is required`},
		{"description empty", withTools(`{"name":"t","description":"","inputSchema":{"type":"object"}}`), `"description" is required`},
		{"description only whitespace", withTools(`{"name":"t","description":" \t\n ","inputSchema":{"type":"object"}}`), `"description" is required`},

		// inputSchema.
		{"inputSchema missing", withTools(`{"name":"t","description":"d"}`), `"inputSchema" is required`},
		{"inputSchema null", withTools(`{"name":"t","description":"d","inputSchema":null}`), `"inputSchema"`},
		{"inputSchema array", withTools(`{"name":"t","description":"d","inputSchema":[]}`), `"inputSchema" must be a JSON object`},
		{"inputSchema string", withTools(`{"name":"t","description":"d","inputSchema":"object"}`), `"inputSchema" must be a JSON object`},
		{"inputSchema true", withTools(`{"name":"t","description":"d","inputSchema":true}`), `"inputSchema" must be a JSON object`},
		{"inputSchema without type", withTools(`{"name":"t","description":"d","inputSchema":{}}`), `"inputSchema" must have "type": "object"`},
		{"inputSchema type string", withTools(`{"name":"t","description":"d","inputSchema":{"type":"string"}}`), `"inputSchema" must have "type": "object"`},
		{"inputSchema type list", withTools(`{"name":"t","description":"d","inputSchema":{"type":["object"]}}`), `"inputSchema" must have "type": "object"`},
		{"inputSchema type wrong case", withTools(`{"name":"t","description":"d","inputSchema":{"type":"Object"}}`), `"inputSchema" must have "type": "object"`},
		{"inputSchema type only nested", withTools(`{"name":"t","description":"d","inputSchema":{"properties":{"type":"object"}}}`), `"inputSchema" must have "type": "object"`},

		// Output mode and outputSchema.
		{"outputSchema with default output", withTools(toolJSON("t", `"outputSchema":{"type":"object"}`)), `"outputSchema" needs "output": "json" or "result"`},
		{"outputSchema with output text", withTools(toolJSON("t", `"output":"text","outputSchema":{"type":"object"}`)), `"outputSchema" needs "output": "json" or "result"`},
		{"outputSchema not an object", withTools(toolJSON("t", `"output":"json","outputSchema":[1]`)), `"outputSchema" must be a JSON object`},
		{"outputSchema root not object", withTools(toolJSON("t", `"output":"json","outputSchema":{"type":"array"}`)), `"outputSchema" must have "type": "object"`},
		{"outputSchema null", withTools(toolJSON("t", `"output":"json","outputSchema":null`)), `"outputSchema"`},
		{"output unknown", withTools(toolJSON("t", `"output":"xml"`)), `"output" must be "text", "json" or "result", not "xml"`},
		{"output wrong case", withTools(toolJSON("t", `"output":"JSON"`)), `not "JSON"`},
		{"output as number", withTools(toolJSON("t", `"output":1`)), "not valid JSON"},

		// Task support.
		{"taskSupport unknown", withTools(toolJSON("t", `"execution":{"taskSupport":"always"}`)), `"execution.taskSupport" must be "forbidden", "optional" or "required", not "always"`},
		{"taskSupport wrong case", withTools(toolJSON("t", `"execution":{"taskSupport":"Optional"}`)), `not "Optional"`},
		{"unknown execution field", withTools(toolJSON("t", `"execution":{"ttl":1}`)), `unknown field "ttl" in the execution`},
		{"askFirst without tasks", withTools(toolJSON("t", `"client":["elicitation"],"execution":{"askFirst":true}`)), `"execution.askFirst" needs "taskSupport": "optional" or "required"`},
		{"askFirst of a forbidden task", withTools(toolJSON("t", `"client":["elicitation"],"execution":{"taskSupport":"forbidden","askFirst":true}`)), `"execution.askFirst" needs "taskSupport"`},
		{"askFirst without asks", withTools(toolJSON("t", `"execution":{"taskSupport":"required","askFirst":true}`)), `"execution.askFirst" needs "client"`},
		{"askFirst not a boolean", withTools(toolJSON("t", `"client":["elicitation"],"execution":{"taskSupport":"required","askFirst":"yes"}`)), `askFirst`},
		{"askFirst wrong case", withTools(toolJSON("t", `"client":["elicitation"],"execution":{"taskSupport":"required","askfirst":true}`)), `unknown field "askfirst" in the execution`},

		// Unknown fields at every level.
		{"unknown top-level field", `{"abi":1,"tools":[` + okTool + `],"extra":true}`, `unknown field "extra"`},
		{"misspelt tool field", withTools(`{"name":"t","description":"d","inputSchema":{"type":"object"},"inputSchemas":{}}`), `unknown field "inputSchemas"`},
		{"unknown annotation", withTools(toolJSON("t", `"annotations":{"readOnly":true}`)), `unknown field "readOnly"`},
		{"misspelt example field", withTools(toolJSON("t", `"examples":[{"arguments":{},"expect":"x"}]`)), `example 0: unknown field "expect"`},
		{"example arguments not an object", withTools(toolJSON("t", `"examples":[{"arguments":[1]}]`)), `example 0: "arguments" must be a JSON object`},
		{"too many examples", withTools(toolJSON("t", `"examples":[`+strings.Repeat(`{},`, MaxExamples)+`{}]`)), `"examples" has 65 entries, over the limit of 64`},
		{"unknown limit", withLimits(`{"cpu":"1"}`), `unknown field "cpu"`},

		// Not one JSON object.
		{"empty input", ``, "not valid JSON"},
		{"only whitespace", "  \n", "not valid JSON"},
		{"truncated", withTools(okTool)[:20], "not valid JSON"},
		{"array at top level", `[` + withTools(okTool) + `]`, "not valid JSON"},
		{"null", `null`, `no "abi" field`},
		{"second object after the first", withTools(okTool) + withTools(okTool), "data after its JSON object"},
		{"trailing word", withTools(okTool) + " x", "data after its JSON object"},
		{"trailing number", withTools(okTool) + " 1", "data after its JSON object"},
		{"trailing bracket", withTools(okTool) + "]", "data after its JSON object"},

		// Limits.
		{"timeout without unit", withLimits(`{"timeout":"5"}`), "bad duration"},
		{"timeout as number", withLimits(`{"timeout":5}`), `a duration is a string`},
		{"timeout garbage", withLimits(`{"timeout":"soon"}`), `bad duration "soon"`},
		{"timeout negative", withLimits(`{"timeout":"-1s"}`), "limits must not be negative"},
		{"memory negative integer", withLimits(`{"memory":-1}`), "a size must not be negative"},
		{"memory negative string", withLimits(`{"memory":"-1KiB"}`), "bad size"},
		{"memory decimal MB", withLimits(`{"memory":"32MB"}`), `bad size "32MB"`},
		{"memory decimal KB", withLimits(`{"memory":"512KB"}`), `bad size "512KB"`},
		{"memory lower-case unit", withLimits(`{"memory":"32mib"}`), "bad size"},
		{"memory fraction", withLimits(`{"memory":"1.5MiB"}`), "bad size"},
		{"memory float number", withLimits(`{"memory":1.5}`), "a size is a number of bytes"},
		{"memory bool", withLimits(`{"memory":true}`), "a size is a number of bytes"},
		{"memory overflowing", withLimits(`{"memory":"8589934592GiB"}`), "too large"},
		{"output decimal unit", withLimits(`{"output":"1GB"}`), "bad size"},
		{"limits not an object", withLimits(`[]`), "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.input))
			if err == nil {
				t.Fatalf("ParseManifest succeeded with %+v, want error containing %q", m, tc.wantErr)
			}
			if m != nil {
				t.Errorf("ParseManifest returned manifest %+v alongside error", m)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestParseManifestSizeLimit(t *testing.T) {
	base := withTools(okTool)
	pad := func(total int) []byte {
		b := make([]byte, 0, total)
		b = append(b, base...)
		for len(b) < total {
			b = append(b, ' ')
		}
		return b
	}
	t.Run("exactly MaxManifestSize is accepted", func(t *testing.T) {
		data := pad(MaxManifestSize)
		if _, err := ParseManifest(data); err != nil {
			t.Errorf("ParseManifest(%d bytes): got %v, want success", len(data), err)
		}
	})
	t.Run("one byte over MaxManifestSize is refused", func(t *testing.T) {
		data := pad(MaxManifestSize + 1)
		_, err := ParseManifest(data)
		if err == nil {
			t.Fatalf("ParseManifest(%d bytes): got success, want size error", len(data))
		}
		want := fmt.Sprintf("manifest is %d bytes, over the %d-byte limit", MaxManifestSize+1, MaxManifestSize)
		if err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
	})
}

func TestManifestCheck(t *testing.T) {
	valid := func() Manifest {
		return Manifest{ABI: Version, Tools: []Tool{{
			Name: "t", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`),
		}}}
	}
	tests := []struct {
		name    string
		mutate  func(m *Manifest)
		wantErr string // "" means Check must pass
	}{
		{"valid", func(*Manifest) {}, ""},
		{"negative timeout", func(m *Manifest) { m.Limits.Timeout = -1 }, "limits must not be negative"},
		{"negative memory", func(m *Manifest) { m.Limits.Memory = -1 }, "limits must not be negative"},
		{"negative output", func(m *Manifest) { m.Limits.Output = -1 }, "limits must not be negative"},
		{"positive limits", func(m *Manifest) { m.Limits = Limits{Timeout: 1, Memory: 1, Output: 1} }, ""},
		{"nil tools", func(m *Manifest) { m.Tools = nil }, "declares no tools"},
		{"bad output mode", func(m *Manifest) { m.Tools[0].Output = "binary" }, `not "binary"`},
		{"outputSchema with json", func(m *Manifest) {
			m.Tools[0].Output = OutputJSON
			m.Tools[0].OutputSchema = json.RawMessage(`{"type":"object"}`)
		}, ""},
		{"empty outputSchema counts as absent", func(m *Manifest) { m.Tools[0].OutputSchema = json.RawMessage{} }, ""},
		{"abi 3", func(m *Manifest) { m.ABI = 3 }, "asks for abi 3"},
		{"command", func(m *Manifest) { m.Start = StartCommand }, ""},
		{"reactor", func(m *Manifest) { m.Start = StartReactor }, ""},
		{"unknown start", func(m *Manifest) { m.Start = "library" }, `"start" must be "command" or "reactor", not "library"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.mutate(&m)
			err := m.Check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("Check() = nil, want error containing %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("Check() = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestStartKind(t *testing.T) {
	for start, want := range map[Start]Start{"": StartCommand, StartCommand: StartCommand, StartReactor: StartReactor} {
		if got := (&Manifest{Start: start}).StartKind(); got != want {
			t.Errorf("StartKind() of %q = %q, want %q", start, got, want)
		}
	}
}

func TestToolTasks(t *testing.T) {
	for manifest, want := range map[string]TaskSupport{
		``:                TaskForbidden,
		`,"execution":{}`: TaskForbidden,
		`,"execution":{"taskSupport":"forbidden"}`: TaskForbidden,
		`,"execution":{"taskSupport":"optional"}`:  TaskOptional,
		`,"execution":{"taskSupport":"required"}`:  TaskRequired,
		// A task may ask the client.
		`,"client":["elicitation"],"execution":{"taskSupport":"optional"}`: TaskOptional,
	} {
		m, err := ParseManifest([]byte(`{"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}` + manifest + `}]}`))
		if err != nil {
			t.Fatalf("ParseManifest(%s): %v", manifest, err)
		}
		if got := m.Tools[0].Tasks(); got != want {
			t.Errorf("Tasks() of %s = %q, want %q", manifest, got, want)
		}
	}
}

func TestToolAsksFirst(t *testing.T) {
	for manifest, want := range map[string]bool{
		``: false,
		`,"execution":{"taskSupport":"required"}`:                                           false,
		`,"client":["elicitation"],"execution":{"taskSupport":"required"}`:                  false,
		`,"client":["elicitation"],"execution":{"taskSupport":"required","askFirst":false}`: false,
		`,"client":["elicitation"],"execution":{"taskSupport":"required","askFirst":true}`:  true,
		`,"client":["sampling"],"execution":{"taskSupport":"optional","askFirst":true}`:     true,
	} {
		m, err := ParseManifest([]byte(`{"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}` + manifest + `}]}`))
		if err != nil {
			t.Fatalf("ParseManifest(%s): %v", manifest, err)
		}
		if got := m.Tools[0].AsksFirst(); got != want {
			t.Errorf("AsksFirst() of %s = %v, want %v", manifest, got, want)
		}
	}
}

func TestToolMode(t *testing.T) {
	tests := []struct {
		output OutputMode
		want   OutputMode
	}{
		{"", OutputText},
		{OutputText, OutputText},
		{OutputJSON, OutputJSON},
		{OutputResult, OutputResult},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("output %q", tc.output), func(t *testing.T) {
			tool := Tool{Output: tc.output}
			if got := tool.Mode(); got != tc.want {
				t.Errorf("Mode() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestManifestMarshalRoundTrip(t *testing.T) {
	inputs := map[string]string{
		"minimal": withTools(okTool),
		"full": `{"abi":1,"tools":[{"name":"a","title":"A","description":"first",
			"inputSchema":{ "type" : "object" },"outputSchema":{"type":"object"},"output":"result",
			"annotations":{"readOnlyHint":false}},` + toolJSON("b", `"output":"json"`) + `],
			"limits":{"timeout":"1m30s","memory":"64MiB","output":12345}}`,
	}
	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			m1, err := ParseManifest([]byte(input))
			if err != nil {
				t.Fatalf("ParseManifest(input): %v", err)
			}
			out1, err := json.Marshal(m1)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			m2, err := ParseManifest(out1)
			if err != nil {
				t.Fatalf("ParseManifest(%s): %v", out1, err)
			}
			out2, err := json.Marshal(m2)
			if err != nil {
				t.Fatalf("Marshal again: %v", err)
			}
			if !bytes.Equal(out1, out2) {
				t.Errorf("marshal is not stable:\n first: %s\nsecond: %s", out1, out2)
			}
			if m1.Limits != m2.Limits {
				t.Errorf("limits changed: %+v, then %+v", m1.Limits, m2.Limits)
			}
			if len(m1.Tools) != len(m2.Tools) {
				t.Fatalf("tool count changed: %d, then %d", len(m1.Tools), len(m2.Tools))
			}
			for i := range m1.Tools {
				a, b := m1.Tools[i], m2.Tools[i]
				if a.Name != b.Name || a.Title != b.Title || a.Description != b.Description || a.Output != b.Output {
					t.Errorf("tool %d changed: %+v, then %+v", i, a, b)
				}
			}
		})
	}
}

func TestManifestMarshalOmitsZeroLimits(t *testing.T) {
	m, err := ParseManifest([]byte(withTools(okTool)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatal(err)
	}
	if l, ok := top["limits"]; ok {
		t.Errorf("marshalled manifest has limits %s, want none: %s", l, out)
	}

	m.Limits.Memory = 1 << 20
	out, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"limits":{"memory":"1MiB"}`)) {
		t.Errorf("marshalled manifest = %s, want limits with only memory 1MiB", out)
	}
}

func TestDurationJSON(t *testing.T) {
	t.Run("marshal", func(t *testing.T) {
		tests := []struct {
			in   Duration
			want string
		}{
			{0, `"0s"`},
			{Duration(5 * time.Second), `"5s"`},
			{Duration(250 * time.Millisecond), `"250ms"`},
			{Duration(1500 * time.Millisecond), `"1.5s"`},
			{Duration(90 * time.Minute), `"1h30m0s"`},
			{Duration(time.Nanosecond), `"1ns"`},
		}
		for _, tc := range tests {
			got, err := json.Marshal(tc.in)
			if err != nil {
				t.Errorf("Marshal(%d): %v", int64(tc.in), err)
				continue
			}
			if string(got) != tc.want {
				t.Errorf("Marshal(%d) = %s, want %s", int64(tc.in), got, tc.want)
			}
			if s := tc.in.String(); `"`+s+`"` != tc.want {
				t.Errorf("String() = %q, want %s", s, tc.want)
			}
		}
	})
	t.Run("unmarshal", func(t *testing.T) {
		tests := []struct {
			in      string
			want    Duration
			wantErr string
		}{
			{`"5s"`, Duration(5 * time.Second), ""},
			{`"250ms"`, Duration(250 * time.Millisecond), ""},
			{`"1h2m3s"`, Duration(time.Hour + 2*time.Minute + 3*time.Second), ""},
			{`"0"`, 0, ""},
			{`"-2s"`, Duration(-2 * time.Second), ""},
			{`"5"`, 0, "bad duration"},
			{`"5 s"`, 0, "bad duration"},
			{`""`, 0, "bad duration"},
			{`5`, 0, "a duration is a string"},
			{`true`, 0, "a duration is a string"},
			{`{}`, 0, "a duration is a string"},
		}
		for _, tc := range tests {
			var d Duration
			err := json.Unmarshal([]byte(tc.in), &d)
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("Unmarshal(%s): %v, want %v", tc.in, err, tc.want)
				} else if d != tc.want {
					t.Errorf("Unmarshal(%s) = %v, want %v", tc.in, d, tc.want)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Unmarshal(%s) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
		}
	})
	t.Run("round trip", func(t *testing.T) {
		checkJSONRoundTrip(t, []Duration{0, 1, 999, Duration(time.Microsecond), Duration(time.Second + 1), Duration(123456789012345), Duration(1<<63 - 1)})
	})
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(withTools(okTool)))
	f.Add([]byte(`{"abi":1,"tools":[{"name":"calculate","title":"Calculator","description":"Adds.",
		"inputSchema":{"type":"object","properties":{"a":{"type":"number"}}},
		"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"output":"json"}],
		"limits":{"timeout":"5s","memory":"32MiB","output":"256KiB"}}`))
	f.Add([]byte(withTools(toolJSON("a/b.c-d_e", `"output":"result"`), toolJSON("x", ""))))
	f.Add([]byte(withLimits(`{"memory":1048576,"output":"9223372036854775807"}`)))
	f.Add([]byte(`{"abi":1,"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}],
		"permissions":{"http":[{"host":"*.example.com","methods":["GET","M-SEARCH"]},{"host":"::ffff:127.0.0.1"},{"host":"_a.b-c.test"}],"secrets":["k"]}}`))
	f.Add([]byte(`{"abi":2,"tools":[]}`))
	f.Add([]byte(`{"abi":1,"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]} x`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"abi":1,"resources":[{"uri":"a://b","name":"n","mimeType":"text/plain","size":3,"text":"abc",
		"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2026-01-12T15:00:58Z"},"icons":[{"src":"data:,x","sizes":["any"],"theme":"light"}]},
		{"uri":"a://c","name":"m","blob":"AAEC"}],
		"resourceTemplates":[{"uriTemplate":"a://{id}/{+rest}","name":"t","completions":{"id":["1","2"]}}]}`))
	f.Add([]byte(`{"abi":1,"prompts":[{"name":"p","arguments":[{"name":"x","required":true,"completions":["a"]},{"name":"y"}],
		"messages":[{"role":"user","content":{"type":"text","text":"{{x}} and {{y}}"}}]},{"name":"q"}]}`))

	f.Add([]byte(appManifest(`,"icons":[{"src":"data:,x"}],"_meta":{"ui":{"resourceUri":"ui://t/view.html","visibility":["app"]},"example.com/k":[1]}`,
		`,"_meta":{"ui":{"prefersBorder":true}}`)))

	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			if m != nil {
				t.Fatalf("ParseManifest returned a manifest alongside error %v", err)
			}
			return
		}
		if err := m.Check(); err != nil {
			t.Fatalf("parsed manifest fails Check: %v\ninput: %q", err, data)
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal of parsed manifest: %v\ninput: %q", err, data)
		}
		m2, err := ParseManifest(out)
		if err != nil {
			t.Fatalf("re-parsing marshalled manifest: %v\ninput: %q\nmarshalled: %s", err, data, out)
		}
		if m2.ABI != m.ABI || m2.Limits != m.Limits || len(m2.Tools) != len(m.Tools) ||
			len(m2.Resources) != len(m.Resources) || len(m2.ResourceTemplates) != len(m.ResourceTemplates) || len(m2.Prompts) != len(m.Prompts) {
			t.Fatalf("manifest changed in round trip:\n before: %+v\n after: %+v", m, m2)
		}
		for i := range m.Tools {
			a, b := m.Tools[i], m2.Tools[i]
			if a.Name != b.Name || a.Title != b.Title || a.Description != b.Description || a.Mode() != b.Mode() {
				t.Fatalf("tool %d changed in round trip:\n before: %+v\n after: %+v", i, a, b)
			}
		}
		out2, err := json.Marshal(m2)
		if err != nil {
			t.Fatalf("Marshal of re-parsed manifest: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("marshal is not a fixed point:\n first: %s\nsecond: %s", out, out2)
		}
	})
}

func TestFieldNamesAreCaseSensitiveAndUnique(t *testing.T) {
	for name, src := range map[string]string{
		"lower-case inputschema": `{"abi":1,"tools":[{"name":"a","description":"d","inputschema":{"type":"object"}}]}`,
		"upper-case OUTPUT":      `{"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"},"OUTPUT":"json"}]}`,
		"repeated name":          `{"abi":1,"tools":[{"name":"a","name":"b","description":"d","inputSchema":{"type":"object"}}]}`,
		"repeated abi":           `{"abi":1,"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}}]}`,
		"Limits key":             `{"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}}],"limits":{"Timeout":"1s"}}`,
		"annotation key":         `{"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"},"annotations":{"readonlyhint":true}}]}`,
	} {
		if _, err := ParseManifest([]byte(src)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNullLimitsAreAbsent(t *testing.T) {
	m, err := ParseManifest([]byte(`{"abi":1,"tools":[{"name":"a","description":"d","inputSchema":{"type":"object"}}],"limits":{"timeout":null,"memory":null}}`))
	if err != nil || m.Limits != (Limits{}) {
		t.Fatalf("ParseManifest = %+v, %v", m, err)
	}
}
