package astest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSDK compiles the SDK's test module (test/sdk_test.ts) once and runs
// every test of it.
func TestSDK(t *testing.T) {
	tool := Build(t, "test/sdk_test.ts", "astest")
	t.Run("unit", func(t *testing.T) { tool.Unit(t) })
	t.Run("arguments", func(t *testing.T) { testArguments(t, tool) })
	t.Run("log and progress", func(t *testing.T) { testLogAndProgress(t, tool) })
	t.Run("stdin under node", func(t *testing.T) { testStdinUnderNode(t, tool) })
	t.Run("http under node", func(t *testing.T) { testHTTPUnderNode(t, tool) })
	t.Run("http through wasmcp", func(t *testing.T) { testHTTPThroughWasmcp(t, tool) })
	t.Run("asks under node", func(t *testing.T) { testAsksUnderNode(t, tool) })
	t.Run("asks through wasmcp", func(t *testing.T) { testAsksThroughWasmcp(t, tool) })
}

// testAsksUnderNode answers an elicitation from the stand-in host, which
// shares the HTTP stand-in's answers.
func testAsksUnderNode(t *testing.T, tool *Tool) {
	const args = `{"case":"elicit","id":"confirm","params":"{\"message\":\"Go on?\"}"}`
	for _, tt := range []struct {
		name, answers, want string
	}{
		{"accepted", `[{"code":0,"answer":"eyJhY3Rpb24iOiJhY2NlcHQifQ=="}]`, `0 {"action":"accept"}`},
		{"refused", `[{"code":7,"answer":"eyJlcnJvciI6Im5vIGVsaWNpdGF0aW9uIn0="}]`, `7 no elicitation`},
	} {
		stdout, stderr, code := runNode(t, tool.Wasm, args, "WASMCP_TEST_HTTP="+tt.answers)
		if code != 0 || stdout != tt.want {
			t.Errorf("%s: exit %d, stdout %q; want %q\n%s", tt.name, code, stdout, tt.want, stderr)
		}
		if !strings.Contains(stderr, `request {"id":"confirm","params":{"message":"Go on?"}}`) {
			t.Errorf("%s: the host got no ask:\n%s", tt.name, stderr)
		}
	}
}

// testAsksThroughWasmcp asks through the real host, where no client is
// there to ask: the ask is denied, saying why.
func testAsksThroughWasmcp(t *testing.T, tool *Tool) {
	got, isError, stderr := tool.Call(t, `{"case":"elicit","id":"","params":"{\"message\":\"Go on?\"}"}`)
	if isError || !strings.HasPrefix(got, "7 nothing can ask a client here") {
		t.Errorf("elicit without a client = %q (isError %v); want a denial\n%s", got, isError, stderr)
	}
}

