package sdkguest

import (
	"testing"

	"github.com/wasmcp/wasmcp/internal/tooltest"
)

// TestPythonSDK runs the Python SDK's and bundler's own tests
// (python/test_wasmcp.py).
func TestPythonSDK(t *testing.T) { tooltest.Python(t, "..", "python/test_wasmcp.py") }
