package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A Go reactor called twice from one snapshot: every value the SDK
// promises fresh differs, and the values Go's runtime froze at start-up
// (which the SDK's README lists) repeat, which shows that both calls came
// from the one snapshot.
func TestGoReactorIsFreshInEveryCallFromOneSnapshot(t *testing.T) {
	dir := t.TempDir()
	build := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "freshness.wasm"), "../sdk-guest/go/freshness")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the probe: %v\n%s", err, out)
	}
	manifest := `{"abi":1,"start":"reactor","tools":[{"name":"freshness","description":"Reports what it sees.","inputSchema":{"type":"object"},"output":"json"}]}`
	if err := os.WriteFile(filepath.Join(dir, "freshness.manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	checkFreshness(t, dir, "os.Args", "Go now reseeds it", "the SDK's README")
}

// A Python tool called twice from one snapshot: every value the runtime
// renews differs, and what CPython fixed at start-up (its str hash seed,
// objects made at import; docs/languages.md lists them) repeats, which
// shows that both calls came from the one snapshot.
func TestPythonIsFreshInEveryCallFromOneSnapshot(t *testing.T) {
	dir := t.TempDir()
	buildPython(t, dir, "freshness", "../sdk-guest/python/freshness",
		`{"abi":1,"start":"reactor","tools":[{"name":"freshness","description":"Reports what it sees.","inputSchema":{"type":"object"},"output":"json"}],"limits":{"memory":"64MiB"}}`)
	checkFreshness(t, dir, "sys.argv", "the runtime now renews it", "docs/languages.md")
}

// checkFreshness serves dir, whose reactor tool freshness reports what it
// sees, and calls it twice: each value it says is fresh must differ from
// one call to the next, and each it says is frozen must repeat, which
// shows that both calls started from the one snapshot. args names the
// language's argv, renewed and frozen the explanation when a frozen value
// moves and the document to update then.
func checkFreshness(t *testing.T, dir, args, renewed, doc string) {
	t.Helper()
	s := startHTTPIn(t, dir, "--log-level", "debug")
	cs := connectHTTP(t, s, "2025-11-25")
	type report struct {
		Args          []string
		Fresh, Frozen map[string]string
	}
	var calls [2]report
	for i := range calls {
		res := callTool(t, cs, "freshness", map[string]any{})
		if res.IsError {
			t.Fatalf("call %d: %s", i, text(res))
		}
		if err := json.Unmarshal([]byte(text(res)), &calls[i]); err != nil {
			t.Fatalf("call %d: %v: %s", i, err, text(res))
		}
	}
	s.waitLog(t, "module snapshotted", "freshness.wasm")
	for k, v := range calls[0].Fresh {
		if calls[1].Fresh[k] == v {
			t.Errorf("%s repeated from one call to the next: %s", k, v)
		}
	}
	if got := calls[0].Args; len(got) != 2 || got[1] != "freshness" {
		t.Errorf("%s in a call is %q; want the call's [freshness freshness]", args, got)
	}
	for k, v := range calls[0].Frozen {
		if calls[1].Frozen[k] != v {
			t.Errorf("%s differs between calls (%s, %s): %s, or the calls did not start from one snapshot; update %s", k, v, calls[1].Frozen[k], renewed, doc)
		}
	}
}

// buildPython builds the Python tool in src (its module main, with the SDK)
// as dir/stem.wasm, on the runtime scripts/setup builds, with manifest
// embedded: what a Python tool's ./build does.
func buildPython(t *testing.T, dir, stem, src, manifest string) {
	t.Helper()
	rt, err := exec.Command("../scripts/python-runtime").Output()
	if err != nil {
		t.Fatalf("building the Python runtime: %v", err)
	}
	runtime := strings.TrimSpace(string(rt))
	work := t.TempDir()
	bundle, manifestFile := filepath.Join(work, "init.zip"), filepath.Join(work, "manifest.json")
	run(t, exec.Command(filepath.Join(runtime, "native/python"), "-I", "../sdk-guest/python/wasmcp_bundle.py",
		"--stdlib", filepath.Join(runtime, "src/Lib"), "--path", src, "--path", "../sdk-guest/python", "-o", bundle, "main"))
	if err := os.WriteFile(manifestFile, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, exec.Command(binary, "pack", "--init", bundle, "--manifest", manifestFile,
		"-o", filepath.Join(dir, stem+".wasm"), filepath.Join(runtime, "wasmcp-python.wasm")))
}
