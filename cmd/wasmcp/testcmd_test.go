package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// exampleDir serves echo, which answers its arguments, with the examples
// given in its manifest.
func exampleDir(t *testing.T, examples string) string {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	writeFile(t, filepath.Join(dir, "echo"+abi.SidecarSuffix), `{"abi":1,"tools":[{"name":"echo","description":"Returns its arguments.",
		"inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"output":"json","examples":`+examples+`}]}`)
	return dir
}

func TestTestRunsTheExamples(t *testing.T) {
	dir := exampleDir(t, `[
		{"name":"echoes","arguments":{"n":1},"result":"{\"n\":1}"},
		{"arguments":{"n":2},"contains":"2"},
		{"name":"refuses a string","arguments":{"n":"x"},"isError":true,"contains":"/n"}]`)
	r := wasmcp(t, "", "test", "--cache-dir", "", "--tools", dir)
	if r.code != exitOK {
		t.Fatalf("wasmcp test: %v", r)
	}
	for _, want := range []string{"ok   echo: echoes\n", "ok   echo: example 2\n", "ok   echo: refuses a string\n", "3 passed, 0 failed\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("wasmcp test's report lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestTestReportsEachFailure(t *testing.T) {
	dir := exampleDir(t, `[
		{"name":"wrong answer","arguments":{"n":1},"result":"{\"n\":2}"},
		{"name":"missing text","arguments":{"n":1},"contains":"zebra"},
		{"name":"wants an error","arguments":{"n":1},"isError":true},
		{"name":"fails","arguments":{"n":"x"}},
		{"name":"passes","arguments":{"n":3}}]`)
	r := wasmcp(t, "", "test", "--cache-dir", "", "--tools", dir, "echo")
	if r.code != exitFailure {
		t.Fatalf("wasmcp test with failing examples: %v; want exit 1", r)
	}
	for _, want := range []string{
		`FAIL echo: wrong answer: answered "{\"n\":1}"; the example wants "{\"n\":2}"`,
		`FAIL echo: missing text: answered "{\"n\":1}", without "zebra"`,
		`FAIL echo: wants an error: the call succeeded with "{\"n\":1}"; the example wants a tool error`,
		`FAIL echo: fails: the call failed: invalid arguments for echo:`,
		"ok   echo: passes\n",
		"1 passed, 4 failed\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("wasmcp test's report lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestTestWithoutExamplesFails(t *testing.T) {
	r := wasmcp(t, "", "test", "--cache-dir", "", "--tools", toolDir(t))
	if r.code != exitFailure || !strings.Contains(r.stderr, `add "examples" to a tool's manifest`) {
		t.Errorf("wasmcp test with no examples: %v", r)
	}
	if r := wasmcp(t, "", "test", "--cache-dir", "", "--tools", toolDir(t), "nope"); r.code != exitFailure || !strings.Contains(r.stderr, `no tool "nope"`) {
		t.Errorf("wasmcp test nope: %v", r)
	}
}
