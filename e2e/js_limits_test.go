package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildJS builds a JavaScript tool module from testdata/NAME.js and its
// manifest into a directory of its own, as a tool's ./build does.
func buildJS(t *testing.T, name string) string {
	t.Helper()
	runtime := strings.TrimSpace(run(t, exec.Command("../sdk-guest/js/build-runtime")))
	// build-runtime reports progress on stderr; its last line is the directory.
	runtime = runtime[strings.LastIndex(runtime, "\n")+1:]
	dir := t.TempDir()
	bytecode := filepath.Join(t.TempDir(), name+".qjs")
	run(t, exec.Command(filepath.Join(runtime, "qjs-compile"), filepath.Join("testdata", name+".js"), bytecode))
	run(t, exec.Command(binary, "pack", "--manifest", filepath.Join("testdata", name+".manifest.json"), "--init", bytecode,
		"-o", filepath.Join(dir, name+".wasm"), filepath.Join(runtime, "quickjs.wasm")))
	if _, err := os.Stat(filepath.Join(dir, name+".wasm")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestJavaScriptLimits checks that a JavaScript tool stays inside its
// module's limits and that each way it can fail reaches the model as a
// tool error naming the cause.
func TestJavaScriptLimits(t *testing.T) {
	s := startHTTPIn(t, buildJS(t, "hostile_js"))
	cs := connectHTTP(t, s, versions[len(versions)-1])
	for _, tt := range []struct{ tool, want string }{
		// QuickJS's stack limit, or on wasmtime, whose call stack is smaller,
		// the engine's.
		{"js_deep", "js_deep failed"},
		{"js_spin", "js_spin failed: the tool ran longer than its 2s time limit and was stopped"},
		{"js_hog", "the limit is 32 MiB"},
		{"js_pending", "the tool's promise never settled"},
		{"js_wrong_type", "js_wrong_type's handler returned a number; a text tool returns a string"},
		{"js_import", `cannot import "fs": a tool's code is one file that may import only "wasmcp"`},
		{"js_throw_string", "js_throw_string failed (exit status 1): a string, not an Error"},
	} {
		res := callTool(t, cs, tt.tool, map[string]any{})
		if tt.tool == "js_deep" && !strings.Contains(text(res), "stack overflow: the handler recursed too deeply") &&
			!strings.Contains(text(res), "overflowed its call stack") {
			t.Errorf("js_deep = %q; want a stack overflow", text(res))
		}
		if !res.IsError || !strings.Contains(text(res), tt.want) {
			t.Errorf("%s = %q (isError %v); want an error mentioning %q", tt.tool, text(res), res.IsError, tt.want)
		}
	}
}
