package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// hangGuard bounds waits for things that should happen promptly. It guards
// against hanging and is never a performance figure.
const hangGuard = 30 * time.Second

var ceilings = sandbox.Limits{Timeout: hangGuard, Memory: 16 << 20, Output: 64 << 10}

const anyObject = `{"type":"object"}`

// strict is the input schema of the "fail" tool: if arguments get past it,
// the module runs and exits 3, which no validation error looks like.
const strict = `{"type":"object","properties":{"n":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}}},"required":["n"],"additionalProperties":false}`

// needsN is the output schema of the *_checked tools.
const needsN = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`

// module is one .wasm file of a test directory and its sidecar manifest.
type module struct {
	wat      string
	wasm     []byte // instead of wat
	manifest abi.Manifest
}

func tool(name, output, input, outputSchema string) abi.Tool {
	t := abi.Tool{Name: name, Description: "test tool " + name, InputSchema: json.RawMessage(input), Output: abi.OutputMode(output)}
	if outputSchema != "" {
		t.OutputSchema = json.RawMessage(outputSchema)
	}
	return t
}

func manifest(tools ...abi.Tool) abi.Manifest {
	return abi.Manifest{ABI: abi.Version, Tools: tools}
}

// uncompilable parses and passes every load-time check (no imports, a _start
// export) but exports a function that does not exist.
var uncompilable = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00,
}

// standard is the directory most tests serve.
func standard() map[string]module {
	return map[string]module{
		"echo": {wat: "echo", manifest: manifest(
			tool("text", "", anyObject, ""),
			tool("json", "json", anyObject, ""),
			tool("json_checked", "json", anyObject, needsN),
			tool("result", "result", anyObject, ""),
			tool("result_checked", "result", anyObject, needsN),
		)},
		"argv": {wat: "argv", manifest: manifest(
			tool("argv_text", "text", anyObject, ""),
			tool("argv_json", "json", anyObject, ""),
			tool("argv_result", "result", anyObject, ""),
		)},
		"fail":       {wat: "fail", manifest: manifest(tool("fail", "", strict, ""))},
		"trap":       {wat: "trap", manifest: manifest(tool("trap", "", anyObject, ""))},
		"stderrtrap": {wat: "stderrtrap", manifest: manifest(tool("stderrtrap", "", anyObject, ""))},
		"slowloop": {wat: "loop", manifest: abi.Manifest{
			ABI:    abi.Version,
			Tools:  []abi.Tool{tool("slowloop", "", anyObject, "")},
			Limits: abi.Limits{Timeout: abi.Duration(50 * time.Millisecond)},
		}},
		"loop":   {wat: "loop", manifest: manifest(tool("loop", "", anyObject, ""))},
		"broken": {wasm: uncompilable, manifest: manifest(tool("broken", "", anyObject, ""))},
	}
}

// fixture is a dispatcher over a temporary tool directory and policy
// file, with its log and the compilations of its catalog.
type fixture struct {
	d        *Dispatcher
	reg      *registry.Registry
	engine   *sandbox.Engine
	policy   string // the policy file: "modules: {}" until a test says more
	log      *recorder
	compiles *compiles
}

// compiles is an observe.Observer that counts compilations.
type compiles struct {
	observe.Nop
	mu sync.Mutex
	n  int
}

func (c *compiles) Compiled(string, time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
}

func (c *compiles) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func newFixture(t *testing.T, modules map[string]module, opts Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	for stem, m := range modules {
		if m.wasm != nil {
			if err := os.WriteFile(filepath.Join(dir, stem+".wasm"), m.wasm, 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			wattest.Write(t, dir, m.wat, stem)
		}
		data, err := json.Marshal(m.manifest)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, stem+abi.SidecarSuffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	comp := &compiles{}
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyFile, []byte("modules: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(registry.Options{Dir: dir, PolicyFile: policyFile, LoadOptions: registry.LoadOptions{Engine: engine, Ceilings: ceilings, Observer: comp}})
	if err != nil {
		t.Fatal(err)
	}
	if errs := reg.Current().Errors; len(errs) > 0 {
		t.Fatalf("catalog errors: %v", errs)
	}
	rec := newRecorder()
	opts.Logger = slog.New(rec)
	d := New(reg, opts)
	t.Cleanup(d.Close) // before the engine closes: cleanups run last first
	return &fixture{d: d, reg: reg, engine: engine, policy: policyFile, log: rec, compiles: comp}
}

// grant rewrites the policy file and reloads, as an operator does.
func (f *fixture) grant(t *testing.T, yaml string) {
	t.Helper()
	if err := os.WriteFile(f.policy, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Reload(); err != nil {
		t.Fatal(err)
	}
	if errs := f.reg.Current().Errors; len(errs) > 0 {
		t.Fatalf("after the policy changed: %v", errs)
	}
}

// recorder is a slog.Handler that keeps every record and signals each "run
// started" message, so tests can wait for a run without sleeping.
type recorder struct {
	mu       sync.Mutex
	records  []record
	started  chan string // tool names, as runs start
	prepared chan string // tool names, as instances are prepared ahead
}

type record struct {
	msg   string
	attrs map[string]string
}

func newRecorder() *recorder {
	return &recorder{started: make(chan string, 64), prepared: make(chan string, 64)}
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, record{rec.Message, attrs})
	r.mu.Unlock()
	switch rec.Message {
	case "run started":
		r.started <- attrs["tool"]
	case "instance prepared":
		r.prepared <- attrs["tool"]
	}
	return nil
}

// count returns how many records have the message.
func (r *recorder) count(msg string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, rec := range r.records {
		if rec.msg == msg {
			n++
		}
	}
	return n
}

// lastOutcome returns the outcome of the last call logged.
func (r *recorder) lastOutcome() string { return r.last("call")["outcome"] }

func call(t *testing.T, h *Dispatcher, name, args string) *mcp.CallToolResult {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	res, err := h.Call(context.Background(), name, raw, nil, nil)
	if err != nil {
		t.Fatalf("Call(%s): %v", name, err)
	}
	if res == nil {
		t.Fatalf("Call(%s) returned no result", name)
	}
	return res
}

// text returns the result's only content block, which must be text.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result has %d content blocks; want 1: %+v", len(res.Content), res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T; want text", res.Content[0])
	}
	return tc.Text
}

func TestUnknownTool(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	res, err := f.d.Call(context.Background(), "nope", nil, nil, nil)
	if !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("err = %v; want ErrUnknownTool", err)
	}
	if res != nil {
		t.Errorf("result = %+v; want none", res)
	}
	if !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("error %q does not name the tool", err)
	}
}

func TestInvalidArgumentsAreReportedAndNotRun(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	for _, tc := range []struct {
		name string
		args string
		want []string
	}{
		{"missing property", `{}`, []string{"at /: ", "'n'"}},
		{"several violations", `{"n":0,"tags":["ok",7],"extra":true}`, []string{"at /n: ", "at /tags/1: ", "at /: ", "extra"}},
		{"not an object", `[1,2]`, []string{"at /: "}},
		{"a string", `"n"`, []string{"at /: "}},
		{"not JSON", `{"n":`, []string{"not JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := f.log.count("run started")
			res := call(t, f.d, "fail", tc.args)
			got := text(t, res)
			if !res.IsError {
				t.Errorf("IsError = false for %q", got)
			}
			if !strings.HasPrefix(got, "invalid arguments for fail") {
				t.Errorf("text %q does not start with the call's fault", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text %q does not mention %q", got, w)
				}
			}
			// Had the module run, it would have exited 3.
			if strings.Contains(got, "exit status") || strings.Contains(got, "widget") {
				t.Errorf("the module ran: %q", got)
			}
			if n := f.log.count("run started"); n != runs {
				t.Errorf("%d runs started; want none", n-runs)
			}
			if o := f.log.lastOutcome(); o != "invalid_arguments" {
				t.Errorf("logged outcome %q; want invalid_arguments", o)
			}
		})
	}
	// Valid arguments do reach the module, so the checks above can fail.
	res := call(t, f.d, "fail", `{"n":1,"tags":["a"]}`)
	if got := text(t, res); !res.IsError || !strings.Contains(got, "exit status 3") {
		t.Errorf("valid arguments: %q (isError %v); want the module's exit status 3", got, res.IsError)
	}
}

func TestViolationsListEachOnItsOwnLine(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	got := text(t, call(t, f.d, "fail", `{"n":0,"tags":[1]}`))
	lines := strings.Split(got, "\n")
	if lines[0] != "invalid arguments for fail:" {
		t.Errorf("first line %q", lines[0])
	}
	if len(lines) != 3 {
		t.Fatalf("want a head and two violations:\n%s", got)
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "- at /") {
			t.Errorf("violation line %q does not start with a pointer", l)
		}
	}
}

func TestAbsentArgumentsAreAnEmptyObject(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	for _, args := range []json.RawMessage{nil, {}, json.RawMessage("null")} {
		res, err := f.d.Call(context.Background(), "text", args, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); res.IsError || got != "{}" {
			t.Errorf("args %q: tool saw %q (isError %v); want {}", args, got, res.IsError)
		}
	}
	// And the schema sees {} too: "fail" requires n.
	if got := text(t, call(t, f.d, "fail", "null")); !strings.Contains(got, "'n'") {
		t.Errorf("null arguments to a tool requiring n: %q", got)
	}
}

func TestCallOutcomes(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	for _, tc := range []struct {
		name    string
		tool    string
		args    string
		isError bool
		text    string   // exact, when set
		has     []string // substrings
		outcome string
	}{
		{name: "text passes stdout through", tool: "text", args: `{"a":[1,2],"b":"c"}`, text: `{"a":[1,2],"b":"c"}`, outcome: "ok"},
		{name: "text keeps NULs", tool: "argv_text", text: "argv\x00argv_text\x00", outcome: "ok"},

		{name: "json without an object", tool: "argv_json", isError: true,
			has:     []string{"argv_json returned an unusable result", `output mode "json" needs one JSON object`},
			outcome: "bad_output"},
		{name: "json against its outputSchema", tool: "json_checked", args: `{"n":"two"}`, isError: true,
			has:     []string{"json_checked returned an unusable result", "outputSchema", "at /n: "},
			outcome: "bad_output"},
		{name: "json missing a required property", tool: "json_checked", args: `{"m":1}`, isError: true,
			has: []string{"unusable result", "at /: ", "'n'"}, outcome: "bad_output"},

		{name: "result passed through", tool: "result", args: `{"content":[{"type":"text","text":"hello"}]}`,
			text: "hello", outcome: "ok"},
		{name: "result isError from the tool", tool: "result", args: `{"content":[{"type":"text","text":"no such invoice"}],"isError":true}`,
			isError: true, text: "no such invoice", outcome: "tool_error"},
		{name: "result isError skips the outputSchema", tool: "result_checked", args: `{"content":[{"type":"text","text":"bad input"}],"isError":true}`,
			isError: true, text: "bad input", outcome: "tool_error"},
		{name: "result not a CallToolResult", tool: "argv_result", isError: true,
			has: []string{"argv_result returned an unusable result", `output mode "result" needs an MCP CallToolResult`}, outcome: "bad_output"},
		{name: "result with unknown content", tool: "result", args: `{"content":[{"type":"hologram"}]}`, isError: true,
			has: []string{"unusable result", "hologram"}, outcome: "bad_output"},
		{name: "result with content not a list", tool: "result", args: `{"content":"hello"}`, isError: true,
			has: []string{"unusable result"}, outcome: "bad_output"},
		{name: "result without structuredContent", tool: "result_checked", args: `{"content":[{"type":"text","text":"hi"}]}`, isError: true,
			has: []string{"unusable result", "declares an outputSchema but returned no structuredContent"}, outcome: "bad_output"},
		{name: "result against its outputSchema", tool: "result_checked", args: `{"content":[],"structuredContent":{"n":1.5}}`, isError: true,
			has: []string{"unusable result", "outputSchema", "at /n: "}, outcome: "bad_output"},

		{name: "exit status leads with stderr", tool: "fail", args: `{"n":1}`, isError: true,
			text: "fail failed (exit status 3): noise\nthe widget is broken", outcome: "exit"},
		{name: "trap without stderr", tool: "trap", isError: true,
			text: "trap failed: the tool trapped: integer divide by zero", outcome: "trap"},
		{name: "trap with stderr", tool: "stderrtrap", isError: true,
			text: "stderrtrap failed: the tool trapped: integer divide by zero\nstderr:\nabout to divide by zero", outcome: "trap"},
		{name: "time limit", tool: "slowloop", isError: true,
			has: []string{"slowloop failed: ", "50ms time limit"}, outcome: "timeout"},
		{name: "compile failure", tool: "broken", isError: true,
			has: []string{"broken cannot run: module broken failed to compile"}, outcome: "compile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, f.d, tc.tool, tc.args)
			got := text(t, res)
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v; want %v (text %q)", res.IsError, tc.isError, got)
			}
			if tc.text != "" && got != tc.text {
				t.Errorf("text = %q; want %q", got, tc.text)
			}
			for _, w := range tc.has {
				if !strings.Contains(got, w) {
					t.Errorf("text %q does not mention %q", got, w)
				}
			}
			if o := f.log.lastOutcome(); o != tc.outcome {
				t.Errorf("logged outcome %q; want %q", o, tc.outcome)
			}
			if tc.isError && res.StructuredContent != nil {
				t.Errorf("an error result carries structuredContent %v", res.StructuredContent)
			}
		})
	}
}

func TestJSONModeMakesStructuredContentAndText(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	for _, tool := range []string{"json", "json_checked"} {
		res := call(t, f.d, tool, `{"n":2,"s":"x","nested":{"list":[true,null]}}`)
		got := text(t, res)
		if res.IsError {
			t.Fatalf("%s: error %q", tool, got)
		}
		want := map[string]any{"n": json.Number("2"), "s": "x", "nested": map[string]any{"list": []any{true, nil}}}
		if !reflect.DeepEqual(res.StructuredContent, want) {
			t.Errorf("%s: structuredContent = %#v; want %#v", tool, res.StructuredContent, want)
		}
		want["n"] = 2.0 // as encoding/json decodes the text block
		var fromText map[string]any
		if err := json.Unmarshal([]byte(got), &fromText); err != nil {
			t.Fatalf("%s: text block is not JSON: %q", tool, got)
		}
		if !reflect.DeepEqual(fromText, want) {
			t.Errorf("%s: text block %q does not hold the structuredContent", tool, got)
		}
	}
}

func TestResultModeKeepsStructuredContent(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	res := call(t, f.d, "result_checked", `{"content":[{"type":"text","text":"n is 1"}],"structuredContent":{"n":1}}`)
	if got := text(t, res); res.IsError || got != "n is 1" {
		t.Fatalf("result = %q (isError %v)", got, res.IsError)
	}
	if !reflect.DeepEqual(res.StructuredContent, map[string]any{"n": json.Number("1")}) {
		t.Errorf("structuredContent = %#v", res.StructuredContent)
	}
	// A result without content gets an empty list, never null.
	res = call(t, f.d, "result", `{}`)
	if res.IsError || res.Content == nil || len(res.Content) != 0 {
		t.Errorf("empty result: %+v; want no error and empty, non-nil content", res)
	}
}

func TestTextModeReplacesInvalidUTF8(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	// The arguments are valid JSON with an invalid byte inside a string; the
	// echo module sends the bytes back as they came.
	res := call(t, f.d, "text", "{\"s\":\"a\xffb\"}")
	got := text(t, res)
	if res.IsError {
		t.Fatalf("error %q", got)
	}
	if !utf8.ValidString(got) || got != "{\"s\":\"a\uFFFDb\"}" {
		t.Errorf("text = %q; want the invalid byte replaced by U+FFFD", got)
	}
}

func TestResult(t *testing.T) {
	mk := func(output, outputSchema string) *registry.Tool {
		f := newFixture(t, map[string]module{"echo": {wat: "echo", manifest: manifest(tool("t", output, anyObject, outputSchema))}}, Options{})
		tl, _ := f.reg.Current().Lookup("t")
		return tl
	}
	textTool, jsonTool, result := mk("text", ""), mk("json", ""), mk("result", "")

	for _, tc := range []struct {
		name    string
		tool    *registry.Tool
		stdout  string
		wantErr string // "" for success
		check   func(*mcp.CallToolResult) bool
	}{
		{"text valid", textTool, "héllo\n", "", func(r *mcp.CallToolResult) bool {
			return r.Content[0].(*mcp.TextContent).Text == "héllo\n"
		}},
		{"text invalid UTF-8", textTool, "a\xc3\x28b\xff", "", func(r *mcp.CallToolResult) bool {
			return r.Content[0].(*mcp.TextContent).Text == "a\uFFFD(b\uFFFD"
		}},
		{"text empty", textTool, "", "", func(r *mcp.CallToolResult) bool {
			return len(r.Content) == 1 && r.Content[0].(*mcp.TextContent).Text == ""
		}},
		{"json object", jsonTool, ` {"a": 1} `, "", func(r *mcp.CallToolResult) bool {
			return r.Content[0].(*mcp.TextContent).Text == `{"a":1}` && reflect.DeepEqual(r.StructuredContent, map[string]any{"a": json.Number("1")})
		}},
		{"json array", jsonTool, `[{"a":1}]`, "needs one JSON object", nil},
		{"json number", jsonTool, `42`, "needs one JSON object", nil},
		{"json string", jsonTool, `"s"`, "needs one JSON object", nil},
		{"json null", jsonTool, `null`, "needs one JSON object", nil},
		{"json nothing", jsonTool, ``, "got nothing", nil},
		{"json truncated", jsonTool, `{"a":`, "needs one JSON object", nil},
		{"json two objects", jsonTool, `{} {}`, "needs one JSON object", nil},
		{"result minimal", result, `{"content":[]}`, "", func(r *mcp.CallToolResult) bool { return len(r.Content) == 0 && !r.IsError }},
		{"result structuredContent an array", result, `{"content":[],"structuredContent":[1,2]}`, "structuredContent must be a JSON object", nil},
		{"result structuredContent a string", result, `{"content":[],"structuredContent":"s","isError":true}`, "structuredContent must be a JSON object", nil},
		{"result structuredContent null", result, `{"content":[],"structuredContent":null}`, "", func(r *mcp.CallToolResult) bool { return r.StructuredContent == nil }},
		{"result structuredContent without a schema", result, `{"content":[],"structuredContent":{"any":"thing"}}`, "", func(r *mcp.CallToolResult) bool {
			return reflect.DeepEqual(r.StructuredContent, map[string]any{"any": "thing"})
		}},
		{"result array", result, `[]`, "needs an MCP CallToolResult", nil},
		{"result not JSON", result, `hello`, "needs an MCP CallToolResult", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Result(tc.tool, []byte(tc.stdout), discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v; want one mentioning %q (result %+v)", err, tc.wantErr, res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(res) {
				t.Errorf("unexpected result %+v", res)
			}
		})
	}
}

func TestLargeIntegersStayExact(t *testing.T) {
	const big = `{"id":9007199254740993,"big":12345678901234567890}`
	for _, tc := range []struct {
		mode   abi.OutputMode
		stdout string
	}{
		{abi.OutputJSON, big},
		{abi.OutputResult, `{"content":[],"structuredContent":` + big + `}`},
	} {
		tool := &registry.Tool{Spec: abi.Tool{Name: "t", Output: tc.mode}}
		res, err := Result(tool, []byte(tc.stdout), discard)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(res.StructuredContent)
		if !strings.Contains(string(got), "9007199254740993") || !strings.Contains(string(got), "12345678901234567890") {
			t.Errorf("%s mode: structuredContent = %s; integers were rounded", tc.mode, got)
		}
	}
}

func TestResultModeRefusesContentToolsMayNotReturn(t *testing.T) {
	tool := &registry.Tool{Spec: abi.Tool{Name: "t", Output: abi.OutputResult}}
	_, err := Result(tool, []byte(`{"content":[{"type":"tool_use","id":"1","name":"x","input":{}}]}`), discard)
	if err == nil || !strings.Contains(err.Error(), "may not carry") {
		t.Fatalf("err = %v; want a refusal of the tool_use block", err)
	}
}

func TestPreviewIsBounded(t *testing.T) {
	long := strings.Repeat("x", 1000)
	got := preview([]byte(long))
	if len(got) > 300 || !strings.Contains(got, "…") {
		t.Errorf("preview of 1000 bytes = %q; want it cut with an ellipsis", got)
	}
	if got := preview(nil); got != "nothing" {
		t.Errorf("preview(nil) = %q", got)
	}
	if got := preview([]byte("\xff")); !utf8.ValidString(got) {
		t.Errorf("preview of invalid UTF-8 = %q", got)
	}
}

// TestDeniedListsAFewAndCountsTheRest: a failed call's text lists the run's
// denials, then what the manifest lacks, and one line counting those left
// out of either.
func TestDeniedListsAFewAndCountsTheRest(t *testing.T) {
	var denials, missing sandbox.Denials
	for i := range sandbox.MaxDenials + 3 {
		denials.Add(fmt.Sprint("http host \"h", i, ".test\""))
	}
	missing.Add("directory /notes: grant it under modules.m.dirs")
	res := denied(errorResult("t failed"), missing, denials)
	got := res.Content[len(res.Content)-1].(*mcp.TextContent).Text
	lines := strings.Split(got, "\n")
	if len(lines) != 1+sandbox.MaxDenials+1+1 || lines[1] != `- http host "h0.test"` || lines[len(lines)-2] != "- directory /notes: grant it under modules.m.dirs" || lines[len(lines)-1] != "- and 3 more" {
		t.Errorf("denied text:\n%s\nwant the %d denials kept, the missing directory, then \"- and 3 more\"", got, sandbox.MaxDenials)
	}
	if res := denied(errorResult("t failed"), sandbox.Denials{}, sandbox.Denials{}); len(res.Content) != 1 {
		t.Errorf("with nothing denied, denied added %d blocks", len(res.Content)-1)
	}
}

// TestMissingPermissionsAreBounded: a manifest may ask for many
// permissions the policy does not grant; a failed call lists a few and
// counts the rest, and so does its log line.
func TestMissingPermissionsAreBounded(t *testing.T) {
	m := manifest(tool("fail", "", anyObject, ""))
	m.Permissions = &abi.Permissions{}
	for i := range sandbox.MaxDenials + 12 {
		m.Permissions.Env = append(m.Permissions.Env, fmt.Sprint("VAR_", i))
	}
	f := newFixture(t, map[string]module{"fail": {wat: "fail", manifest: m}}, Options{})
	res := call(t, f.d, "fail", "")
	got := res.Content[len(res.Content)-1].(*mcp.TextContent).Text
	if !res.IsError || strings.Count(got, "\n- ") != sandbox.MaxDenials+1 || !strings.HasSuffix(got, "\n- and 12 more") {
		t.Errorf("the failed call's last block:\n%s\nwant %d permissions, then \"- and 12 more\"", got, sandbox.MaxDenials)
	}
	if more := f.log.last("permissions not granted")["more"]; more != "12" {
		t.Errorf("the log line counts %q more; want 12", more)
	}
}

func TestTailText(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short is trimmed", "  oops\n", 100, "oops"},
		{"exact fit", "abcdef", 6, "abcdef"},
		{"keeps the end", "first line\nlast line\n", 10, "last line"},
		{"cut inside a 2-byte rune", "xééé", 5, "éé"},
		{"cut inside a 3-byte rune", "日本語", 4, "語"},
		{"cut after a 3-byte rune's lead byte", "日本語", 8, "本語"},
		{"cut inside a 4-byte rune", "a😀b", 4, "b"},
		{"invalid bytes are replaced", "a\xffb", 10, "a\uFFFDb"},
		{"only continuation bytes", "\x80\x80\x80", 2, ""},
		{"empty", "", 10, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tailText([]byte(tc.in), tc.n)
			if got != tc.want {
				t.Errorf("tailText(%q, %d) = %q; want %q", tc.in, tc.n, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("tailText(%q, %d) = %q is not valid UTF-8", tc.in, tc.n, got)
			}
		})
	}
	// At the real size: a long stderr keeps its end, within the bound.
	long := strings.Repeat("é", StderrTail) + "the end"
	got := tailText([]byte(long), StderrTail)
	if len(got) > StderrTail || !strings.HasSuffix(got, "the end") || !utf8.ValidString(got) {
		t.Errorf("tail of %d bytes: %d bytes, suffix ok %v, valid %v", len(long), len(got), strings.HasSuffix(got, "the end"), utf8.ValidString(got))
	}
}

// A call whose client gives up while it waits for a slot was cancelled,
// not turned away: it is logged and counted so.
func TestCancelledWhileWaitingForASlot(t *testing.T) {
	f := newFixture(t, standard(), Options{Concurrency: 1, QueueTimeout: hangGuard})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.d.Call(ctx, "loop", nil, nil, nil)
	if name := <-f.log.started; name != "loop" {
		t.Fatalf("run started for %q; want loop", name)
	}
	// The deadline ends the wait long before the queue timeout would.
	waiting, stop := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer stop()
	res, err := f.d.Call(waiting, "text", json.RawMessage(`{}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || !strings.Contains(got, "cancelled") {
		t.Errorf("call cancelled in the queue: %q (isError %v)", got, res.IsError)
	}
	if o := f.log.lastOutcome(); o != "cancelled" {
		t.Errorf("logged outcome %q; want cancelled", o)
	}
}

func TestBusyWhenEverySlotIsTaken(t *testing.T) {
	f := newFixture(t, standard(), Options{Concurrency: 1, QueueTimeout: time.Millisecond})

	// The first call holds the only slot until it is cancelled: loop never
	// ends, and its time limit is the hang guard.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := f.d.Call(ctx, "loop", nil, nil, nil)
		if err != nil {
			t.Error(err)
		}
		first <- res
	}()
	select {
	case name := <-f.log.started:
		if name != "loop" {
			t.Fatalf("run started for %q; want loop", name)
		}
	case <-time.After(hangGuard):
		t.Fatal("the first call never started")
	}

	res := call(t, f.d, "text", `{}`)
	got := text(t, res)
	if !res.IsError || !strings.Contains(got, "busy") || !strings.Contains(got, "all 1 run slots") {
		t.Errorf("second call: %q (isError %v); want busy", got, res.IsError)
	}
	if o := f.log.lastOutcome(); o != "busy" {
		t.Errorf("logged outcome %q; want busy", o)
	}
	if n := f.log.count("run started"); n != 1 {
		t.Errorf("%d runs started; want only the first", n)
	}

	cancel()
	select {
	case res := <-first:
		if got := text(t, res); !res.IsError || !strings.Contains(got, "cancelled") {
			t.Errorf("cancelled call: %q (isError %v)", got, res.IsError)
		}
	case <-time.After(hangGuard):
		t.Fatal("the cancelled call did not return")
	}

	// The slot is free again.
	res = call(t, f.d, "text", `{"again":true}`)
	if got := text(t, res); res.IsError || got != `{"again":true}` {
		t.Errorf("call after the slot freed: %q (isError %v)", got, res.IsError)
	}
}

