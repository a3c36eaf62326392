package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

type pair struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type sum struct {
	Sum float64 `json:"sum"`
}

var testTools = []Tool{
	Text("add", func(in pair) (string, error) {
		if in.A < 0 {
			return "", errors.New("a must not be negative\nsecond line")
		}
		return fmt.Sprintf("sum is <%g>", in.A+in.B), nil
	}),
	JSON("add_json", func(in pair) (sum, error) { return sum{in.A + in.B}, nil }),
	JSON("null_json", func(struct{}) (map[string]int, error) { return nil, nil }),
	JSON("array_json", func(struct{}) ([]int, error) { return []int{1}, nil }),
	Result("add_result", func(in pair) (*CallResult, error) {
		return &CallResult{
			Content:           []Content{TextContent("sum <ok>"), ImageContent([]byte{1, 2, 3}, "image/png")},
			StructuredContent: sum{in.A + in.B},
			IsError:           in.A+in.B > 100,
		}, nil
	}),
	Result("nil_result", func(struct{}) (*CallResult, error) { return nil, nil }),
	Result("empty_result", func(struct{}) (*CallResult, error) { return &CallResult{}, nil }),
	Result("bad_structured", func(struct{}) (*CallResult, error) {
		return &CallResult{StructuredContent: "text"}, nil
	}),
	Result("raw", func(struct{}) (*CallResult, error) {
		return &CallResult{Content: []Content{
			{Raw: json.RawMessage(`{"type":"resource_link","uri":"file:///x","name":"x"}`)},
			TextContent(""),
		}}, nil
	}),
	Text("panics", func(struct{}) (string, error) { panic("boom") }),
	Text("count", func(in struct{ N int8 }) (string, error) { return "ok", nil }),
	Text("nested", func(in struct {
		Items []struct {
			X string `json:"x"`
		} `json:"items"`
	}) (string, error) {
		return "ok", nil
	}),
}

// invoke drives run the way the host drives a module.
func invoke(t *testing.T, tools []Tool, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"module"}, args...), strings.NewReader(stdin), &out, &errOut, tools, true)
	return code, out.String(), errOut.String()
}

func TestText(t *testing.T) {
	code, out, errOut := invoke(t, testTools, `{"a":1,"b":2.5}`, "add")
	if code != ExitOK || out != "sum is <3.5>" || errOut != "" {
		t.Fatalf("got %d %q %q", code, out, errOut)
	}
}

func TestEmptyStdinIsEmptyObject(t *testing.T) {
	for _, stdin := range []string{"", "  \n", "{}", "null"} {
		code, out, _ := invoke(t, testTools, stdin, "add")
		if code != ExitOK || out != "sum is <0>" {
			t.Errorf("stdin %q: got %d %q", stdin, code, out)
		}
	}
}

func TestUnknownFieldsIgnored(t *testing.T) {
	code, out, _ := invoke(t, testTools, `{"a":1,"b":1,"c":"x"}`, "add")
	if code != ExitOK || out != "sum is <2>" {
		t.Fatalf("got %d %q", code, out)
	}
}

func TestToolError(t *testing.T) {
	code, out, errOut := invoke(t, testTools, `{"a":-1}`, "add")
	if code != ExitError || out != "" {
		t.Fatalf("got %d %q", code, out)
	}
	if errOut != "a must not be negative second line\n" {
		t.Fatalf("stderr %q", errOut)
	}
}

func TestJSON(t *testing.T) {
	code, out, _ := invoke(t, testTools, `{"a":1,"b":2}`, "add_json")
	if code != ExitOK || out != `{"sum":3}` {
		t.Fatalf("got %d %q", code, out)
	}
}

func TestJSONMustBeObject(t *testing.T) {
	for _, name := range []string{"null_json", "array_json"} {
		code, out, errOut := invoke(t, testTools, `{}`, name)
		if code != ExitError || out != "" || !strings.Contains(errOut, "must encode to a JSON object") {
			t.Errorf("%s: got %d %q %q", name, code, out, errOut)
		}
	}
}

func TestResult(t *testing.T) {
	code, out, _ := invoke(t, testTools, `{"a":1,"b":2}`, "add_result")
	want := `{"content":[{"type":"text","text":"sum <ok>"},{"type":"image","data":"AQID","mimeType":"image/png"}],"structuredContent":{"sum":3}}`
	if code != ExitOK || out != want {
		t.Fatalf("got %d\n%s\nwant\n%s", code, out, want)
	}

	// IsError is the model's business: the run itself succeeded.
	code, out, _ = invoke(t, testTools, `{"a":100,"b":2}`, "add_result")
	if code != ExitOK || !strings.HasSuffix(out, `"isError":true}`) {
		t.Fatalf("got %d %s", code, out)
	}
}

func TestResultShapes(t *testing.T) {
	tests := []struct {
		tool, out, stderr string
		code              int
	}{
		{"empty_result", `{"content":[]}`, "", ExitOK},
		{"raw", `{"content":[{"type":"resource_link","uri":"file:///x","name":"x"},{"type":"text","text":""}]}`, "", ExitOK},
		{"nil_result", "", "tool returned no result", ExitError},
		{"bad_structured", "", "structuredContent must encode to a JSON object", ExitError},
	}
	for _, tt := range tests {
		code, out, errOut := invoke(t, testTools, `{}`, tt.tool)
		if code != tt.code || out != tt.out || !strings.Contains(errOut, tt.stderr) {
			t.Errorf("%s: got %d %q %q", tt.tool, code, out, errOut)
		}
	}
}