// testArguments checks the readers of arguments and the writers of results
// through the host: stdin, argv, stdout, and a failing exit.
func testArguments(t *testing.T, tool *Tool) {
	big := strings.Repeat("é😀x", 14000) // 98 KB: several reads, and buffer growth
	tests := []struct {
		args    string
		want    string
		isError bool
	}{
		{`{"case":"tool"}`, "astest", false},
		{`{"case":"echo","a":[1,2.50,-0,{"b":null}],"n":9007199254740993,"s":"é😀\u0000\"\\\/"}`,
			`{"case":"echo","a":[1,2.50,-0,{"b":null}],"n":9007199254740993,"s":"é😀\u0000\"\\/"}`, false},
		{`{"case":"echo","big":"` + big + `"}`, `{"case":"echo","big":"` + big + `"}`, false},
		{`{"case":"get","kind":"string","value":"tab\there"}`, "tab\there", false},
		{`{"case":"get","kind":"number","value":-2.5e-3}`, "-0.0025", false},
		{`{"case":"get","kind":"integer","value":-9223372036854775808}`, "-9223372036854775808", false},
		{`{"case":"get","kind":"integer","value":4.0}`, "4", false},
		{`{"case":"get","kind":"bool","value":false}`, "false", false},
		{`{"case":"get","kind":"object","value":{}}`, "an object", false},
		{`{"case":"get","kind":"array","value":[1,[2],3]}`, "3", false},
		{`{"case":"get","kind":"integer","value":"7"}`, `"value" must be a number, not a string`, true},
		{`{"case":"get","kind":"integer","value":2.5}`, `"value" must be an integer, not 2.5`, true},
		{`{"case":"get","kind":"integer","value":9223372036854775808}`, `"value" must be an integer that fits 64 bits, not 9223372036854775808`, true},
		{`{"case":"get","kind":"integer","value":1e19}`, `"value" must be an integer that fits 64 bits, not 1e19`, true},
		{`{"case":"get","kind":"string","value":1}`, `"value" must be a string, not a number`, true},
		{`{"case":"get","kind":"bool","value":"true"}`, `"value" must be a boolean, not a string`, true},
		{`{"case":"get","kind":"object","value":[]}`, `"value" must be an object, not an array`, true},
		{`{"case":"get","kind":"array","value":{}}`, `"value" must be an array, not an object`, true},
		{`{"case":"get","kind":"string"}`, `invalid arguments: "value" is required`, true},
		{`{"case":"get","kind":"string","value":null}`, `invalid arguments: "value" is required`, true},
		{`{"case":"fail"}`, "astest failed (exit status 1): first line second line", true},
		{`{"case":"json-array"}`, "module bug: the tool's JSON result must be an object, not an array", true},
		{`{"case":"json-broken"}`, "module bug: the tool wrote invalid JSON: expected ':' after an object key", true},
		{`{"case":"json-nan"}`, "module bug: JSON has no NaN or infinity", true},
	}
	for _, tt := range tests {
		got, isError, stderr := tool.Call(t, tt.args)
		name := tt.args
		if len(name) > 80 {
			name = name[:80] + "..."
		}
		if isError != tt.isError {
			t.Errorf("%s: isError = %v (%q); want %v\n%s", name, isError, got, tt.isError, stderr)
			continue
		}
		if tt.isError && !strings.Contains(got, tt.want) || !tt.isError && got != tt.want {
			t.Errorf("%s = %q; want %q", name, trim(got), trim(tt.want))
		}
	}
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// testLogAndProgress checks the host functions as wasmcp call shows them.
func testLogAndProgress(t *testing.T, tool *Tool) {
	got, isError, stderr := tool.Call(t, `{"case":"log"}`)
	// Refused: a progress that did not increase (6) and a level out of range (2).
	if isError || got != "0 0 6 2 0 0 0 0" {
		t.Fatalf("host codes = %q (isError %v); want 0 0 6 2 0 0 0 0\n%s", got, isError, stderr)
	}
	lines := strings.Split(stderr, "\n")
	want := []string{
		"[info] hello é",
		"[progress 1/2] half",
		"[warning] " + strings.Repeat("x", 8192),
		// 8192 is not a multiple of 3: the cut backs off to a whole character.
		"[debug] " + strings.Repeat("€", 8190/3),
		"[error] lone \uFFFD surrogate",
		"[progress 2]",
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			if strings.TrimSpace(l) == w {
				found = true
			}
		}
		if !found {
			t.Errorf("stderr lacks %q:\n%s", trim(w), trim(stderr))
		}
	}
	if strings.Contains(stderr, "again") || strings.Contains(stderr, "bad level") {
		t.Errorf("a refused message was sent:\n%s", trim(stderr))
	}
}