func TestCancelledWhileQueued(t *testing.T) {
	f := newFixture(t, standard(), Options{Concurrency: 1, QueueTimeout: hangGuard})
	held := f.d.slots.TryAcquire() // every slot taken
	defer held.Release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := f.d.Call(ctx, "text", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, res); !res.IsError || got != "the call was cancelled by the client" {
		t.Errorf("result %q (isError %v); want the cancellation", got, res.IsError)
	}
	if f.log.count("run started") != 0 {
		t.Error("a queued, cancelled call ran")
	}
}

func TestQueuedCallRunsWhenASlotFrees(t *testing.T) {
	f := newFixture(t, standard(), Options{Concurrency: 1, QueueTimeout: hangGuard})
	held := f.d.slots.TryAcquire()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := f.d.Call(context.Background(), "text", json.RawMessage(`{"q":1}`), nil, nil)
		done <- res
	}()
	held.Release() // whether or not the call is waiting yet
	select {
	case res := <-done:
		if res == nil || res.IsError || text(t, res) != `{"q":1}` {
			t.Errorf("queued call: %+v", res)
		}
	case <-time.After(hangGuard):
		t.Fatal("the queued call never ran")
	}
}

func TestConcurrencyDefault(t *testing.T) {
	f := newFixture(t, map[string]module{"echo": {wat: "echo", manifest: manifest(tool("t", "", anyObject, ""))}}, Options{})
	if got, want := f.d.slots.Cap(), DefaultConcurrency(); got != want || want < 2 {
		t.Errorf("slots = %d; want DefaultConcurrency() = %d (at least 2)", got, want)
	}
	if _, ok := f.reg.Current().Lookup("t"); !ok {
		t.Error("Catalog() does not return the host's catalog")
	}
}

