// Package dateinfo tests the date_info tool natively: its Python logic
// (test_main.py, run with the runtime's build Python) and its manifest.
package dateinfo

import (
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
)

func TestLogic(t *testing.T) { tooltest.Python(t, "../..", "test_main.py") }

// TestManifest keeps manifest.json loadable by the server and a reactor,
// as the runtime the tool is built on is one.
func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "date_info", abi.OutputJSON)
	if m.Start != abi.StartReactor {
		t.Errorf(`manifest start = %q; want "reactor"`, m.Start)
	}
}
