package mcpserver

import "github.com/wasmcp/wasmcp/internal/registry"

// declaresCompletions says whether some module of the catalog declares
// values to complete, or completes some prompt or template itself.
func declaresCompletions(cat *registry.Catalog) bool {
	for _, m := range cat.Modules {
		if m.Manifest.DeclaresCompletions() {
			return true
		}
	}
	return false
}