func TestCallsRunConcurrently(t *testing.T) {
	// Each call gets its own instance: concurrent calls see their own input.
	f := newFixture(t, standard(), Options{Concurrency: 4, QueueTimeout: hangGuard})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			args := `{"i":` + strings.Repeat("1", i+1) + `}`
			res, err := f.d.Call(context.Background(), "text", json.RawMessage(args), nil, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != args {
				t.Errorf("call %d: %+v", i, res)
			}
		})
	}
	wg.Wait()
}

// last returns the attributes of the last record with the message.
func (r *recorder) last(msg string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.records) - 1; i >= 0; i-- {
		if r.records[i].msg == msg {
			return r.records[i].attrs
		}
	}
	return nil
}

func TestArgumentsAreLoggedOnlyWhenAsked(t *testing.T) {
	const secret = `{"password":"hunter2"}`
	for _, logArgs := range []bool{false, true} {
		f := newFixture(t, standard(), Options{LogArguments: logArgs})
		call(t, f.d, "text", secret)
		attrs := f.log.last("call")
		if attrs["tool"] != "text" || attrs["outcome"] == "" || attrs["duration"] == "" || attrs["peak_memory"] == "" {
			t.Errorf("call log line = %v; want tool, outcome, duration and peak memory", attrs)
		}
		if got, logged := attrs["arguments"]; logged != logArgs || (logged && got != secret) {
			t.Errorf("LogArguments %v: arguments in the log = %q (present %v)", logArgs, got, logged)
		}
	}
}