// testStdinUnderNode feeds the module input the host never sends (it passes
// on only valid JSON objects), under Node's WASI.
func testStdinUnderNode(t *testing.T, tool *Tool) {
	tests := []struct {
		stdin string
		want  string
	}{
		{"", `invalid arguments: "case" is required`}, // empty input counts as {}
		{" \n", `invalid arguments: "case" is required`},
		{`{"case":"tool"}`, ""},
		{"{\"case\":\"x\xff\"}", "invalid arguments: not UTF-8 (at byte 10)"},
		{"{\"case\":\"\xe2\x82\"}", "invalid arguments: not UTF-8 (at byte 9)"},         // truncated
		{"{\"case\":\"\xed\xa0\x80\"}", "invalid arguments: not UTF-8 (at byte 9)"},     // an encoded surrogate
		{"{\"case\":\"\xc0\xaf\"}", "invalid arguments: not UTF-8 (at byte 9)"},         // overlong
		{"{\"case\":\"\xf4\x90\x80\x80\"}", "invalid arguments: not UTF-8 (at byte 9)"}, // past U+10FFFF
		{"{\"case\":\"\x80\"}", "invalid arguments: not UTF-8 (at byte 9)"},             // a lone continuation byte
		{"{\"case\":\"tool\",\"x\":\"\xf0\x9f\x98\x80\"}", ""},                          // 😀 is fine
		{`{"case":`, "invalid arguments: expected a JSON value, found end of input (at character 8)"},
		{`[1]`, "invalid arguments: want a JSON object, not an array"},
		{`{"case":"tool"} {}`, "invalid arguments: unexpected '{' after the JSON value (at character 16)"},
	}
	for _, tt := range tests {
		stdout, stderr, code := runNode(t, tool.Wasm, tt.stdin)
		if tt.want == "" {
			if code != 0 || stdout != "astest" {
				t.Errorf("stdin %q: exit %d, stdout %q; want astest\n%s", tt.stdin, code, stdout, stderr)
			}
			continue
		}
		if code != 1 || stderr != tt.want+"\n" {
			t.Errorf("stdin %q: exit %d, stderr %q; want exit 1, %q", tt.stdin, code, stderr, tt.want)
		}
	}
}

// testHTTPUnderNode stands in for the host's HTTP under Node, so that the
// module's side of the exchange meets what the real host seldom or never
// does: an answer bigger than announced, one that is not UTF-8, a refusal
// that leaves the length unwritten.
func testHTTPUnderNode(t *testing.T, tool *Tool) {
	type answer struct {
		Code     int    `json:"code"`
		Answer   []byte `json:"answer"` // base64 in JSON
		Announce *int   `json:"announce,omitempty"`
	}
	length := func(n int) *int { return &n }
	const get = `{"case":"http","url":"https://x.test/"}`
	tests := []struct {
		name, args string
		answers    []answer
		want       string
		request    string // in the stand-in's stderr
	}{
		{"text", get, []answer{{0, []byte(`{"status":200,"headers":{"Content-Type":"text/plain"},"body":"h\u00e9"}`), nil}},
			"ok 200 text/plain 68c3a9", `request {"method":"GET","url":"https://x.test/","headers":{"Accept":"text/plain"},"secret":"s"}` + "\n"},
		{"binary", `{"case":"http","url":"u","binary":true}`, []answer{{0, []byte(`{"status":200,"body_base64":"AP8="}`), nil}},
			"ok 200 - 00ff", `"body_base64":"AP8=","secret":"s"}`},
		{"denied", get, []answer{{7, []byte(`{"error":"http requests to https://x.test/: no grant"}`), nil}},
			"err 7 denied http requests to https://x.test/: no grant", "request "},
		{"failed without an answer", get, []answer{{8, nil, nil}},
			"err 8 not-denied wasmcp host: the request failed", "request "},
		{"buffer too small", get, []answer{{0, []byte(`{"status":200}`), length(5)}},
			"err 4 not-denied wasmcp host: the answer did not fit the 5 bytes announced for it", "request "},
		{"not UTF-8", get, []answer{{0, []byte("{\"status\":200,\"body\":\"\xff\"}"), nil}},
			"err -1 not-denied wasmcp host: unreadable http answer: not UTF-8", "request "},
		{"refusal not UTF-8", get, []answer{{7, []byte("{\"error\":\"\xff\"}"), nil}},
			"err 7 denied wasmcp host: the server's policy does not allow this request", "request "},
		{"length left unwritten", `{"case":"http","url":"u","times":2}`,
			[]answer{{0, []byte(`{"status":200}`), nil}, {4, nil, length(-1)}},
			"ok 200 -  | err 4 not-denied wasmcp host: the request is too long", "request "},
	}
	for _, tt := range tests {
		answers, err := json.Marshal(tt.answers)
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runNode(t, tool.Wasm, tt.args, "WASMCP_TEST_HTTP="+string(answers))
		if code != 0 || stdout != tt.want {
			t.Errorf("%s: exit %d, stdout %q; want %q\n%s", tt.name, code, stdout, tt.want, stderr)
		}
		if !strings.Contains(stderr, tt.request) {
			t.Errorf("%s: the host got no request with %q:\n%s", tt.name, tt.request, stderr)
		}
	}
}

