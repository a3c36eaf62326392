package e2e

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exampleCalls are one typical call of each example tool, one per guest
// language.
var exampleCalls = []struct {
	tool string
	args map[string]any
}{
	{"calculate", map[string]any{"a": 10, "b": 5, "operation": "add"}},            // Go
	{"text_stats", map[string]any{"text": "The quick brown fox. It jumps!"}},      // C
	{"convert_units", map[string]any{"value": 5, "from": "km", "to": "mi"}},       // Rust
	{"slugify", map[string]any{"text": "Crème Brûlée: 2 Ways!", "maxLength": 50}}, // AssemblyScript
	{"random_uuid", nil}, // WebAssembly text
}

// BenchmarkExamples measures one tools/call of each example as a client
// sees it: through the real binary, over each transport and revision, with
// the SDK's client.
//
//	go test -run '^$' -bench Examples -benchtime 200x ./e2e/
func BenchmarkExamples(b *testing.B) {
	writeHostile(b)
	s := startHTTP(b)
	for _, ex := range exampleCalls {
		for _, v := range versions {
			for _, tr := range []string{"stdio", "http"} {
				b.Run(ex.tool+"/"+tr+"/"+v, func(b *testing.B) {
					var cs *mcp.ClientSession
					if tr == "stdio" {
						cs = connectStdio(b, v)
					} else {
						cs = connectHTTP(b, s, v)
					}
					ctx := context.Background()
					params := &mcp.CallToolParams{Name: ex.tool, Arguments: ex.args}
					// The first call waits for the module to compile.
					if _, err := cs.CallTool(ctx, params); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for b.Loop() {
						res, err := cs.CallTool(ctx, params)
						if err != nil || res.IsError {
							b.Fatalf("call: %v %v", err, res)
						}
					}
				})
			}
		}
	}
}