// TestPrewarmedCallsGetFreshPreparedInstances calls a tool twice with
// prewarming on: the second call runs on an instance prepared after the
// first, and still gets its own arguments.
func TestPrewarmedCallsGetFreshPreparedInstances(t *testing.T) {
	f := newFixture(t, standard(), Options{Prewarm: 4})
	if got := text(t, call(t, f.d, "text", `{"n":1}`)); got != `{"n":1}` {
		t.Fatalf("first call = %q", got)
	}
	select {
	case name := <-f.log.prepared:
		if name != "text" {
			t.Fatalf("prepared %q", name)
		}
	case <-time.After(time.Minute):
		t.Fatal("no instance was prepared after the first call")
	}
	if got := text(t, call(t, f.d, "text", `{"n":2}`)); got != `{"n":2}` {
		t.Fatalf("second call = %q", got)
	}
	if f.log.count("using a prepared instance") != 1 {
		t.Error("the second call did not use the prepared instance")
	}
	// A guest that never reads stdin is not prepared, and still works.
	for i := 0; i < 2; i++ {
		if res := call(t, f.d, "trap", ""); !res.IsError {
			t.Fatalf("trap call %d did not fail", i)
		}
	}
}

// TestWarmCompilesEveryModule: Warm compiles the whole catalog in the
// background, a module that does not compile included, and says when it is
// done.
func TestWarmCompilesEveryModule(t *testing.T) {
	f := newFixture(t, standard(), Options{})
	if n := f.compiles.count(); n != 0 {
		t.Fatalf("%d modules compiled before Warm", n)
	}
	select {
	case <-f.d.Warm():
	case <-time.After(hangGuard):
		t.Fatal("Warm never finished")
	}
	want := len(f.reg.Current().Modules)
	if n := f.compiles.count(); n != want {
		t.Errorf("%d modules compiled; want all %d", n, want)
	}
	if f.log.count("module does not compile") != 1 {
		t.Error("the module that does not compile was not logged")
	}
	if f.log.count("warm-up done") != 1 {
		t.Error(`no "warm-up done" in the log`)
	}
}

