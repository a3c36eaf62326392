// Package slugify holds the tests of the slugify example, whose code is
// AssemblyScript (assembly/); they compile it and run it under wasmcp.
package slugify

import (
	"testing"

	astest "github.com/wasmcp/wasmcp/sdk-guest/assemblyscript"
)

func TestSlugRules(t *testing.T) {
	astest.Build(t, "test/slugify_test.ts", "slugify_test").Unit(t)
}
