package sdkguest

import (
	"testing"

	"github.com/wasmcp/wasmcp/internal/tooltest"
)

// TestPythonSDK runs the Python SDK's and bundler's own tests.
func TestPythonSDK(t *testing.T) { tooltest.Python(t, "..", "python/test_wasmcp.py") }

// TestPythonRuntimeBoot runs the tests of the runtime's boot module: how
// it reads a bundle and imports from it, and what it renews per call.
func TestPythonRuntimeBoot(t *testing.T) { tooltest.Python(t, "..", "python/runtime/test_boot.py") }
