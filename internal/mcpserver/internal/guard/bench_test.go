package guard

import "testing"

// The messages of one tools/call as the stdio benchmark in mcpserver
// sends and answers it.
var (
	benchCall     = []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"a":10,"b":5,"operation":"add"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	benchResponse = []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"{\"a\":10,\"b\":5,\"operation\":\"add\"}"}]}}` + "\n")
)

func BenchmarkInspect(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if v := Inspect(benchCall); v.Kind != Request {
			b.Fatal(v)
		}
	}
}

func BenchmarkResponseID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ResponseID(benchResponse); !ok {
			b.Fatal("not a response")
		}
	}
}
