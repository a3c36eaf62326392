package e2e

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallCalculate measures one tools/call of the calculate example
// (a Go guest) as a client sees it: through the real binary, over each
// transport and revision, with the SDK's client.
//
//	go test -run '^$' -bench CallCalculate -benchtime 200x ./e2e/
func BenchmarkCallCalculate(b *testing.B) {
	writeHostile(b)
	s := startHTTP(b)
	args := map[string]any{"a": 10, "b": 5, "operation": "add"}
	for _, v := range versions {
		for _, tr := range []string{"stdio", "http"} {
			b.Run(tr+"/"+v, func(b *testing.B) {
				var cs *mcp.ClientSession
				if tr == "stdio" {
					cs = connectStdio(b, v)
				} else {
					cs = connectHTTP(b, s, v)
				}
				ctx := context.Background()
				// The first call waits for the module to compile.
				if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calculate", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calculate", Arguments: args})
					if err != nil || res.IsError {
						b.Fatalf("call: %v %v", err, res)
					}
				}
			})
		}
	}
}
