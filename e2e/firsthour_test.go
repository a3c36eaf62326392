package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exampleDir is a tool directory of the example tools alone, as a new
// user's `make run` serves them.
func exampleDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	examples, err := filepath.Glob("../tools/*/manifest.json")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example tools found: %v", err)
	}
	for _, m := range examples {
		name := filepath.Base(filepath.Dir(m)) + ".wasm"
		copyFile(t, filepath.Join(toolsDir, name), filepath.Join(dir, name))
	}
	return dir
}

// The project's own examples load without a warning: a user's first start
// shows nothing to worry about (fetch_text once asked for a 30s timeout
// over the 10s default ceiling, and was clamped with a warning each time).
func TestExamplesLoadWithoutWarnings(t *testing.T) {
	// Over stdio with no input, the server loads the directory, logs what
	// a start logs, and stops at the end of its input.
	cmd := exec.Command(binary, "serve", "--tools", exampleDir(t), "--cache-dir", cacheDir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("wasmcp serve on the examples: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tools loaded") {
		t.Fatalf("the server did not load the examples:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("loading the examples warned:\n%s", stderr.String())
	}
}

// ttlMs and cacheScope are 2026-07-28's: a 2025-11-25 client's answers do
// not carry them, over stdio or HTTP, and a 2026-07-28 client's do.
func TestCacheHintsOnlyIn2026(t *testing.T) {
	requests := []struct{ method, params string }{
		{"tools/list", ""},
		{"resources/list", ""},
		{"resources/templates/list", ""},
		{"prompts/list", ""},
		{"resources/read", `"uri":"invoices://about"`},
	}
	for _, c := range rawClients(t) {
		modern := c.url != "" && c.session == ""
		for i, req := range requests {
			_, r := c.request(t, fmt.Sprint(100+i), req.method, req.params)
			if r.Error != nil {
				t.Fatalf("%s: %s: %+v", c.name, req.method, r.Error)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(r.Result, &fields); err != nil {
				t.Fatalf("%s: %s: result %s: %v", c.name, req.method, r.Result, err)
			}
			for _, hint := range []string{"ttlMs", "cacheScope"} {
				if _, has := fields[hint]; has != modern {
					t.Errorf("%s: %s: has %s: %v; want %v", c.name, req.method, hint, has, modern)
				}
			}
		}
	}
}

// A hand-made 2025-11-25 request without a session is refused with 400
// and a standard JSON-RPC code, saying how to get a session.
func TestLegacyRequestWithoutASessionIsRefused(t *testing.T) {
	s := startHTTP(t)
	status, r, _ := post(t, s.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	if status != http.StatusBadRequest || r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "1" {
		t.Fatalf("status %d, reply %+v; want 400 and error -32600 with id 1", status, r)
	}
	if !strings.Contains(r.Error.Message, "send initialize first") {
		t.Errorf("message %q does not say how to get a session", r.Error.Message)
	}
}

// releasePlatforms are the platforms scripts/release builds for.
var releasePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// TestReleaseArchives builds the release with its one command: an archive
// per platform holding the binary and the README, and SHA256SUMS naming
// each with its digest. This machine's binary is taken out and run.
func TestReleaseArchives(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("../scripts/release", out)
	cmd.Env = append(os.Environ(), "VERSION=v0.0.0-e2e")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for line := range strings.Lines(string(sums)) {
		sum, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not `digest  name`", line)
		}
		listed[name] = sum
	}
	if len(listed) != len(releasePlatforms) {
		t.Errorf("SHA256SUMS lists %d archives; want %d:\n%s", len(listed), len(releasePlatforms), sums)
	}
	var here string
	for _, p := range releasePlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		name, exe := "wasmcp_v0.0.0-e2e_"+goos+"_"+goarch, "wasmcp"
		archive := name + ".tar.gz"
		if goos == "windows" {
			archive, exe = name+".zip", "wasmcp.exe"
		}
		data, err := os.ReadFile(filepath.Join(out, archive))
		if err != nil {
			t.Errorf("no archive for %s: %v", p, err)
			continue
		}
		if sum := sha256.Sum256(data); listed[archive] != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA256SUMS says %q; its digest is %x", archive, listed[archive], sum)
		}
		files := archiveFiles(t, archive, data)
		for _, want := range []string{name + "/" + exe, name + "/README.md"} {
			if len(files[want]) == 0 {
				t.Errorf("%s lacks %s; has %v", archive, want, slices.Sorted(maps.Keys(files)))
			}
		}
		if p == runtime.GOOS+"/"+runtime.GOARCH {
			here = filepath.Join(t.TempDir(), exe)
			if err := os.WriteFile(here, files[name+"/"+exe], 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if here == "" {
		t.Fatalf("no archive for this machine, %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	b, err := exec.Command(here, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(b), "wasmcp v0.0.0-e2e\n") || !strings.Contains(string(b), "engines: wazero") {
		t.Errorf("the released binary's --version: %v\n%s", err, b)
	}
}

// archiveFiles reads a .tar.gz or .zip archive into its regular files'
// contents, by name.
func archiveFiles(t *testing.T, name string, data []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			files[f.Name] = b
		}
		return files
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, h.Name, err)
		}
		files[h.Name] = b
	}
}

// desktopEnv is the environment a desktop client starts a server with:
// the user's, without what these tests set for wasmcp (WASMCP_ENGINE, which
// a binary built without the wasmtime tag refuses), and with set, which
// replaces the variables it names.
func desktopEnv(set ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "WASMCP_") || slices.ContainsFunc(set, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, set...)
}

