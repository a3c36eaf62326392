package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestMain lets the test binary be the compile worker that the commands
// under test start: they find their worker as their own executable, which
// here is this binary.
//
// It also plays the two parts of TestWorkersStartFromTheRunningBinary.
func TestMain(m *testing.M) {
	switch {
	case len(os.Args) > 1 && os.Args[1] == workerCommand:
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	case len(os.Args) > 1 && os.Args[1] == startedArg:
		fmt.Print(startedArg)
		os.Exit(0)
	case os.Getenv(removeSelfEnv) != "":
		os.Exit(startAfterRemoval())
	}
	os.Exit(m.Run())
}

// startedArg and removeSelfEnv start the parts TestMain plays for
// TestWorkersStartFromTheRunningBinary.
const (
	startedArg    = "started-from-self"
	removeSelfEnv = "WASMCP_TEST_REMOVE_SELF"
)

// startAfterRemoval removes this process's binary, as an upgrade in place
// does, then starts self as the server starts a worker.
func startAfterRemoval() int {
	exe, err := os.Executable()
	if err == nil {
		err = os.Remove(exe)
	}
	path, perr := self()
	if err = errors.Join(err, perr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(path, startedArg)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// hangGuard bounds one command's run. It guards against hanging and is
// never a performance figure.
const hangGuard = 60 * time.Second

// result is what one run of the command line produced.
type result struct {
	code           int
	stdout, stderr string
}

// wasmcp runs the command line in-process with stdin as its input.
func wasmcp(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	if ctx.Err() != nil {
		t.Fatalf("wasmcp %q did not finish within %v", args, hangGuard)
	}
	return result{code, stdout.String(), stderr.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// Compile workers start from the file the server runs, not from its path:
// an upgrade in place removes the file at the path, or puts another
// version there.
func TestWorkersStartFromTheRunningBinary(t *testing.T) {
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	deployed := filepath.Join(t.TempDir(), "wasmcp")
	if err := os.WriteFile(deployed, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(deployed)
	cmd.Env = append(os.Environ(), removeSelfEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != startedArg {
		t.Fatalf("starting self once the binary is removed: %v\n%s", err, out)
	}
	if _, err := os.Stat(deployed); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the binary was not removed: %v", err)
	}
}

// dirFlags point a command at a tool directory, with no disk cache.
func dirFlags(dir string) []string { return []string{"--tools", dir, "--cache-dir", ""} }

func args(dir string, rest ...string) []string { return append(dirFlags(dir), rest...) }

const echoManifest = `{
  "abi": 1,
  "tools": [{
    "name": "echo",
    "description": "Returns its arguments.",
    "inputSchema": {"type": "object"},
    "output": "json"
  }]
}`

const failManifest = `{"abi":1,"tools":[{"name":"fail","description":"Always fails.","inputSchema":{"type":"object"}}]}`

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// toolDir returns a directory serving "echo" (output json) and "fail".
func toolDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	writeFile(t, filepath.Join(dir, "echo"+abi.SidecarSuffix), echoManifest)
	wattest.Write(t, dir, "fail", "fail")
	writeFile(t, filepath.Join(dir, "fail"+abi.SidecarSuffix), failManifest)
	return dir
}

func TestTopLevelUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, exitUsage, "Usage: wasmcp <command>"},
		{[]string{"help"}, exitOK, "Usage: wasmcp <command>"},
		{[]string{"-h"}, exitOK, "Usage: wasmcp <command>"},
		{[]string{"--help"}, exitOK, "Usage: wasmcp <command>"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"--tools", "x"}, exitUsage, `unknown command "--tools"`},
	} {
		r := wasmcp(t, "", tc.args...)
		if r.code != tc.code {
			t.Errorf("wasmcp %q: %v\nwant exit %d", tc.args, r, tc.code)
		}
		if !strings.Contains(r.stderr, tc.want) {
			t.Errorf("wasmcp %q: stderr does not mention %q:\n%s", tc.args, tc.want, r.stderr)
		}
		for _, c := range commands {
			if !strings.Contains(r.stderr, "  "+c.name+" ") {
				t.Errorf("wasmcp %q: usage does not list %s", tc.args, c.name)
			}
		}
		if r.stdout != "" {
			t.Errorf("wasmcp %q wrote to stdout: %q", tc.args, r.stdout)
		}
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for _, c := range commands {
		for _, flag := range []string{"--help", "-h"} {
			r := wasmcp(t, "", c.name, flag)
			if r.code != exitOK {
				t.Errorf("wasmcp %s %s: %v\nwant exit 0", c.name, flag, r)
			}
			if !strings.Contains(r.stderr, "Usage: wasmcp "+c.name) {
				t.Errorf("wasmcp %s %s: no usage line:\n%s", c.name, flag, r.stderr)
			}
		}
	}
}

func TestUnknownFlag(t *testing.T) {
	for _, c := range commands {
		r := wasmcp(t, "", c.name, "--no-such-flag")
		if r.code != exitUsage || !strings.Contains(r.stderr, "no-such-flag") {
			t.Errorf("wasmcp %s --no-such-flag: %v\nwant exit 2 naming the flag", c.name, r)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := wasmcp(t, "", args...)
		if r.code != exitOK || !strings.HasPrefix(r.stdout, "wasmcp "+version+"\n") || !strings.Contains(r.stdout, "engines: wazero") {
			t.Errorf("wasmcp %s: %v", args[0], r)
		}
	}
}

// The version names the revision a binary was built from, as Go records
// it, and a release's module version.
func TestDescribeBuild(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "3133d56abcdef"}, {Key: "vcs.time", Value: "2026-11-30T12:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	got := describeBuild(moduleVersion(bi), bi)
	for _, want := range []string{"wasmcp " + devVersion + "\n", "revision 3133d56abcdef (committed 2026-11-30T12:00:00Z, with uncommitted changes)\n", "built with go1.26.8 for "} {
		if !strings.Contains(got, want) {
			t.Errorf("describeBuild = %q; want it to contain %q", got, want)
		}
	}
	if v := moduleVersion(&debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}); v != "v0.2.0" {
		t.Errorf("version of a go install ...@v0.2.0 = %q", v)
	}
}

// inspected is the part of `inspect --json` the tests read.
type inspected struct {
	File     string        `json:"file"`
	SHA256   string        `json:"sha256"`
	Size     int           `json:"size"`
	Imports  []string      `json:"imports"`
	Exports  []string      `json:"exports"`
	Custom   []string      `json:"customSections"`
	Manifest *abi.Manifest `json:"manifest"`
	From     string        `json:"manifestFrom"`
	Problems []string      `json:"problems"`
}

func inspectJSON(t *testing.T, path string) (inspected, result) {
	t.Helper()
	r := wasmcp(t, "", "inspect", "--json", path)
	var in inspected
	if err := json.Unmarshal([]byte(r.stdout), &in); err != nil {
		t.Fatalf("inspect --json output is not JSON: %v\n%v", err, r)
	}
	return in, r
}

// listed is `list --json`'s output, as the tests read it.
type listed struct {
	Tools []struct {
		Name     string `json:"name"`
		Module   string `json:"module"`
		Manifest string `json:"manifest"`
		Output   string `json:"output"`
		Compiled *bool  `json:"compiled"`
		Limits   struct {
			Timeout string `json:"timeout"`
			Memory  string `json:"memory"`
		} `json:"limits"`
	} `json:"tools"`
	Errors []struct {
		File  string `json:"file"`
		Error string `json:"error"`
	} `json:"errors"`
}

func listJSON(t *testing.T, dir string, extra ...string) (listed, result) {
	t.Helper()
	r := wasmcp(t, "", append(append([]string{"list", "--json"}, extra...), dirFlags(dir)...)...)
	var l listed
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatalf("list --json output is not JSON: %v\n%v", err, r)
	}
	return l, r
}

