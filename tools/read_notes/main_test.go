package main

import (
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
