package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ociRegistry is Debian's docker-registry (Distribution 2.8, which has no
// referrers API) serving on a loopback port, storing in a test directory.
type ociRegistry struct {
	host    string // 127.0.0.1:PORT
	storage string
	log     *lockedBuffer
}

// freeAddr is a loopback address nothing listens on, for a registry that
// is to start later, or never.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startRegistry starts a registry on addr and waits until it answers.
func startRegistry(t *testing.T, addr string) *ociRegistry {
	t.Helper()
	dir := t.TempDir()
	r := &ociRegistry{host: addr, storage: filepath.Join(dir, "storage"), log: &lockedBuffer{}}
	config := filepath.Join(dir, "config.yml")
	writeFileE2E(t, config, fmt.Sprintf("version: 0.1\nlog:\n  level: info\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", r.storage, addr))
	cmd := exec.Command("docker-registry", "serve", config)
	cmd.Stdout, cmd.Stderr = r.log, r.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting docker-registry (scripts/setup installs it): %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(r.log.String(), "listening on "+addr) {
		if time.Now().After(deadline) {
			t.Fatalf("docker-registry did not listen on %s:\n%s", addr, r.log.String())
		}
		r.log.wait(time.Second)
	}
	resp, err := http.Get("http://" + addr + "/v2/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v2/: %s", resp.Status)
	}
	return r
}

// ref is the oci:// reference of repository and tag in r.
func (r *ociRegistry) ref(repository, tag string) string {
	return "oci://" + r.host + "/" + repository + ":" + tag
}

// push pushes the tool of stem in dir, by `wasmcp push`, and returns the
// digest it printed.
func (r *ociRegistry) push(t *testing.T, dir, stem, ref string) string {
	t.Helper()
	out, err := exec.Command(binary, "push", "--plain-http", r.host, filepath.Join(dir, stem+".wasm"), ref).CombinedOutput()
	if err != nil {
		t.Fatalf("wasmcp push: %v\n%s", err, out)
	}
	_, digest, ok := strings.Cut(strings.TrimSpace(string(out)), "@")
	if !ok {
		t.Fatalf("wasmcp push printed no digest:\n%s", out)
	}
	return digest
}

// toolAs copies the example tool from into a new directory as stem, its
// embedded manifest beside it as a sidecar, which push sends as a layer
// of its own.
func toolAs(t *testing.T, from, stem string) string {
	t.Helper()
	dir := t.TempDir()
	module := filepath.Join(dir, stem+".wasm")
	copyFile(t, filepath.Join(toolsDir, from+".wasm"), module)
	out, err := exec.Command(binary, "inspect", "--json", module).Output()
	if err != nil {
		t.Fatalf("wasmcp inspect %s: %v", from, err)
	}
	var inspected struct{ Manifest json.RawMessage }
	if err := json.Unmarshal(out, &inspected); err != nil || len(inspected.Manifest) == 0 {
		t.Fatalf("wasmcp inspect %s: no manifest (%v)", from, err)
	}
	writeFileE2E(t, filepath.Join(dir, stem+".manifest.json"), string(inspected.Manifest))
	return dir
}