func TestContentErrors(t *testing.T) {
	if _, err := json.Marshal(Content{Type: "image", Data: []byte{1}}); err == nil {
		t.Error("image without MIME type encoded")
	}
	if _, err := json.Marshal(Content{Type: "video"}); err == nil {
		t.Error("unknown content type encoded")
	}
	if _, err := json.Marshal(Content{Raw: json.RawMessage(`{`)}); err == nil {
		t.Error("invalid Raw encoded")
	}
	b, err := json.Marshal(AudioContent(nil, "audio/wav"))
	if err != nil || string(b) != `{"type":"audio","data":"","mimeType":"audio/wav"}` {
		t.Errorf("audio: %s %v", b, err)
	}
}

func TestBadArguments(t *testing.T) {
	tests := []struct{ tool, stdin, want string }{
		{"add", `{"a":"x"}`, `invalid arguments: "a" must be a number, not a string`},
		{"add", `[1,2]`, `invalid arguments: arguments must be an object, not an array`},
		{"add", `{"a":true}`, `invalid arguments: "a" must be a number, not a boolean`},
		{"add", `{"a":1`, `invalid arguments: not valid JSON`},
		{"add", `{"a":1}{}`, `invalid arguments: not valid JSON`},
		{"count", `{"N":1.5}`, `invalid arguments: "N" must be an integer that fits int8, not 1.5`},
		{"count", `{"N":300}`, `invalid arguments: "N" must be an integer that fits int8, not 300`},
		{"nested", `{"items":[{"x":1}]}`, `invalid arguments: "items.x" must be a string, not a number`},
	}
	for _, tt := range tests {
		code, out, errOut := invoke(t, testTools, tt.stdin, tt.tool)
		if code != ExitError || out != "" || !strings.HasPrefix(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s %s: got %d %q %q, want stderr starting %q", tt.tool, tt.stdin, code, out, errOut, tt.want)
		}
	}
}

func TestUnknownTool(t *testing.T) {
	code, out, errOut := invoke(t, testTools[:2], `{}`, "nope")
	if code != ExitUsage || out != "" || errOut != `unknown tool "nope"; this module has tools "add", "add_json"`+"\n" {
		t.Fatalf("got %d %q %q", code, out, errOut)
	}
}

func TestNoToolName(t *testing.T) {
	// One tool: run it, so the module also works by hand.
	code, out, _ := invoke(t, testTools[:1], `{"a":1,"b":1}`)
	if code != ExitOK || out != "sum is <2>" {
		t.Fatalf("single tool: got %d %q", code, out)
	}
	code, _, errOut := invoke(t, testTools[:2], `{}`)
	if code != ExitUsage || !strings.Contains(errOut, "no tool name given") {
		t.Fatalf("two tools: got %d %q", code, errOut)
	}
	code, _, errOut = invoke(t, nil, `{}`)
	if code != ExitUsage || !strings.Contains(errOut, "this module has no tools") {
		t.Fatalf("no tools: got %d %q", code, errOut)
	}
}

func TestRegistrationBugs(t *testing.T) {
	code, _, errOut := invoke(t, []Tool{testTools[0], testTools[0]}, `{}`, "add")
	if code != ExitUsage || !strings.Contains(errOut, "module bug") {
		t.Fatalf("duplicate: got %d %q", code, errOut)
	}
	code, _, errOut = invoke(t, []Tool{{}}, `{}`, "")
	if code != ExitUsage || !strings.Contains(errOut, "module bug") {
		t.Fatalf("zero Tool: got %d %q", code, errOut)
	}
}

func TestPanicEndsWithMessage(t *testing.T) {
	code, out, errOut := invoke(t, testTools, `{}`, "panics")
	if code != ExitError || out != "" {
		t.Fatalf("got %d %q", code, out)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if last := lines[len(lines)-1]; last != `internal error in tool "panics": boom` {
		t.Fatalf("last stderr line %q", last)
	}
	if !strings.Contains(errOut, "goroutine") {
		t.Fatalf("no stack in stderr: %q", errOut)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("broken pipe") }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestIOErrors(t *testing.T) {
	var errOut bytes.Buffer
	if code := run([]string{"m", "add"}, failingReader{}, io.Discard, &errOut, testTools, true); code != ExitError || !strings.Contains(errOut.String(), "broken pipe") {
		t.Errorf("read: got %d %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"m", "add"}, strings.NewReader("{}"), failingWriter{}, &errOut, testTools, true); code != ExitError || !strings.Contains(errOut.String(), "disk full") {
		t.Errorf("write: got %d %q", code, errOut.String())
	}
}

func TestName(t *testing.T) {
	if n := testTools[1].Name(); n != "add_json" {
		t.Fatalf("Name() = %q", n)
	}
}

func TestRunCallTakesTheCallsArgumentsAndEnvironment(t *testing.T) {
	t.Setenv("LEFT_OVER", "from the snapshot")
	saved := registered
	t.Cleanup(func() { registered = saved })
	registered = nil
	Register(Text("env", func(struct{}) (string, error) {
		return os.Args[1] + " " + os.Getenv("GRANTED") + " [" + os.Getenv("LEFT_OVER") + "]", nil
	}))
	var stdout, stderr bytes.Buffer
	if status := runCall([]string{"m", "env"}, []string{"GRANTED=yes"}, strings.NewReader("{}"), &stdout, &stderr); status != ExitOK {
		t.Fatalf("status %d: %s", status, &stderr)
	}
	if stdout.String() != "env yes []" {
		t.Errorf("stdout %q; want the call's argv and environment only", stdout.String())
	}
}
