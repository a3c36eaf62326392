// Package rusttest runs the Rust guest SDK's own tests (cargo test) as part
// of go test, so that `make test` covers the SDK with everything else.
package rusttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCargo runs the crate's native tests with Debian's toolchain through
// debian-cargo. A missing toolchain fails rather than skips: scripts/setup
// installs it, and a skipped SDK would look tested.
func TestCargo(t *testing.T) {
	for _, cmd := range []string{"cargo", "rustc"} {
		if _, err := os.Stat("/usr/bin/" + cmd); err != nil {
			t.Fatalf("%s not found: run scripts/setup", cmd)
		}
	}
	// build/ is ignored by git; the example tools share it, so serde is
	// compiled once for all of them.
	target, err := filepath.Abs("../../build/rust")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("./debian-cargo", "test", "--quiet")
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+target)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cargo test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
