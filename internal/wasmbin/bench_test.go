package wasmbin

import (
	"testing"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
)

// BenchmarkParse walks a module of the largest size the catalog reads (64
// MiB of straight-line code in 1 MiB functions): what loading costs before
// anything compiles.
func BenchmarkParse(b *testing.B) {
	code := wasmgen.Repeat((1<<20-16)/3, 0x41, 0x00, 0x1a)
	wasm := wasmgen.Command{StartCode: code, ExtraFunctions: 62, ExtraCode: code}.Bytes()
	b.SetBytes(int64(len(wasm)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(wasm); err != nil {
			b.Fatal(err)
		}
	}
}
