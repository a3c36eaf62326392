package main

import (
	"strings"
	"testing"
)

// References and arguments a registry command cannot use are refused as
// usage errors, saying what to write instead.
func TestRegistryCommandsRefuse(t *testing.T) {
	digest := "oci://r.example/tools/echo@sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"push", "echo.wasm"}, "want a module and a reference"},
		{[]string{"push", "echo.wasm", "r.example/tools/echo:v1"}, "is not an OCI reference"},
		{[]string{"push", "echo.wasm", digest}, "names a tag to push to, not a digest"},
		{[]string{"pull"}, "want a reference"},
		{[]string{"pull", "oci://r.example/tools/echo"}, "names no tag or digest"},
		{[]string{"serve", "--tools", t.TempDir(), "--store", t.TempDir(), "--source", "r.example/tools/echo:v1"}, "is not an OCI reference"},
		{[]string{"serve", "--tools", t.TempDir(), "--store", t.TempDir(), "--source", "oci://r.example/a:1,oci://r.example/a:1"}, "is given twice"},
		{[]string{"serve", "--tools", t.TempDir(), "--store", t.TempDir(), "--source", "oci://r.example/a:1", "--pull-interval", "-1s"}, "--pull-interval must not be negative"},
	} {
		r := wasmcp(t, "", tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("wasmcp %q: %v; want a usage error saying %q", tc.args, r, tc.want)
		}
	}
}
