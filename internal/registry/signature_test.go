package registry

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"aead.dev/minisign"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// key is a test key pair.
type key struct {
	pub  minisign.PublicKey
	priv minisign.PrivateKey
}

func newKey(t testing.TB) key {
	t.Helper()
	pub, priv, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key{pub, priv}
}

// sign writes path's signature by k, with the trusted comment minisign
// -S writes.
func (k key) sign(t testing.TB, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := minisign.NewReader(bytes.NewReader(data))
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	comment := "timestamp:1700000000\tfile:" + filepath.Base(path) + "\thashed"
	writeFile(t, path+abi.SignatureSuffix, r.SignWithComments(k.priv, comment, "signature from test key"))
}

// signedTool writes calc.wasm and its sidecar into dir, both signed by k,
// and returns the module's path.
func signedTool(t testing.TB, dir string, k key) string {
	t.Helper()
	path := wattest.Write(t, dir, "echo", "calc")
	k.sign(t, path)
	k.sign(t, writeSidecar(t, dir, "calc", manifestFor("calc")))
	return path
}

// requiring writes a policy that requires a signature by k, named
// release, of every module, and reads it.
func requiring(t testing.TB, k key) policyRead {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, path, fmt.Appendf(nil, "signatures:\n  keys: {release: %q}\n  require: [release]\n", k.pub.String()))
	pol := readPolicy(path)
	if pol.err != nil {
		t.Fatal(pol.err)
	}
	return pol
}

// loadUnder loads dir under pol, with prev before it.
func loadUnder(t testing.TB, dir string, pol policyRead, prev *Catalog) *Catalog {
	t.Helper()
	files, err := scan(dir, LoadOptions{Engine: newEngine(t), Ceilings: ceilings}, prev)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := run(prev, pol, files...)
	return cat
}

func errorsOf(c *Catalog) string {
	var b strings.Builder
	for _, e := range c.Errors {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}

// Every way a module's files can fail their signature refuses the
// module, with a message naming the key, the file and the command that
// signs it; what the signatures do not cover (their untrusted comment)
// changes nothing.
func TestAModuleLoadsOnlyIfItsFilesVerify(t *testing.T) {
	release, other := newKey(t), newKey(t)
	flip := func(path string, at int) func(*testing.T) {
		return func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[at%len(data)] ^= 1
			writeFile(t, path, data)
		}
	}
	edit := func(path, old, new string) func(*testing.T) {
		return func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte(old)) {
				t.Fatalf("%s holds no %q", path, old)
			}
			writeFile(t, path, bytes.Replace(data, []byte(old), []byte(new), 1))
		}
	}
	for _, c := range []struct {
		name string
		// change is made to the directory of a signed calc.wasm.
		change func(t *testing.T, dir string)
		// want are parts of the error; none: the module loads.
		want []string
	}{
		{"signed", func(*testing.T, string) {}, nil},
		{"untrusted comment changed", func(t *testing.T, dir string) {
			edit(filepath.Join(dir, "calc.wasm.minisig"), "signature from test key", "anything at all")(t)
		}, nil},
		{"a module byte tampered", func(t *testing.T, dir string) { flip(filepath.Join(dir, "calc.wasm"), 100)(t) },
			[]string{`calc.wasm.minisig does not verify with key "release"`, "sign it with wasmcp sign --key release.key calc.wasm"}},
		{"the sidecar tampered", func(t *testing.T, dir string) {
			edit(filepath.Join(dir, "calc.manifest.json"), "test tool calc", "test tool CALC")(t)
		}, []string{`calc.manifest.json.minisig does not verify with key "release"`}},
		{"the trusted comment tampered", func(t *testing.T, dir string) {
			edit(filepath.Join(dir, "calc.wasm.minisig"), "timestamp:1700000000", "timestamp:1700000001")(t)
		}, []string{`calc.wasm.minisig does not verify with key "release"`}},
		{"signed by another key", func(t *testing.T, dir string) { other.sign(t, filepath.Join(dir, "calc.wasm")) },
			[]string{`no signature by key "release" over calc.wasm: calc.wasm.minisig is by another key (ID ` + fmt.Sprintf("%X", other.pub.ID())}},
		{"module signature missing", func(t *testing.T, dir string) { remove(t, filepath.Join(dir, "calc.wasm.minisig")) },
			[]string{`no signature by key "release" over calc.wasm (calc.wasm.minisig is missing); sign it with wasmcp sign --key release.key calc.wasm`}},
		{"sidecar signature missing", func(t *testing.T, dir string) { remove(t, filepath.Join(dir, "calc.manifest.json.minisig")) },
			[]string{`no signature by key "release" over calc.manifest.json (calc.manifest.json.minisig is missing)`}},
		{"a signature of garbage", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "calc.wasm.minisig"), []byte("untrusted comment: x\nnot base64!\ntrusted comment: y\nzz\n"))
		}, []string{"calc.wasm.minisig is not a minisign signature"}},
		{"a signature too large", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "calc.wasm.minisig"), bytes.Repeat([]byte("a"), MaxSignatureSize+1))
		}, []string{"calc.wasm.minisig cannot be read", "over the 4096-byte limit"}},
		{"a signature of another file", func(t *testing.T, dir string) {
			// Signed, but as another module's: it may not stand in for this one.
			other := filepath.Join(dir, "other.wasm")
			writeFile(t, other, wattest.Build(t, "echo"))
			release.sign(t, other)
			if err := os.Rename(other+abi.SignatureSuffix, filepath.Join(dir, "calc.wasm.minisig")); err != nil {
				t.Fatal(err)
			}
			remove(t, other)
		}, []string{`calc.wasm.minisig is by key "release" but was made for another file: its trusted comment names no file:calc.wasm`}},
		{"a legacy signature", func(t *testing.T, dir string) {
			data, err := os.ReadFile(filepath.Join(dir, "calc.wasm"))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "calc.wasm.minisig"), minisign.SignWithComments(release.priv, data, "file:calc.wasm", "legacy"))
		}, []string{"calc.wasm.minisig is a legacy minisign signature"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			signedTool(t, dir, release)
			c.change(t, dir)
			cat := loadUnder(t, dir, requiring(t, release), nil)
			_, served := cat.Lookup("calc")
			if len(c.want) == 0 {
				if !served || len(cat.Errors) != 0 {
					t.Fatalf("a module signed as required does not load: %s", errorsOf(cat))
				}
				return
			}
			if served {
				t.Fatal("the module loads, though its signature does not verify")
			}
			for _, w := range c.want {
				if !strings.Contains(errorsOf(cat), w) {
					t.Errorf("the error %q does not say %q", errorsOf(cat), w)
				}
			}
		})
	}
}

