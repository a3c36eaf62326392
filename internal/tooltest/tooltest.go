// Package tooltest holds what the example tools' and guest SDKs' Go tests
// share: loading a tool's manifest as the server does, and running native
// tests written in C, Rust or Python. A missing toolchain fails the test with the
// command that installs it; it never skips.
package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// Manifest reads manifest.json in the working directory, parses it as the
// server does, and checks that it declares exactly one tool, with the given
// name and output mode.
func Manifest(t *testing.T, name string, mode abi.OutputMode) *abi.Manifest {
	t.Helper()
	data, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tools) != 1 || m.Tools[0].Name != name || m.Tools[0].Mode() != mode {
		t.Fatalf("manifest tools = %+v; want one %s tool named %s", m.Tools, mode, name)
	}
	return m
}

// Cargo runs `cargo test` in the working directory with Debian's
// toolchain, through the SDK's debian-cargo script. Compiled crates go to
// the repository's build/rust, which every Rust build shares.
func Cargo(t *testing.T, debianCargo, repoRoot string) {
	t.Helper()
	for _, cmd := range []string{"cargo", "rustc"} {
		if _, err := os.Stat("/usr/bin/" + cmd); err != nil {
			t.Fatalf("%s not found: run scripts/setup", cmd)
		}
	}
	target, err := filepath.Abs(filepath.Join(repoRoot, "build", "rust"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(debianCargo, "test", "--quiet")
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+target)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cargo test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// GCC compiles C sources natively into the executable bin, with warnings as
// errors and the address and undefined-behaviour sanitizers, so that an
// out-of-bounds read fails the test rather than passing by luck.
func GCC(t *testing.T, bin, includeDir string, sources ...string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("gcc not found: run scripts/setup")
	}
	args := []string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1",
		"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-I" + includeDir, "-o", bin}
	args = append(append(args, sources...), "-lm")
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
}

// Python runs a Python test script natively with the build Python of the
// runtime scripts/setup builds (scripts/python-runtime, which builds it if
// it is missing), the interpreter Python tools are bundled with.
func Python(t *testing.T, repoRoot, script string) {
	t.Helper()
	rt, err := exec.Command(filepath.Join(repoRoot, "scripts", "python-runtime")).Output()
	if err != nil {
		t.Fatalf("scripts/python-runtime: %v (run scripts/setup)", err)
	}
	python := filepath.Join(strings.TrimSpace(string(rt)), "native", "python")
	out, err := exec.Command(python, "-I", script, "-v").CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	t.Logf("%s", out)
}