func TestPackThenInspectListAndCall(t *testing.T) {
	dir := t.TempDir()
	module := wattest.Write(t, dir, "echo", "packed")
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	writeFile(t, manifest, strings.Replace(echoManifest, `"echo"`, `"packed_echo"`, 1))

	r := wasmcp(t, "", "pack", "--manifest", manifest, module)
	if r.code != exitOK || !strings.Contains(r.stdout, "packed "+manifest+" into "+module) {
		t.Fatalf("pack: %v", r)
	}

	in, r := inspectJSON(t, module)
	if r.code != exitOK {
		t.Fatalf("inspect: %v", r)
	}
	if in.From != "embedded" || in.Manifest == nil || len(in.Manifest.Tools) != 1 || in.Manifest.Tools[0].Name != "packed_echo" {
		t.Errorf("inspect shows manifest %+v from %q; want packed_echo, embedded", in.Manifest, in.From)
	}
	if len(in.Custom) != 1 || !strings.HasPrefix(in.Custom[0], abi.CustomSection+" (") {
		t.Errorf("custom sections = %v; want one %s", in.Custom, abi.CustomSection)
	}
	if len(in.Problems) != 0 {
		t.Errorf("problems = %v", in.Problems)
	}
	if !slices.Contains(in.Exports, "func _start") || !slices.Contains(in.Imports, "func wasi_snapshot_preview1.fd_read") {
		t.Errorf("imports %v, exports %v", in.Imports, in.Exports)
	}
	if len(in.SHA256) != 64 || in.File != module {
		t.Errorf("file %q, sha256 %q", in.File, in.SHA256)
	}
	if fi, err := os.Stat(module); err != nil || int64(in.Size) != fi.Size() {
		t.Errorf("size %d; file: %v, %v", in.Size, fi, err)
	}

	// The text form says the same.
	r = wasmcp(t, "", "inspect", module)
	if r.code != exitOK || !strings.Contains(r.stdout, "manifest (embedded):") || !strings.Contains(r.stdout, `"packed_echo"`) {
		t.Errorf("inspect (text): %v", r)
	}

	l, r := listJSON(t, dir)
	if r.code != exitOK {
		t.Fatalf("list: %v", r)
	}
	if len(l.Tools) != 1 || len(l.Errors) != 0 {
		t.Fatalf("list: %+v", l)
	}
	lt := l.Tools[0]
	if lt.Name != "packed_echo" || lt.Manifest != "embedded" || lt.Module != module || lt.Output != "json" || lt.Compiled == nil || !*lt.Compiled {
		t.Errorf("listed tool %+v", lt)
	}
	if lt.Limits.Timeout != "10s" || lt.Limits.Memory != "64MiB" {
		t.Errorf("listed limits %+v; want the default ceilings", lt.Limits)
	}

	r = wasmcp(t, "", append([]string{"call"}, args(dir, "packed_echo", `{"x":1}`)...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, `"structuredContent"`) {
		t.Errorf("call: %v", r)
	}
}

func TestPackInitThenCallAReactor(t *testing.T) {
	dir := t.TempDir()
	module := wattest.Write(t, dir, "reactor", "reactor")
	manifest := filepath.Join(t.TempDir(), "m.json")
	writeFile(t, manifest, `{"abi":1,"start":"reactor","tools":[{"name":"show","description":"Shows what it saw.","inputSchema":{"type":"object"}}]}`)
	for _, init := range []string{"first bundle", "bundle"} { // the second replaces the first
		file := filepath.Join(t.TempDir(), "init.bin")
		writeFile(t, file, init)
		if r := wasmcp(t, "", "pack", "--manifest", manifest, "--init", file, module); r.code != exitOK || !strings.Contains(r.stdout, "packed "+file+" into "+module) {
			t.Fatalf("pack: %v", r)
		}
	}
	r := wasmcp(t, "", append([]string{"call"}, args(dir, "show", `{"x":1}`)...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, `bundle|10|20|11|{\"x\":1}`) || strings.Contains(r.stdout, "first") {
		t.Errorf("call: %v", r)
	}
	if r := wasmcp(t, "", "pack", module); r.code != exitUsage {
		t.Errorf("pack without --manifest or --init: %v", r)
	}
}

func TestPackReplacesTheEmbeddedManifest(t *testing.T) {
	dir := t.TempDir()
	module := wattest.Write(t, dir, "echo", "tool")
	for _, name := range []string{"first", "second"} {
		manifest := filepath.Join(t.TempDir(), "m.json")
		writeFile(t, manifest, strings.Replace(echoManifest, `"echo"`, `"`+name+`"`, 1))
		if r := wasmcp(t, "", "pack", "--manifest", manifest, module); r.code != exitOK {
			t.Fatalf("pack %s: %v", name, r)
		}
	}
	in, r := inspectJSON(t, module)
	if r.code != exitOK || len(in.Custom) != 1 || in.Manifest == nil || in.Manifest.Tools[0].Name != "second" {
		t.Errorf("after packing twice: %+v\n%v", in, r)
	}
	// The section holds the manifest compacted.
	wasm, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(wasm, []byte(`{"abi":1,"tools":[{"name":"second"`)) {
		t.Error("the embedded manifest is not compacted JSON")
	}
}

func TestPackToAnotherFile(t *testing.T) {
	dir := t.TempDir()
	module := wattest.Write(t, dir, "echo", "plain")
	before, _ := os.ReadFile(module)
	manifest := filepath.Join(dir, "m.json")
	writeFile(t, manifest, echoManifest)
	out := filepath.Join(t.TempDir(), "out.wasm")

	if r := wasmcp(t, "", "pack", "--manifest", manifest, "-o", out, module); r.code != exitOK {
		t.Fatalf("pack -o: %v", r)
	}
	if after, _ := os.ReadFile(module); !bytes.Equal(before, after) {
		t.Error("pack -o changed its input")
	}
	in, r := inspectJSON(t, out)
	if r.code != exitOK || in.From != "embedded" {
		t.Errorf("packed output: %+v\n%v", in, r)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("packed output mode: %v, %v; want 0644", fi, err)
	}
}

func TestPackRefusesAndLeavesTheTargetUntouched(t *testing.T) {
	badSchema := strings.Replace(echoManifest, `{"type": "object"}`, `{"type": "object", "properties": {"x": {"type": "integr"}}}`, 1)
	for _, tc := range []struct {
		name     string
		manifest string // "" for a missing file
		module   string // wat module, or "" for a file that is not Wasm
		want     string
	}{
		{"no description", `{"abi":1,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`, "echo", `"description" is required`},
		{"invalid schema", badSchema, "echo", `tool "echo": inputSchema: invalid schema`},
		{"invalid output schema", `{"abi":1,"tools":[{"name":"t","description":"d","output":"json","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":"n"}}]}`, "echo", "outputSchema"},
		{"not JSON", `{"abi":1,`, "echo", "manifest is not valid JSON"},
		{"wrong abi", `{"abi":7,"tools":[]}`, "echo", "abi 7"},
		{"missing manifest", "", "echo", "no such file"},
		{"module not Wasm", echoManifest, "", "not a WebAssembly binary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var module string
			if tc.module != "" {
				module = wattest.Write(t, dir, tc.module, "target")
			} else {
				module = filepath.Join(dir, "target.wasm")
				writeFile(t, module, "not a module")
			}
			manifest := filepath.Join(t.TempDir(), "m.json")
			if tc.manifest != "" {
				writeFile(t, manifest, tc.manifest)
			}
			before, err := os.ReadFile(module)
			if err != nil {
				t.Fatal(err)
			}
			r := wasmcp(t, "", "pack", "--manifest", manifest, module)
			if r.code != exitFailure {
				t.Errorf("exit %d; want 1\n%v", r.code, r)
			}
			if !strings.HasPrefix(r.stderr, "wasmcp pack: ") || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr %q does not mention %q", r.stderr, tc.want)
			}
			after, err := os.ReadFile(module)
			if err != nil || !bytes.Equal(before, after) {
				t.Errorf("the target changed (err %v)", err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("pack left files behind: %v", names)
			}
		})
	}
}

func TestPackUsage(t *testing.T) {
	for _, a := range [][]string{
		{"pack"},
		{"pack", "x.wasm"},
		{"pack", "--manifest", "m.json"},
		{"pack", "--manifest", "m.json", "a.wasm", "b.wasm"},
	} {
		if r := wasmcp(t, "", a...); r.code != exitUsage || !strings.Contains(r.stderr, "Usage: wasmcp pack") {
			t.Errorf("wasmcp %q: %v\nwant exit 2 with usage", a, r)
		}
	}
}

func TestInspectReportsProblems(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		wat  string
		want string
	}{
		{"no manifest", "echo", "no manifest"},
		{"no _start", "nostart", `exports no "_start" function`},
		{"bad import", "badimport", "env.open_socket"},
		{"bad import type", "badsig", "imports wasmcp.log as (i64) -> i64, but wasmcp defines it (docs/abi.md) as (i32, i32, i32) -> i32"},
	} {
		path := wattest.Write(t, dir, tc.wat, strings.ReplaceAll(tc.name, " ", "_"))
		in, r := inspectJSON(t, path)
		if r.code != exitFailure {
			t.Errorf("%s: exit %d; want 1", tc.name, r.code)
		}
		if len(in.Problems) != 1 || !strings.Contains(in.Problems[0], tc.want) {
			t.Errorf("%s: problems %v; want one mentioning %q", tc.name, in.Problems, tc.want)
		}
		if in.Manifest != nil {
			t.Errorf("%s: manifest %+v", tc.name, in.Manifest)
		}
	}
	// A sidecar is found and named as the source.
	path := wattest.Write(t, dir, "echo", "sidecar")
	sidecar := filepath.Join(dir, "sidecar"+abi.SidecarSuffix)
	writeFile(t, sidecar, echoManifest)
	if in, r := inspectJSON(t, path); r.code != exitOK || in.From != sidecar {
		t.Errorf("with a sidecar: from %q\n%v", in.From, r)
	}

	notWasm := filepath.Join(dir, "junk.wasm")
	writeFile(t, notWasm, "junk")
	if r := wasmcp(t, "", "inspect", notWasm); r.code != exitFailure || !strings.Contains(r.stderr, "not a WebAssembly binary") {
		t.Errorf("inspect junk: %v", r)
	}
	if r := wasmcp(t, "", "inspect", filepath.Join(dir, "absent.wasm")); r.code != exitFailure {
		t.Errorf("inspect a missing file: %v", r)
	}
	if r := wasmcp(t, "", "inspect"); r.code != exitUsage {
		t.Errorf("inspect without a file: %v", r)
	}
}

