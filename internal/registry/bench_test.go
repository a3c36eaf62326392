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

// BenchmarkLoadSigned8MiB loads one 8 MiB module and its sidecar, each
// with a signature beside it or none: the difference is what keeping
// their digest costs a load.
func BenchmarkLoadSigned8MiB(b *testing.B) {
	k := newKey(b)
	for _, signed := range []bool{false, true} {
		b.Run(fmt.Sprintf("signed=%v", signed), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "big.wasm")
			writeFile(b, path, wasmgen.Command{ExtraFunctions: 8, ExtraCode: make([]byte, 1<<20-16)}.Bytes())
			sidecar := writeSidecar(b, dir, "big", manifestFor("big"))
			if signed {
				k.sign(b, path)
				k.sign(b, sidecar)
			}
			opts := LoadOptions{Engine: newEngine(b), Ceilings: ceilings}
			for b.Loop() {
				if _, _, _, err := loadFile(path, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPlan200SignedModules is a reload of 200 unchanged modules,
// each signed, under a policy that requires their signatures: the same
// policy as before, or a changed one, under which every module is
// verified again.
func BenchmarkPlan200SignedModules(b *testing.B) {
	k := newKey(b)
	pols := []policyRead{requiring(b, k), requiring(b, k)}
	pols[1].hash += "'" // another file that requires the same
	files := make([]loaded, 200)
	for i := range files {
		stem := fmt.Sprintf("m%03d", i)
		files[i] = signedAs(b, fake(stem+".wasm", "k"+stem, stem), stem, &k)
	}
	for _, changed := range []bool{false, true} {
		b.Run(fmt.Sprintf("policy-changed=%v", changed), func(b *testing.B) {
			prev, _ := run(nil, pols[0], files...)
			n := 0
			for b.Loop() {
				if changed {
					n++
				}
				prev, _ = run(prev, pols[n%2], files...)
			}
			if len(prev.Tools) != len(files) {
				b.Fatalf("%d of %d modules verify: %s", len(prev.Tools), len(files), errorsOf(prev))
			}
		})
	}
}
