package registry

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/internal/wasmgen"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// BenchmarkReloadOneChangedSidecar is a reload after one small file of a
// large directory changed: 8 modules of 8 MiB of ordinary code each, and
// one small module whose manifest is rewritten before every reload, as
// bigdir.py's churn does.
func BenchmarkReloadOneChangedSidecar(b *testing.B) {
	dir := b.TempDir()
	var code []byte
	for i := 0; len(code) < 1<<20-16; i++ {
		code = append(code, 0x20)
		code = append(code, wasmgen.ULEB(uint64(i%1000))...)
		code = append(code, 0x21)
		code = append(code, wasmgen.ULEB(uint64((i+1)%1000))...)
	}
	for i := range 8 {
		// Each module different: one more function than the one before.
		wasm := wasmgen.Command{ExtraFunctions: 8 + i, ExtraLocals: [][2]uint64{{1000, wasmgen.I32}}, ExtraCode: code}.Bytes()
		stem := fmt.Sprintf("big%d", i)
		writeFile(b, filepath.Join(dir, stem+".wasm"), wasm)
		writeSidecar(b, dir, stem, manifestFor(stem))
	}
	wattest.Write(b, dir, "echo", "small")
	writeSidecar(b, dir, "small", manifestFor("small"))
	r, err := Open(Options{Dir: dir, LoadOptions: LoadOptions{Engine: newEngine(b), Ceilings: ceilings}})
	if err != nil {
		b.Fatal(err)
	}
	// Files just written are read again until they are older than the
	// racy window; a directory in service is older than that.
	settle(r.Current())
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++
		writeSidecar(b, dir, "small", manifestFor(fmt.Sprintf("small%d", n)))
		if err := r.Reload(); err != nil {
			b.Fatal(err)
		}
	}
	if _, ok := r.Current().Lookup(fmt.Sprintf("small%d", n)); !ok {
		b.Fatal("the changed manifest was not loaded")
	}
}
