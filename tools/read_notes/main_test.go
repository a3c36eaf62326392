package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
)

func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "read_notes", abi.OutputText)
	if m.Permissions == nil || len(m.Permissions.Dirs) != 1 || m.Permissions.Dirs[0].Guest != root || m.Permissions.Dirs[0].Write {
		t.Fatalf("the manifest must ask for %s, read-only: %+v", root, m.Permissions)
	}
}

// Without the grant, the answer names the missing mount and where the
// operator grants it, not the errno WASI gives a path under no mount.
func TestUngrantedMountSaysHowToGrantIt(t *testing.T) {
	err := mounted(filepath.Join(t.TempDir(), "absent"))
	if err == nil {
		t.Fatal("a missing mount was accepted")
	}
	for _, want := range []string{"no notes directory is mounted", "policy file", "dirs:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := mounted(t.TempDir()); err != nil {
		t.Errorf("an existing mount was refused: %v", err)
	}
}
