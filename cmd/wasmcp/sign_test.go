package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"aead.dev/minisign"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// keygen -W writes a key pair in minisign's formats; sign signs a module
// and its sidecar with it, in signatures minisign verifies, whose trusted
// comment names each file and its sha256.
func TestKeygenAndSign(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "release")
	if r := wasmcp(t, "", "keygen", "-W", name); r.code != exitOK || !strings.Contains(r.stdout, "require: [release]") {
		t.Fatalf("keygen: %v", r)
	}
	if fi, err := os.Stat(name + ".key"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the secret key: %v, %v; want it readable by its owner only", fi, err)
	}
	if r := wasmcp(t, "", "keygen", "-W", name); r.code != exitFailure || !strings.Contains(r.stderr, "release.key exists: -f overwrites it") {
		t.Fatalf("keygen over an existing key: %v", r)
	}
	pub, err := minisign.PublicKeyFromFile(name + ".pub")
	if err != nil {
		t.Fatal(err)
	}

	module := wattest.Write(t, dir, "echo", "calc")
	sidecar := filepath.Join(dir, "calc.manifest.json")
	if err := os.WriteFile(sidecar, []byte(`{"abi":1,"tools":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := wasmcp(t, "", "sign", "--key", name+".key", module)
	if r.code != exitOK {
		t.Fatalf("sign: %v", r)
	}
	for _, f := range []string{module, sidecar} {
		sig := readFile(t, f+".minisig")
		if !minisign.Verify(pub, readFile(t, f), sig) {
			t.Errorf("%s.minisig does not verify", f)
		}
		var s minisign.Signature
		if err := s.UnmarshalText(sig); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.TrustedComment, "\tfile:"+filepath.Base(f)+"\t") || !strings.Contains(s.TrustedComment, "\tsha256:") || s.Algorithm != minisign.HashEdDSA {
			t.Errorf("%s.minisig: trusted comment %q, algorithm %x; want the file's name and sha256, prehashed", f, s.TrustedComment, s.Algorithm)
		}
	}
}

// Without -W, keygen needs a password: with neither WASMCP_KEY_PASSWORD
// nor a terminal, it says how to give one, and writes nothing. (A key
// encrypted with one is tested through the binary, in e2e: minisign's
// scrypt takes 1 GiB, which the race detector multiplies.)
func TestKeygenNeedsAPassword(t *testing.T) {
	name := filepath.Join(t.TempDir(), "release")
	if r := wasmcp(t, "", "keygen", name); r.code != exitFailure || !strings.Contains(r.stderr, "set WASMCP_KEY_PASSWORD, or run on a terminal") {
		t.Fatalf("keygen with no password and no terminal: %v", r)
	}
	if _, err := os.Stat(name + ".key"); err == nil {
		t.Fatal("keygen wrote a key it could not encrypt")
	}
}
