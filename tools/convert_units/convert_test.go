// Package convertunits runs the convert_units tool's Rust tests (cargo test)
// from go test, and checks its manifest as the server reads it.
package convertunits

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// TestCargo runs the conversion table's native tests. A missing toolchain
// fails rather than skips: scripts/setup installs it.
func TestCargo(t *testing.T) {
	for _, cmd := range []string{"cargo", "rustc"} {
		if _, err := os.Stat("/usr/bin/" + cmd); err != nil {
			t.Fatalf("%s not found: run scripts/setup", cmd)
		}
	}
	target, err := filepath.Abs("../../build/rust")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("../../sdk-guest/rust/debian-cargo", "test", "--quiet")
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+target)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cargo test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestManifest checks that the server accepts manifest.json; the Rust tests
// check that it agrees with the code.
func TestManifest(t *testing.T) {
	data, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tools) != 1 || m.Tools[0].Name != "convert_units" || m.Tools[0].Mode() != abi.OutputJSON {
		t.Fatalf("manifest tools = %+v", m.Tools)
	}
}
