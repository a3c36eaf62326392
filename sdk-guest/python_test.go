package sdkguest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPythonSDK runs the Python SDK's and bundler's own tests
// (python/test_wasmcp.py) with the build Python of the runtime that
// scripts/setup builds, the one tools are bundled with.
func TestPythonSDK(t *testing.T) {
	rt, err := exec.Command("../scripts/python-runtime").Output()
	if err != nil {
		t.Fatalf("building the Python runtime: %v", err)
	}
	python := filepath.Join(strings.TrimSpace(string(rt)), "native", "python")
	out, err := exec.Command(python, "-I", "python/test_wasmcp.py", "-v").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}