// testHTTPThroughWasmcp makes a request through the real host, which has no
// policy here and so refuses it, saying why.
func testHTTPThroughWasmcp(t *testing.T, tool *Tool) {
	got, isError, stderr := tool.Call(t, `{"case":"http","url":"https://x.test/"}`)
	if isError || !strings.HasPrefix(got, "err 7 denied ") || !strings.Contains(got, "https://x.test/") {
		t.Errorf("http without a grant = %q (isError %v); want a denial naming the URL\n%s", got, isError, stderr)
	}
}

// nodeRunner runs a module as a WASI command under Node, with argv as
// wasmcp passes it and stand-in host functions. WASMCP_TEST_HTTP holds the
// HTTP answers (and the asks') as JSON, one per http_request (the last repeats): the code,
// the answer's bytes in base64, and the length to announce for them, if not
// theirs (-1: none written). Each request goes to stderr.
const nodeRunner = `
const { WASI } = require('node:wasi');
const wasi = new WASI({ version: 'preview1', args: ['astest', 'astest'], returnOnExit: true });
const mod = new WebAssembly.Module(require('node:fs').readFileSync(process.argv[1]));
const answers = JSON.parse(process.env.WASMCP_TEST_HTTP || '[{"code":7,"answer":null}]');
let inst, calls = 0, pending = null;
const mem = () => inst.exports.memory.buffer;
const host = {
  log: () => 0,
  progress: () => 0,
  http_request(ptr, len, lenPtr) {
    const a = answers[Math.min(calls++, answers.length - 1)];
    process.stderr.write('request ' + Buffer.from(mem(), ptr, len).toString() + '\n');
    pending = a.answer ? Buffer.from(a.answer, 'base64') : null;
    const n = a.announce === undefined ? (pending ? pending.length : 0) : a.announce;
    if (n >= 0) new DataView(mem()).setUint32(lenPtr, n, true);
    return a.code;
  },
  http_response(ptr, len) {
    if (pending === null) return 2;
    if (len < pending.length) return 4;
    new Uint8Array(mem(), ptr, pending.length).set(pending);
    pending = null;
    return 0;
  },
};
// The asks of the client share HTTP's answers.
host.elicit = host.create_message = host.list_roots = host.http_request;
host.ask_response = host.http_response;
inst = new WebAssembly.Instance(mod, { wasi_snapshot_preview1: wasi.wasiImport, wasmcp: host });
process.exitCode = wasi.start(inst);
`

func runNode(t *testing.T, wasm, stdin string, env ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("node", "--no-warnings", "-e", nodeRunner, wasm)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errBuf strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errBuf
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return out.String(), errBuf.String(), exit.ExitCode()
	} else if err != nil {
		t.Fatalf("node: %v\n%s", err, errBuf.String())
	}
	return out.String(), errBuf.String(), 0
}

// TestScaffoldPinsTheSameCompiler keeps the versions a new tool folder
// installs equal to the ones this SDK is tested with.
func TestScaffoldPinsTheSameCompiler(t *testing.T) {
	read := func(path string) map[string]string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// The template's only action is the name, which is not JSON as written.
		data = []byte(strings.ReplaceAll(string(data), "{{.Name}}", "x"))
		var p struct {
			DevDependencies map[string]string `json:"devDependencies"`
		}
		if err := json.Unmarshal(data, &p); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return p.DevDependencies
	}
	sdk := read(filepath.Join(Dir, "package.json"))
	tmpl := read(filepath.Join(Dir, "..", "..", "cmd", "wasmcp", "templates", "assemblyscript", "package.json.tmpl"))
	if len(sdk) == 0 || len(sdk) != len(tmpl) {
		t.Fatalf("devDependencies differ: sdk %v, template %v", sdk, tmpl)
	}
	for name, v := range sdk {
		if tmpl[name] != v {
			t.Errorf("%s: sdk pins %q, the template %q", name, v, tmpl[name])
		}
	}
}