// TestWalkthrough follows the README's "Install" and "Connect a desktop
// client" steps as a new user would: `make install` into a PREFIX, the
// examples built (TestMain ran scripts/build-tools, which is what `make
// tools` runs), `wasmcp client-config claude --write`, then the server
// started exactly as the written configuration says, in a directory of
// the client's own, as Claude Desktop starts it, and an example called.
func TestWalkthrough(t *testing.T) {
	prefix, home := t.TempDir(), t.TempDir()
	env := desktopEnv("HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", name, args, err, out)
		}
		return string(out)
	}

	run("..", "make", "install", "PREFIX="+prefix)
	installed := filepath.Join(prefix, "bin", "wasmcp")
	if out := run(home, installed, "--version"); !strings.HasPrefix(out, "wasmcp ") {
		t.Fatalf("the installed wasmcp --version: %q", out)
	}
	tools := exampleDir(t)
	run(home, installed, "client-config", "claude", "--tools", tools, "--write")

	configFile := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	data, err := os.ReadFile(configFile)
	if err != nil {
		t.Fatalf("client-config --write did not write Claude Desktop's file: %v", err)
	}
	var config struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &config); err != nil {
		t.Fatalf("%s: %v\n%s", configFile, err, data)
	}
	entry, ok := config.MCPServers["wasmcp"]
	if !ok || entry.Command != installed {
		t.Fatalf("%s names %+v; want the installed %s", configFile, config.MCPServers, installed)
	}

	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Dir, cmd.Env = t.TempDir(), env
	s := &server{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd}, "2025-11-25", s)
	res := callTool(t, cs, "calculate", map[string]any{"a": 10, "b": 5, "operation": "add"})
	if res.IsError || text(res) != "15.0" {
		t.Errorf("calculate through the configured server = %q (isError %v); want 15.0\n%s", text(res), res.IsError, s.stderr.String())
	}
}

// scripts/setup says what each of its long steps is, so a first run is
// never minutes of silence; run again, it installs nothing.
func TestSetupSaysWhatItDoes(t *testing.T) {
	out, err := exec.Command("../scripts/setup").CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/setup: %v\n%s", err, out)
	}
	for _, want := range []string{"setup: the QuickJS runtime", "setup: the Go modules", "setup: the Python runtime", "setup: done"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("setup's output does not say %q:\n%s", want, out)
		}
	}
}

// The examples the example tools declare pass in the real sandbox: a
// tool's own CI is `wasmcp test`.
func TestExampleToolsPassTheirExamples(t *testing.T) {
	cmd := exec.Command(binary, "test", "--tools", exampleDir(t), "--cache-dir", cacheDir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "6 passed, 0 failed") {
		t.Errorf("wasmcp test on the examples: %v\n%s", err, out)
	}
}

// TestDesktopBundle builds the .mcpb bundle with its one command, which
// validates it with the official tooling, then does what Claude Desktop
// does with it: unpacks it, fills in the manifest's placeholders
// (${__dirname}, ${user_config.tools}), starts the command it names and
// calls an example tool.
func TestDesktopBundle(t *testing.T) {
	bundle := filepath.Join(t.TempDir(), "wasmcp.mcpb")
	if out, err := exec.Command("../scripts/mcpb", bundle).CombinedOutput(); err != nil {
		t.Fatalf("scripts/mcpb: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	checkRegistryEntry(t, bundle, data)
	files := archiveFiles(t, bundle+".zip", data)
	var manifest struct {
		Server struct {
			Type      string `json:"type"`
			MCPConfig struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcp_config"`
		} `json:"server"`
		UserConfig map[string]struct {
			Type     string `json:"type"`
			Required bool   `json:"required"`
		} `json:"user_config"`
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatalf("the bundle's manifest.json: %v\n%s", err, files["manifest.json"])
	}
	if manifest.Server.Type != "binary" || manifest.UserConfig["tools"].Type != "directory" || !manifest.UserConfig["tools"].Required {
		t.Fatalf("the bundle's manifest: %+v; want a binary server asking for a tool directory", manifest)
	}
	// Unpacked as the client does, executable bits and all (Go's zip
	// reader keeps the mode the packer recorded).
	dir := t.TempDir()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, files[f.Name], f.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	fill := strings.NewReplacer("${__dirname}", dir, "${user_config.tools}", exampleDir(t))
	var args []string
	for _, a := range manifest.Server.MCPConfig.Args {
		args = append(args, fill.Replace(a))
	}
	cmd := exec.Command(fill.Replace(manifest.Server.MCPConfig.Command), append(args, "--cache-dir", cacheDir)...)
	cmd.Dir, cmd.Env = t.TempDir(), desktopEnv()
	s := &server{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd}, "2025-11-25", s)
	if res := callTool(t, cs, "slugify", map[string]any{"text": "Hello, World!"}); res.IsError || text(res) != "hello-world" {
		t.Errorf("slugify through the bundle's server = %q (isError %v)\n%s", text(res), res.IsError, s.stderr.String())
	}
}
