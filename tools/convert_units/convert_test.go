// Package convertunits runs the convert_units tool's Rust tests (cargo test)
// from go test, and checks its manifest as the server reads it.
package convertunits

import (
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
)

// TestCargo runs the conversion table's native tests.
func TestCargo(t *testing.T) { tooltest.Cargo(t, "../../sdk-guest/rust/debian-cargo", "../..") }

// TestManifest checks that the server accepts manifest.json; the Rust tests
// check that it agrees with the code.
func TestManifest(t *testing.T) { tooltest.Manifest(t, "convert_units", abi.OutputJSON) }