// TestOutputLimitBoundsTheEncodedAnswer: the output limit (64 KiB here)
// bounds the answer as the SDK will encode it, not only what the tool
// wrote. Control characters take six bytes each; json mode sends its
// object twice; a result's U+2028 takes six bytes for its three.
func TestOutputLimitBoundsTheEncodedAnswer(t *testing.T) {
	f := newFixture(t, map[string]module{
		"ctlbytes": {wat: "ctlbytes", manifest: manifest(tool("ctl", "", anyObject, ""))},
		"echo":     {wat: "echo", manifest: manifest(tool("json", "json", anyObject, ""), tool("result", "result", anyObject, ""))},
	}, Options{})
	limit := int(ceilings.Output)
	for _, tc := range []struct {
		name, tool, args string
		fits             bool
	}{
		{"control characters that fit", "ctl", fmt.Sprintf(`{"n":%d}`, limit/6-1), true},
		{"control characters that do not", "ctl", fmt.Sprintf(`{"n":%d}`, limit/6+1), false},
		{"a json object that fits twice", "json", `{"s":"` + strings.Repeat("a", limit/2-20) + `"}`, true},
		{"a json object that does not", "json", `{"s":"` + strings.Repeat("a", limit/2) + `"}`, false},
		{"a result that does not", "result", `{"content":[{"type":"text","text":"` + strings.Repeat("\u2028", limit/6+1) + `"}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, f.d, tc.tool, tc.args)
			got := res.Content[0].(*mcp.TextContent).Text
			switch {
			case tc.fits && res.IsError:
				t.Errorf("refused: %.300s", got)
			case !tc.fits && (!res.IsError || !strings.Contains(got, "once encoded as JSON") || !strings.Contains(got, "output limit of 64KiB") || !strings.Contains(got, "--output")):
				t.Errorf("answer of %d bytes (isError %v): %.300s; want it refused, naming the limit and --output", len(got), res.IsError, got)
			}
		})
	}
	if f.log.lastOutcome() != string(sandbox.OutputLimit) {
		t.Errorf("a refused answer's outcome is %q; want %q", f.log.lastOutcome(), sandbox.OutputLimit)
	}
}
