package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewToolBuildsAndRuns does what a new tool author does: create a tool
// with `wasmcp new`, build it with its own build script, and call it, with
// nothing edited in between.
func TestNewToolBuildsAndRuns(t *testing.T) {
	for _, lang := range []string{"go", "c", "rust", "assemblyscript", "js", "ts", "python"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			name := "hello_" + lang
			run(t, exec.Command(binary, "new", "--lang", lang, "--dir", dir, name))
			folder := filepath.Join(dir, name)
			build := exec.Command(filepath.Join(folder, "build"))
			// Shares compiled crates with the repository's own Rust builds;
			// JavaScript's and Python's builds pack with wasmcp: found through
			// $WASMCP, or on PATH as a user who installed it would have it.
			build.Env = append(os.Environ(), "CARGO_TARGET_DIR="+rustTarget(t), "WASMCP="+binary,
				"PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
			// Each build says what it is doing, and what it wrote.
			progress := run(t, build)
			for _, want := range []string{"build: compiling", "build: wrote "} {
				if !strings.Contains(progress, want) {
					t.Errorf("the build's output does not say %q:\n%s", want, progress)
				}
			}
			out := run(t, exec.Command(binary, "call", "--tools", folder, "--cache-dir", "", name, `{"name":"Ada"}`))
			if !strings.Contains(out, "Ada") {
				t.Errorf("the new tool answered %s; want a greeting for Ada", out)
			}
			// The folder is not overwritten by a second `new`.
			if err := exec.Command(binary, "new", "--lang", lang, "--dir", dir, name).Run(); err == nil {
				t.Error("wasmcp new overwrote an existing folder")
			}
		})
	}
}

func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

func rustTarget(t *testing.T) string {
	dir, err := filepath.Abs("../build/rust")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