func writeFileE2E(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startWithSource serves, besides an empty tool directory, the tool that
// ref names, reaching r's host over plain HTTP and pulling again often.
func startWithSource(t *testing.T, host, ref string) *server {
	t.Helper()
	return startHTTPIn(t, t.TempDir(), "--source", ref, "--plain-http", host, "--store", t.TempDir(), "--pull-interval", "100ms")
}

// readyz is /readyz's status code.
func readyz(t *testing.T, s *server) int {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// statusErrors are the errors /status shows, by file.
func statusErrors(t *testing.T, s *server) map[string]string {
	t.Helper()
	var st struct {
		Errors []struct{ File, Error string }
	}
	if err := json.Unmarshal([]byte(get(t, s, "/status")), &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range st.Errors {
		out[e.File] = e.Error
	}
	return out
}

// source is what /status says of the one source: the digest it serves,
// and the directory it serves it from.
func source(t *testing.T, s *server) (digest, dir string) {
	t.Helper()
	var st struct {
		Sources []struct{ Ref, Digest, Dir string }
	}
	if err := json.Unmarshal([]byte(get(t, s, "/status")), &st); err != nil || len(st.Sources) != 1 {
		t.Fatalf("/status sources %+v, %v; want one", st.Sources, err)
	}
	return st.Sources[0].Digest, st.Sources[0].Dir
}

// A tool pushed with its signature pulls back whole, through the
// referrers tag of a registry without the referrers API; a server serves
// it from its reference, ready once it is pulled and compiled, and serves
// the next version pushed under the same tag.
func TestOCIPushServeUpdate(t *testing.T) {
	reg := startRegistry(t, freeAddr(t))
	v1 := toolAs(t, "slugify", "slugify")
	writeFileE2E(t, filepath.Join(v1, "slugify.wasm.minisig"), "untrusted comment: signature from minisign secret key\nRUQ...\n")
	ref := reg.ref("tools/slugify", "v1")
	first := reg.push(t, v1, "slugify", ref)

	pulled := t.TempDir()
	out, err := exec.Command(binary, "pull", "--plain-http", reg.host, "--store", t.TempDir(), ref, pulled).CombinedOutput()
	if err != nil {
		t.Fatalf("wasmcp pull: %v\n%s", err, out)
	}
	for _, name := range []string{"slugify.wasm", "slugify.manifest.json", "slugify.wasm.minisig"} {
		want, _ := os.ReadFile(filepath.Join(v1, name))
		if got, err := os.ReadFile(filepath.Join(pulled, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("pulled %s: %d bytes, %v; want the %d pushed", name, len(got), err, len(want))
		}
	}

	s := startWithSource(t, reg.host, ref)
	s.waitLog(t, "tool sources pulled and compiled: ready")
	if code := readyz(t, s); code != http.StatusOK {
		t.Fatalf("/readyz %d once the source is pulled", code)
	}
	s.waitLog(t, "pulled tool source", "source="+ref, "digest="+first)
	got, dir := source(t, s)
	if got != first {
		t.Errorf("/status: the source serves %s; want %s", got, first)
	}
	// The signature lies beside the module served, for a check to find.
	if sig, err := os.ReadFile(filepath.Join(dir, "slugify.wasm.minisig")); err != nil || !strings.HasPrefix(string(sig), "untrusted comment:") {
		t.Errorf("the served tool's signature: %q, %v", sig, err)
	}
	cs, changes := connectWatching(t, s, "2025-11-25")
	if res := callTool(t, cs, "slugify", map[string]any{"text": "Hello, World!"}); res.IsError || !strings.Contains(text(res), "hello-world") {
		t.Fatalf("slugify: %q", text(res))
	}

	// v2 is another tool under the same stem and tag.
	second := reg.push(t, toolAs(t, "text_stats", "slugify"), "slugify", ref)
	changes.wait(t, "pushing v2")
	if got, _ := source(t, s); got != second {
		t.Errorf("/status: the source serves %s after v2; want %s", got, second)
	}
	if names := toolNames(t, cs); !slices.Contains(names, "text_stats") || slices.Contains(names, "slugify") {
		t.Fatalf("tools %v after v2; want text_stats alone", names)
	}
	if res := callTool(t, cs, "text_stats", map[string]any{"text": "one two"}); res.IsError {
		t.Fatalf("text_stats: %q", text(res))
	}
}

// A registry down at start leaves the server unready, saying why, until
// the registry is up and the tool pulled.
func TestOCISourceDown(t *testing.T) {
	addr := freeAddr(t)
	ref := "oci://" + addr + "/tools/slugify:v1"
	s := startWithSource(t, addr, ref)
	s.waitLog(t, "pulling a tool source failed", "source="+ref)
	if code := readyz(t, s); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d with the source never pulled; want 503", code)
	}
	if msg, ok := statusErrors(t, s)[ref]; !ok || !strings.Contains(msg, "connection refused") {
		t.Errorf("/status errors %v; want the source's, saying why", statusErrors(t, s))
	}

	reg := startRegistry(t, addr)
	reg.push(t, toolAs(t, "slugify", "slugify"), "slugify", ref)
	s.waitLog(t, "tool sources pulled and compiled: ready")
	if code := readyz(t, s); code != http.StatusOK {
		t.Errorf("/readyz %d once the source is pulled", code)
	}
	if errs := statusErrors(t, s); len(errs) != 0 {
		t.Errorf("/status errors %v once the source is pulled", errs)
	}
}

// A blob that is not what its digest says is refused, and what the
// source served keeps serving, the error shown.
func TestOCITamperedBlob(t *testing.T) {
	reg := startRegistry(t, freeAddr(t))
	ref := reg.ref("tools/slugify", "v1")
	reg.push(t, toolAs(t, "slugify", "slugify"), "slugify", ref)
	s := startWithSource(t, reg.host, ref)
	s.waitLog(t, "tool sources pulled and compiled: ready")

	// v2's module goes in under another tag, is then corrupted in the
	// registry's storage, the same size, and v2 then tagged v1: the push
	// finds the blob there, and sends only the manifest.
	v2 := toolAs(t, "text_stats", "slugify")
	reg.push(t, v2, "slugify", reg.ref("tools/slugify", "staging"))
	module, err := os.ReadFile(filepath.Join(v2, "slugify.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(module)
	hexSum := hex.EncodeToString(sum[:])
	data := filepath.Join(reg.storage, "docker", "registry", "v2", "blobs", "sha256", hexSum[:2], hexSum, "data")
	module[len(module)-1] ^= 0xff
	if err := os.WriteFile(data, module, 0o644); err != nil {
		t.Fatal(err)
	}
	reg.push(t, v2, "slugify", ref)

	s.waitLog(t, "pulling a tool source failed", "source="+ref, "mismatched digest")
	cs := connectHTTP(t, s, "2025-11-25")
	if res := callTool(t, cs, "slugify", map[string]any{"text": "Still v1"}); res.IsError || !strings.Contains(text(res), "still-v1") {
		t.Fatalf("slugify after a tampered v2: %q", text(res))
	}
	if msg := statusErrors(t, s)[ref]; !strings.Contains(msg, "mismatched digest") {
		t.Errorf("/status errors %v; want the source's, saying the digest did not match", statusErrors(t, s))
	}
	if code := readyz(t, s); code != http.StatusOK {
		t.Errorf("/readyz %d: a failed update unreadied a server that serves", code)
	}
}

// Signatures travel with a tool through a registry: under a policy that
// requires the release key, a signed tool pulled from a registry serves;
// an unsigned version pushed under its tag, and a signed one whose module
// changed after signing, are refused with the key and the file named, and
// the signed version keeps serving; a version signed again serves.
func TestOCISignedTools(t *testing.T) {
	keys := t.TempDir()
	release := filepath.Join(keys, "release")
	run(t, exec.Command(binary, "keygen", "-W", release))
	policyFile := filepath.Join(keys, "policy.yaml")
	writeFileE2E(t, policyFile, "signatures:\n  keys:\n    release: {file: release.pub}\n  require: [release]\n")

	reg := startRegistry(t, freeAddr(t))
	ref := reg.ref("tools/slugify", "stable")
	signed := toolAs(t, "slugify", "slugify")
	signWith(t, release+".key", filepath.Join(signed, "slugify.wasm"))
	first := reg.push(t, signed, "slugify", ref)
	s := startHTTPIn(t, t.TempDir(), "--source", ref, "--plain-http", reg.host, "--store", t.TempDir(), "--pull-interval", "100ms", "--policy", policyFile)
	s.waitLog(t, "pulled tool source", "digest="+first)
	cs := connectHTTP(t, s, "2026-07-28")
	if res := callTool(t, cs, "slugify", map[string]any{"text": "Signed v1"}); res.IsError || !strings.Contains(text(res), "signed-v1") {
		t.Fatalf("the signed tool from the registry: %q", text(res))
	}

	unsigned := toolAs(t, "text_stats", "slugify")
	tampered := toolAs(t, "text_stats", "slugify")
	signWith(t, release+".key", filepath.Join(tampered, "slugify.wasm"))
	module := filepath.Join(tampered, "slugify.wasm")
	b := mustRead(t, module)
	b[len(b)-1] ^= 0xff // in the module's last custom section: it still loads
	atomicWrite(t, module, b)
	for _, tc := range []struct{ name, dir, want string }{
		{"unsigned", unsigned, `no signature by key \"release\" over slugify.wasm`},
		{"tampered", tampered, `slugify.wasm.minisig does not verify with key \"release\"`},
	} {
		digest := reg.push(t, tc.dir, "slugify", ref)
		s.waitLog(t, "pulled tool source", "digest="+digest)
		if names := toolNames(t, cs); !slices.Equal(names, []string{"slugify"}) {
			t.Errorf("%s version: tools %v; want the signed slugify still", tc.name, names)
		}
		if status := get(t, s, "/status"); !strings.Contains(status, tc.want) {
			t.Errorf("%s version: /status does not say %s:\n%s", tc.name, tc.want, status)
		}
	}

	// Another version than the unsigned one, whose digest, logged when
	// it was pulled, must not be what the wait below finds.
	describeAs(t, unsigned, "slugify", "signed: ")
	signWith(t, release+".key", filepath.Join(unsigned, "slugify.wasm"))
	last := reg.push(t, unsigned, "slugify", ref)
	s.waitLog(t, "pulled tool source", "digest="+last)
	if names := toolNames(t, cs); !slices.Equal(names, []string{"text_stats"}) {
		t.Errorf("a version signed again: tools %v; want text_stats", names)
	}
}
