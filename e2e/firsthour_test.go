package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