func remove(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// Without a requirement, signatures are not looked at; with one by
// module, only that module needs one, by one of the keys it names.
func TestOnlyTheModulesThePolicyNamesNeedASignature(t *testing.T) {
	release, ci := newKey(t), newKey(t)
	dir := t.TempDir()
	signedTool(t, dir, ci)
	wattest.Write(t, dir, "echo", "free")
	writeSidecar(t, dir, "free", manifestFor("free"))
	path := filepath.Join(t.TempDir(), "policy.yaml")
	for _, c := range []struct {
		policy string
		served []string
	}{
		{"modules: {}\n", []string{"calc", "free"}},
		{"signatures: {keys: {release: %q, ci: %q}}\nmodules: {calc: {signedBy: [release, ci]}}\n", []string{"calc", "free"}},
		{"signatures: {keys: {release: %q, ci: %q}}\nmodules: {calc: {signedBy: [release]}}\n", []string{"free"}},
		{"signatures: {keys: {release: %q, ci: %q}, require: [ci]}\n", []string{"calc"}},
		{"signatures: {keys: {release: %q, ci: %q}, require: [release]}\nmodules: {calc: {signedBy: [ci]}}\n", []string{"calc"}},
	} {
		src := c.policy
		if strings.Contains(src, "%q") {
			src = fmt.Sprintf(src, release.pub.String(), ci.pub.String())
		}
		writeFile(t, path, []byte(src))
		pol := readPolicy(path)
		if pol.err != nil {
			t.Fatal(pol.err)
		}
		cat := loadUnder(t, dir, pol, nil)
		var got []string
		for _, tool := range cat.Tools {
			got = append(got, tool.Spec.Name)
		}
		if strings.Join(got, ",") != strings.Join(c.served, ",") {
			t.Errorf("under %s, served %v; want %v (%s)", c.policy, got, c.served, errorsOf(cat))
		}
	}
}

// A reload reads a module again when a signature beside it, or its
// sidecar's, appears, changes or goes; and not when it stays the same.
func TestAChangedSignatureIsReadAgain(t *testing.T) {
	k := newKey(t)
	dir := t.TempDir()
	opts := LoadOptions{Engine: newEngine(t), Ceilings: ceilings}
	for _, stem := range []string{"a", "b", "c", "d", "e"} {
		path := wattest.Write(t, dir, "echo", stem)
		if stem != "c" {
			k.sign(t, path)
		}
		sidecar := writeSidecar(t, dir, stem, manifestFor(stem))
		if stem != "e" {
			k.sign(t, sidecar)
		}
	}
	cat := scanned(t, dir, opts)
	settle(cat)
	// b's signature is made again (a new timestamp); c gets one; d's
	// sidecar loses its; e's sidecar gets one.
	writeFile(t, filepath.Join(dir, "b.wasm.minisig"), append(readFile(t, filepath.Join(dir, "b.wasm.minisig")), '\n'))
	k.sign(t, filepath.Join(dir, "c.wasm"))
	remove(t, filepath.Join(dir, "d.manifest.json.minisig"))
	k.sign(t, filepath.Join(dir, "e.manifest.json"))
	read, _ := reread(t, dir, opts, cat)
	want := map[string]bool{"a.wasm": false, "b.wasm": true, "c.wasm": true, "d.wasm": true, "e.wasm": true}
	for name, w := range want {
		if read[name] != w {
			t.Errorf("%s read again: %v; want %v", name, read[name], w)
		}
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The digest a load keeps of a signed file holds no reference to the
// file's bytes, which can be those of a 64 MiB module.
func TestTheDigestLetsGoOfTheBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calc.wasm")
	data := make([]byte, 1<<20)
	writeFile(t, path, data)
	newKey(t).sign(t, path)
	freed := make(chan struct{})
	runtime.AddCleanup(&data[0], func(struct{}) { close(freed) }, struct{}{})
	f, _ := readSignature(path, data)
	deadline := time.After(hangGuard)
	for done := false; !done; {
		runtime.GC()
		select {
		case <-freed:
			done = true
		case <-deadline:
			t.Fatal("the file's bytes are still held after a load kept their digest")
		case <-time.After(10 * time.Millisecond):
		}
	}
	runtime.KeepAlive(f)
}
