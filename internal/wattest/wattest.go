// Package wattest assembles the WebAssembly text modules that tests run:
// hostile guests (loops, memory bombs, output floods) and tiny probes of the
// ABI. They are kept as text so that a reader sees exactly what each does.
// It also stands in for the compile worker (StallingWorker), and makes
// compilation caches that a test can remove (CacheDir).
//
// Assembling needs wat2wasm from Debian's wabt package, which scripts/setup
// installs. A missing assembler fails the test with that instruction; it
// never skips, so CI cannot pass without running these tests.
package wattest

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

//go:embed wat/*.wat
var sources embed.FS

// Names lists the modules Build can assemble.
func Names() []string {
	entries, _ := sources.ReadDir("wat")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name()[:len(e.Name())-len(".wat")])
	}
	return names
}

// Build assembles wat/<name>.wat and returns the binary.
func Build(t testing.TB, name string) []byte {
	t.Helper()
	bin, err := Assemble(name)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Assemble is Build for code that has no testing.TB: a TestMain, or an
// example's setup.
func Assemble(name string) ([]byte, error) {
	src, err := sources.ReadFile("wat/" + name + ".wat")
	if err != nil {
		return nil, fmt.Errorf("wattest: no module %q: %v", name, err)
	}
	return assemble(name, src)
}

// Text assembles a module written in the test itself, for the small
// variations of one case that a file each would scatter.
func Text(t testing.TB, src string) []byte {
	t.Helper()
	bin, err := assemble("text", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func assemble(name string, src []byte) ([]byte, error) {
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		return nil, errors.New("wattest: wat2wasm not found; run scripts/setup (it installs Debian's wabt package)")
	}
	dir, err := os.MkdirTemp("", "wattest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, name+".wat"), filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(in, src, 0o600); err != nil {
		return nil, err
	}
	if msg, err := exec.Command(tool, in, "-o", out).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("wat2wasm %s: %v\n%s", name, err, msg)
	}
	return os.ReadFile(out)
}

// Write assembles a module into dir as <stem>.wasm and returns its path.
func Write(t testing.TB, dir, name, stem string) string {
	t.Helper()
	path := filepath.Join(dir, stem+".wasm")
	if err := os.WriteFile(path, Build(t, name), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
