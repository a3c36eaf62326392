// Package astest compiles AssemblyScript guests with the compiler pinned in
// this directory's package-lock.json and runs them under a freshly built
// wasmcp, so that Go tests can test AssemblyScript code where it really runs.
// The SDK's own tests are in as_test.go; example tools use it for theirs.
//
// The compiler comes from npm: scripts/setup runs `npm ci` here. When it is
// missing the tests fail with that instruction; they never skip, so CI cannot
// pass without running them.
package astest

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Dir is this directory: the SDK, with node_modules beside it.
var Dir = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}()

// shimConfig is relative because asc resolves the config's "lib" path
// against its working directory; an absolute config path breaks that.
const shimConfig = "./node_modules/@assemblyscript/wasi-shim/asconfig.json"

// Compile compiles the AssemblyScript file entry into the module out, as the
// build scripts do.
func Compile(t testing.TB, entry, out string) {
	t.Helper()
	asc := filepath.Join(Dir, "node_modules", ".bin", "asc")
	if _, err := os.Stat(asc); err != nil {
		t.Fatal("asc not found: run scripts/setup")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node not found: run scripts/setup")
	}
	entry, _ = filepath.Abs(entry)
	out, _ = filepath.Abs(out)
	cmd := exec.Command(asc, entry, "--config", shimConfig, "-O3", "-o", out)
	cmd.Dir = Dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("asc %s: %v\n%s", entry, err, msg)
	}
}

// Tool is a compiled guest that wasmcp serves as one tool.
type Tool struct {
	wasmcp string
	dir    string
	Name   string
	Wasm   string // the module's path
}

// Build compiles entry into a module served as the tool name, with a
// manifest that accepts any object and reads the output as text, and builds
// wasmcp to run it.
func Build(t testing.TB, entry, name string) *Tool {
	t.Helper()
	dir := t.TempDir()
	tool := &Tool{dir: dir, Name: name, Wasm: filepath.Join(dir, name+".wasm"), wasmcp: filepath.Join(dir, "wasmcp")}
	Compile(t, entry, tool.Wasm)
	// It may ask the client by elicitation, as the SDK's tests do.
	manifest := `{"abi":1,"tools":[{"name":"` + name + `","description":"test module","inputSchema":{"type":"object"},"client":["elicitation"]}]}`
	if err := os.WriteFile(filepath.Join(dir, name+".manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", tool.wasmcp, "github.com/wasmcp/wasmcp/cmd/wasmcp")
	cmd.Dir = Dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building wasmcp: %v\n%s", err, msg)
	}
	return tool
}

// Call runs the tool once, as tools/call would, with args (a JSON object).
// It returns the result's text, whether the result is an error, and
// wasmcp's stderr, where the tool's log and progress reports appear.
func (tl *Tool) Call(t testing.TB, args string) (text string, isError bool, stderr string) {
	t.Helper()
	cmd := exec.Command(tl.wasmcp, "call", "--tools", tl.dir, "--cache-dir", "", tl.Name, args)
	if len(args) > 100 {
		args = args[:100] + "..." // for messages
	}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("wasmcp call %s %s: %v\n%s", tl.Name, args, err, errBuf.String())
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("wasmcp call %s %s printed no result: %v\n%s%s", tl.Name, args, err, out, errBuf.String())
	}
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n"), res.IsError, errBuf.String()
}

// Unit runs a test module's {"case":"unit"} call, which prints one line per
// failed check and a closing "N passed, M failed", and reports the failures.
func (tl *Tool) Unit(t testing.TB) {
	t.Helper()
	out, isError, stderr := tl.Call(t, `{"case":"unit"}`)
	if isError {
		t.Fatalf("unit tests did not run: %s\n%s", out, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		t.Error(l)
	}
	if !strings.HasSuffix(last, " passed, 0 failed") || strings.HasPrefix(last, "0 passed") {
		t.Errorf("unit tests: %s", last)
	}
	t.Logf("%s: %s", tl.Name, last)
}
