// Package rusttest runs the Rust guest SDK's own tests (cargo test) as part
// of go test, so that `make test` covers the SDK with everything else.
package rusttest

import (
	"testing"

	"github.com/wasmcp/wasmcp/internal/tooltest"
)

// TestCargo runs the crate's native tests with Debian's toolchain through
// debian-cargo. A missing toolchain fails rather than skips: scripts/setup
// installs it, and a skipped SDK would look tested.
func TestCargo(t *testing.T) { tooltest.Cargo(t, "./debian-cargo", "../..") }