// callResult is the part of a printed CallToolResult the tests read.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func TestCall(t *testing.T) {
	dir := toolDir(t)
	for _, tc := range []struct {
		name       string
		stdin      string
		args       []string // after the directory flags
		code       int
		structured map[string]any // of a printed result
		isError    bool
		text       string // in the printed result's text
		stderr     string // in stderr
	}{
		{name: "success", args: []string{"echo", `{"a":1}`}, code: exitOK, structured: map[string]any{"a": 1.0}},
		{name: "no arguments", args: []string{"echo"}, code: exitOK, structured: map[string]any{}},
		{name: "arguments from stdin", stdin: `{"from":"stdin"}`, args: []string{"echo", "-"}, code: exitOK, structured: map[string]any{"from": "stdin"}},
		{name: "empty stdin", stdin: "", args: []string{"echo", "-"}, code: exitOK, structured: map[string]any{}},
		{name: "tool error", args: []string{"fail", "{}"}, code: exitFailure, isError: true, text: "fail failed (exit status 3): noise\nthe widget is broken"},
		{name: "invalid arguments for the schema", args: []string{"echo", "[1]"}, code: exitFailure, isError: true, text: "invalid arguments for echo"},
		{name: "unknown tool", args: []string{"nope"}, code: exitFailure, stderr: `no tool "nope" in ` + dir + ` (tools: echo, fail)`},
		{name: "arguments not JSON", args: []string{"echo", `{"a":`}, code: exitUsage, stderr: "the arguments are not valid JSON"},
		{name: "stdin not JSON", stdin: "hello", args: []string{"echo", "-"}, code: exitUsage, stderr: "the arguments are not valid JSON"},
		{name: "no tool", args: nil, code: exitUsage, stderr: "Usage: wasmcp call"},
		{name: "too many arguments", args: []string{"echo", "{}", "{}"}, code: exitUsage, stderr: "Usage: wasmcp call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := wasmcp(t, tc.stdin, append([]string{"call"}, args(dir, tc.args...)...)...)
			if r.code != tc.code {
				t.Fatalf("%v\nwant exit %d", r, tc.code)
			}
			if tc.stderr != "" && !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("stderr %q does not mention %q", r.stderr, tc.stderr)
			}
			printed := tc.structured != nil || tc.isError
			if !printed {
				if r.stdout != "" {
					t.Errorf("stdout = %q; want nothing", r.stdout)
				}
				return
			}
			var res callResult
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("stdout is not a JSON result: %v\n%s", err, r.stdout)
			}
			if res.IsError != tc.isError {
				t.Errorf("isError = %v; want %v", res.IsError, tc.isError)
			}
			if tc.structured != nil && !jsonEqual(res.StructuredContent, tc.structured) {
				t.Errorf("structuredContent = %v; want %v", res.StructuredContent, tc.structured)
			}
			if tc.text != "" && (len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tc.text)) {
				t.Errorf("content = %+v; want text containing %q", res.Content, tc.text)
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestList(t *testing.T) {
	dir := toolDir(t)
	r := wasmcp(t, "", append([]string{"list"}, dirFlags(dir)...)...)
	if r.code != exitOK {
		t.Fatalf("list of a clean directory: %v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "TOOL") ||
		!strings.HasPrefix(lines[1], "echo ") || !strings.Contains(lines[1], "Returns its arguments.") ||
		!strings.HasPrefix(lines[2], "fail ") {
		t.Errorf("list table:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "NOT LOADED") {
		t.Errorf("list of a clean directory reports failures:\n%s", r.stdout)
	}

	// One broken file makes the listing fail, and says why.
	notWasm := filepath.Join(dir, "junk.wasm")
	writeFile(t, notWasm, "junk")
	r = wasmcp(t, "", append([]string{"list"}, dirFlags(dir)...)...)
	if r.code != exitFailure {
		t.Errorf("exit %d; want 1", r.code)
	}
	_, after, found := strings.Cut(r.stdout, "\nNOT LOADED\n")
	if !found || !strings.Contains(after, notWasm+": not a WebAssembly binary") {
		t.Errorf("list does not report the broken file:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "echo ") {
		t.Errorf("the good tools are not listed:\n%s", r.stdout)
	}

	l, r := listJSON(t, dir)
	if r.code != exitFailure || len(l.Tools) != 2 || len(l.Errors) != 1 || l.Errors[0].File != notWasm {
		t.Errorf("list --json: %+v\n%v", l, r)
	}
}

// uncompilable passes every load-time check but exports a function that
// does not exist, so only compiling finds the fault.
var uncompilable = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x07, 0x0a, 0x01, 0x06, '_', 's', 't', 'a', 'r', 't', 0x00, 0x00,
}

func TestListCompiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broken.wasm")
	if err := os.WriteFile(path, uncompilable, 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "broken"+abi.SidecarSuffix), strings.Replace(echoManifest, `"echo"`, `"broken"`, 1))

	l, r := listJSON(t, dir)
	if r.code != exitFailure || len(l.Errors) != 1 || !strings.Contains(l.Errors[0].Error, "does not compile") {
		t.Errorf("list: %+v\n%v", l, r)
	}
	if len(l.Tools) != 1 || l.Tools[0].Compiled == nil || *l.Tools[0].Compiled {
		t.Errorf("tools: %+v; want broken listed as not compiled", l.Tools)
	}

	l, r = listJSON(t, dir, "--compile=false")
	if r.code != exitOK || len(l.Errors) != 0 || len(l.Tools) != 1 || l.Tools[0].Compiled != nil {
		t.Errorf("list --compile=false: %+v\n%v", l, r)
	}
}

func TestBadHostFlags(t *testing.T) {
	dir := toolDir(t)
	for _, tc := range []struct {
		flags []string
		code  int
		want  string
	}{
		{[]string{"--memory", "10MB"}, exitUsage, `bad size "10MB"`},
		{[]string{"--memory", "-1"}, exitUsage, "bad size"},
		{[]string{"--memory", "1KiB"}, exitFailure, "--memory must be at least 64KiB"},
		{[]string{"--output", "0"}, exitFailure, "--output must be positive"},
		{[]string{"--timeout", "0"}, exitFailure, "--timeout must be positive"},
		{[]string{"--timeout", "-1s"}, exitFailure, "--timeout must be positive"},
		{[]string{"--timeout", "ten"}, exitUsage, "invalid value"},
		{[]string{"--concurrency", "0"}, exitFailure, "--concurrency must be at least 1"},
		{[]string{"--queue-timeout", "-1s"}, exitFailure, "--queue-timeout must not be negative"},
		{[]string{"--log-level", "loud"}, exitFailure, "--log-level"},
		{[]string{"--log-format", "xml"}, exitFailure, `--log-format must be text or json, not "xml"`},
		{[]string{"--tools", filepath.Join(dir, "absent")}, exitFailure, "absent: no such file or directory: create it, or name the directory of your .wasm tools with --tools DIR (without --tools, wasmcp uses ./tools if there is one, else "},
	} {
		for _, cmd := range []string{"list", "call", "serve"} {
			a := append([]string{cmd, "--cache-dir", "", "--tools", dir}, tc.flags...)
			if cmd == "call" {
				a = append(a, "echo")
			}
			r := wasmcp(t, "", a...)
			if r.code != tc.code {
				t.Errorf("wasmcp %q: exit %d; want %d\n%v", a, r.code, tc.code, r)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("wasmcp %q: stderr does not mention %q:\n%s", a, tc.want, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("wasmcp %q wrote to stdout: %q", a, r.stdout)
			}
		}
	}
}

func TestBadServeFlags(t *testing.T) {
	dir := toolDir(t)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--request-budget", "1MiB"}, "--request-budget must be at least 4MiB"},
		{[]string{"--http", "127.0.0.1:0", "--max-connections", "1"}, "--max-connections must be at least 2"},
		{[]string{"--max-tasks", "0"}, "--max-tasks-per-session, --max-tasks, --task-max-ttl and --task-results-memory must be positive"},
		{[]string{"--task-max-ttl", "-1s"}, "must be positive"},
		{[]string{"--task-results-memory", "0"}, "must be positive"},
	} {
		a := append([]string{"serve", "--cache-dir", "", "--tools", dir}, tc.flags...)
		if r := wasmcp(t, "", a...); r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("wasmcp %q: exit %d, stderr %q; want %d and %q", a, r.code, r.stderr, exitUsage, tc.want)
		}
	}
}

func TestManifestLimitsAreClampedToFlags(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	writeFile(t, filepath.Join(dir, "echo"+abi.SidecarSuffix),
		`{"abi":1,"limits":{"timeout":"1h","memory":"1MiB"},"tools":[{"name":"echo","description":"d","inputSchema":{"type":"object"}}]}`)
	l, r := listJSON(t, dir, "--timeout", "3s", "--memory", "2MiB")
	if r.code != exitOK || len(l.Tools) != 1 {
		t.Fatalf("list: %+v\n%v", l, r)
	}
	if got := l.Tools[0].Limits; got.Timeout != "3s" || got.Memory != "1MiB" {
		t.Errorf("limits = %+v; want timeout 3s (the ceiling) and memory 1MiB (the manifest's)", got)
	}
}

func TestServeStdio(t *testing.T) {
	dir := toolDir(t)
	if r := wasmcp(t, "", append([]string{"serve"}, args(dir, "extra")...)...); r.code != exitUsage || !strings.Contains(r.stderr, "unexpected arguments") {
		t.Errorf("serve with arguments: %v", r)
	}

	// Requests already read when stdin ends are answered before exit.
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"said":"hi"}}}`,
	}, "\n") + "\n"
	r := wasmcp(t, in, append([]string{"serve", "--log-level", "error"}, dirFlags(dir)...)...)
	if r.code != exitOK {
		t.Fatalf("serve: %v", r)
	}
	byID := map[int]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var msg struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if msg.Error != nil {
			t.Errorf("response %d is an error: %s", msg.ID, msg.Error)
		}
		byID[msg.ID] = msg.Result
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(byID[2], &list); err != nil || len(list.Tools) != 2 || list.Tools[0].Name != "echo" || list.Tools[1].Name != "fail" {
		t.Errorf("tools/list: %s (%v)", byID[2], err)
	}
	var res callResult
	if err := json.Unmarshal(byID[3], &res); err != nil || res.IsError || res.StructuredContent["said"] != "hi" {
		t.Errorf("tools/call: %s (%v)", byID[3], err)
	}
}

func TestServeStopsCleanlyWhileWarming(t *testing.T) {
	// With nothing on stdin, serve stops while Warm is still compiling in
	// the background; closing the engine then must not crash the process.
	dir := toolDir(t)
	for range 5 {
		r := wasmcp(t, "", append([]string{"serve", "--log-level", "error"}, dirFlags(dir)...)...)
		if r.code != exitOK || r.stdout != "" {
			t.Fatalf("serve with empty stdin: %v", r)
		}
	}
}

func TestListShowsResourcesAndPrompts(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "trap", "data")
	writeFile(t, filepath.Join(dir, "data"+abi.SidecarSuffix), `{"abi":1,"resources":[{"uri":"d://all","name":"all","text":"x"}],
		"resourceTemplates":[{"uriTemplate":"d://{id}","name":"one"}],"prompts":[{"name":"ask"}]}`)
	module := filepath.Join(dir, "data.wasm")
	r := wasmcp(t, "", append([]string{"list", "--compile=false"}, dirFlags(dir)...)...)
	var lines []string
	for _, line := range strings.Split(r.stdout, "\n") {
		lines = append(lines, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{"RESOURCE OR PROMPT KIND MODULE", "d://all resource " + module, "d://{id} resource " + module, "ask prompt " + module} {
		if r.code != exitOK || !slices.Contains(lines, want) {
			t.Errorf("list = %v; want a line %q", r, want)
		}
	}
	r = wasmcp(t, "", append([]string{"list", "--json", "--compile=false"}, dirFlags(dir)...)...)
	var l struct {
		Modules []struct {
			Resources, Prompts []string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Modules) != 1 ||
		!slices.Equal(l.Modules[0].Resources, []string{"d://all", "d://{id}"}) || !slices.Equal(l.Modules[0].Prompts, []string{"ask"}) {
		t.Errorf("list --json = %s (%v)", r.stdout, err)
	}
	// A directory of tools only lists as before.
	if r := wasmcp(t, "", append([]string{"list", "--compile=false"}, dirFlags(toolDir(t))...)...); strings.Contains(r.stdout, "RESOURCE") {
		t.Errorf("list of tools only = %v", r)
	}
}

// Without --tools, a command uses ./tools where there is one, and
// otherwise the user's tool directory, which it creates: a desktop client
// starts `wasmcp serve` in a directory of its own choosing.
func TestDefaultToolDirectory(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HOME", config) // os.UserConfigDir's base on macOS
	t.Chdir(t.TempDir())
	want, err := userToolsDir()
	if err != nil {
		t.Fatal(err)
	}
	r := wasmcp(t, "", "list", "--cache-dir", "", "--json")
	if r.code != exitOK {
		t.Fatalf("wasmcp list without --tools: %v", r)
	}
	if info, err := os.Stat(want); err != nil || !info.IsDir() {
		t.Fatalf("the user's tool directory %s was not created: %v", want, err)
	}
	help := wasmcp(t, "", "serve", "--help")
	if !strings.Contains(help.stderr, "default: ./tools if there is one, else "+want+", created on first run") {
		t.Errorf("serve --help does not name the default tool directory %s:\n%s", want, help.stderr)
	}

	// A ./tools wins, and the user's directory is left alone.
	if err := os.Remove(want); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("tools", 0o755); err != nil {
		t.Fatal(err)
	}
	wattest.Write(t, "tools", "echo", "echo")
	writeFile(t, filepath.Join("tools", "echo"+abi.SidecarSuffix), echoManifest)
	r = wasmcp(t, "", "call", "--cache-dir", "", "echo", `{"x":1}`)
	if r.code != exitOK {
		t.Errorf("wasmcp call echo with ./tools: %v", r)
	}
	if _, err := os.Stat(want); err == nil {
		t.Errorf("with ./tools, the user's tool directory was created too")
	}
}
