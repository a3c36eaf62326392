package e2e

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"compress/zlib"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

const testSecret = "topsecret-0b7e"

// permissionFixture is a tool directory with the permission examples, test
// HTTP servers on loopback, a notes directory and a policy granting some of
// what the tools ask for.
type permissionFixture struct {
	dir, notes, policy string
	portA, portB       string
}

func newPermissionFixture(t *testing.T) *permissionFixture {
	t.Helper()
	f := &permissionFixture{dir: t.TempDir(), notes: t.TempDir()}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from A") })
	// An echo of the request's Authorization header, compressed whatever
	// the request asked for: the tool must get it decoded and scrubbed.
	mux.HandleFunc("/echo-compressed", func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		var zw io.WriteCloser = gzip.NewWriter(&buf)
		if r.URL.Query().Get("coding") == "deflate" {
			zw = zlib.NewWriter(&buf)
		}
		fmt.Fprintf(zw, "you sent %s", r.Header.Get("Authorization"))
		zw.Close()
		w.Header().Set("Content-Encoding", cmp.Or(r.URL.Query().Get("coding"), "gzip"))
		w.Write(buf.Bytes())
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+testSecret {
			fmt.Fprint(w, "authorized")
			return
		}
		fmt.Fprint(w, "no credentials")
	})
	a := httptest.NewServer(mux)
	t.Cleanup(a.Close)
	b := httptest.NewServer(mux)
	t.Cleanup(b.Close)
	_, f.portA, _ = net.SplitHostPort(a.Listener.Addr().String())
	_, f.portB, _ = net.SplitHostPort(b.Listener.Addr().String())
	mux.HandleFunc("/to-localhost", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+f.portA+"/hello", http.StatusFound)
	})
	mux.HandleFunc("/to-b", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+f.portB+"/hello", http.StatusFound)
	})

	copyFile(t, filepath.Join(toolsDir, "fetch_text.wasm"), filepath.Join(f.dir, "fetch_text.wasm"))
	copyFile(t, filepath.Join(toolsDir, "read_notes.wasm"), filepath.Join(f.dir, "read_notes.wasm"))
	wattest.Write(t, f.dir, "probe", "envprobe")
	wattest.Write(t, f.dir, "httpcall", "httpcall")
	sidecar(t, f.dir, "fetch_text", `{"abi":1,"tools":[{"name":"fetch_text","description":"fetch","inputSchema":{"type":"object"}}],
		"permissions":{"http":[{"host":"127.0.0.1"},{"host":"localhost"}],"secrets":["apikey"]}}`)
	sidecar(t, f.dir, "httpcall", `{"abi":1,"tools":[{"name":"httpcall","description":"passes its arguments to http_request","inputSchema":{"type":"object"}}],
		"permissions":{"http":[{"host":"127.0.0.1"}],"secrets":["apikey"]}}`)
	sidecar(t, f.dir, "envprobe", `{"abi":1,"tools":[{"name":"envprobe","description":"probe","inputSchema":{"type":"object"}}],
		"permissions":{"env":["GREETING"]}}`)

	if err := os.WriteFile(filepath.Join(f.notes, "a.txt"), []byte("note A"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(f.notes, "escape")); err != nil {
		t.Fatal(err)
	}
	f.policy = filepath.Join(t.TempDir(), "policy.yaml")
	policy := fmt.Sprintf(`modules:
  fetch_text:
    sha256: %s
    http:
      - {host: 127.0.0.1, ports: [%s], schemes: [http], allow_private: true}
      - {host: localhost, ports: [%s], schemes: [http]}
    secrets:
      apikey: {from: TEST_API_KEY, header: Authorization, format: "Bearer {}", hosts: [127.0.0.1]}
  httpcall:
    sha256: %s
    http:
      - {host: 127.0.0.1, ports: [%s], schemes: [http], allow_private: true}
    secrets:
      apikey: {from: TEST_API_KEY, header: Authorization, format: "Bearer {}", hosts: [127.0.0.1]}
  read_notes:
    sha256: %s
    dirs:
      /notes: {host: %s}
  envprobe:
    sha256: %s
    env:
      GREETING: hello
`, fileSHA(t, f.dir, "fetch_text"), f.portA, f.portA, fileSHA(t, f.dir, "httpcall"), f.portA, fileSHA(t, f.dir, "read_notes"), f.notes, fileSHA(t, f.dir, "envprobe"))
	if err := os.WriteFile(f.policy, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func sidecar(t *testing.T, dir, stem, manifest string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, stem+".manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fileSHA(t *testing.T, dir, stem string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, stem+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (f *permissionFixture) serve(t *testing.T, extra ...string) (*server, *mcp.ClientSession) {
	t.Helper()
	t.Setenv("TEST_API_KEY", testSecret)
	s := startHTTPIn(t, f.dir, append([]string{"--policy", f.policy}, extra...)...)
	return s, connectHTTP(t, s, "2026-07-28")
}

// TestPermissions grants and denies each kind of permission through the
// real server: HTTP hosts, ports, private addresses by name and by
// redirect, a secret the tool never sees (not even compressed), a mounted
// directory with a link out of it, environment variables.
func TestPermissions(t *testing.T) {
	f := newPermissionFixture(t)
	s, cs := f.serve(t)
	a := "http://127.0.0.1:" + f.portA

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		ok         bool
		want       string
	}{
		{"granted host", "fetch_text", map[string]any{"url": a + "/hello"}, true, "hello from A"},
		{"port not granted", "fetch_text", map[string]any{"url": "http://127.0.0.1:" + f.portB + "/hello"}, false, f.portB},
		{"name resolving to a private address", "fetch_text", map[string]any{"url": "http://localhost:" + f.portA + "/hello"}, false, "private address"},
		{"redirect to a private address", "fetch_text", map[string]any{"url": a + "/to-localhost"}, false, "private address"},
		{"redirect to a port not granted", "fetch_text", map[string]any{"url": a + "/to-b"}, false, f.portB},
		{"host not granted", "fetch_text", map[string]any{"url": "https://example.com/"}, false, "example.com"},
		{"secret added by the host", "fetch_text", map[string]any{"url": a + "/auth", "secret": "apikey"}, true, "authorized"},
		{"no secret, no credentials", "fetch_text", map[string]any{"url": a + "/auth"}, true, "no credentials"},
		{"secret not granted", "fetch_text", map[string]any{"url": a + "/auth", "secret": "other"}, false, "other"},
		{"secret echoed gzipped", "fetch_text", map[string]any{"url": a + "/echo-compressed", "secret": "apikey"}, true, "you sent Bearer [redacted]"},
		{"secret echoed deflated, unasked", "fetch_text", map[string]any{"url": a + "/echo-compressed?coding=deflate", "secret": "apikey"}, true, "you sent Bearer [redacted]"},
		{"a tool may not ask for gzip with a secret", "httpcall", map[string]any{"url": a + "/echo-compressed", "secret": "apikey", "headers": map[string]string{"Accept-Encoding": "gzip"}},
			true, `2{"error":"egress: invalid request: header Accept-Encoding may not be set on a request that carries secret`},
		{"granted directory", "read_notes", map[string]any{}, true, "a.txt"},
		{"a note", "read_notes", map[string]any{"path": "a.txt"}, true, "note A"},
		{"a link out of the mount", "read_notes", map[string]any{"path": "escape/hostname"}, false, "escape/hostname"},
		{"granted environment", "envprobe", nil, false, "status 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := callTool(t, cs, tc.tool, tc.args)
			got := text(res)
			if res.IsError == tc.ok || !strings.Contains(got, tc.want) {
				t.Errorf("%s = %q (isError %v); want ok=%v mentioning %q", tc.tool, got, res.IsError, tc.ok, tc.want)
			}
			if !tc.ok && tc.tool == "fetch_text" && !strings.Contains(got, "operator") {
				t.Errorf("a denial does not say who can grant it: %q", got)
			}
			if strings.Contains(got, testSecret) {
				t.Errorf("the secret's value reached the client: %q", got)
			}
		})
	}
	if strings.Contains(s.stderr.String(), testSecret) {
		t.Error("the secret's value is in the server's log")
	}
	if !strings.Contains(s.stderr.String(), "permission denied") {
		t.Error("denials are not logged")
	}
}

// TestNoPolicyGrantsNothing runs the same tools with no policy: every
// request is refused, and the refusal says what to grant.
func TestNoPolicyGrantsNothing(t *testing.T) {
	f := newPermissionFixture(t)
	s := startHTTPIn(t, f.dir)
	cs := connectHTTP(t, s, "2025-11-25")
	res := callTool(t, cs, "fetch_text", map[string]any{"url": "http://127.0.0.1:" + f.portA + "/hello"})
	if !res.IsError || !strings.Contains(text(res), "no grants for module fetch_text") {
		t.Errorf("fetch without a policy = %q", text(res))
	}
	res = callTool(t, cs, "read_notes", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "directory /notes") ||
		!strings.Contains(text(res), "no notes directory is mounted at /notes") || strings.Contains(text(res), "Bad file number") {
		t.Errorf("read_notes without a policy = %q; want the missing grant named, not WASI's errno", text(res))
	}
	if res := callTool(t, cs, "envprobe", nil); res.IsError || text(res) != "sealed" {
		t.Errorf("envprobe without a policy = %q; want no environment", text(res))
	}
}

// TestChangedModuleLosesItsGrants replaces a granted module: its grants
// lapse until `wasmcp policy approve` pins the new version, which the
// running server takes up at once, as it watches the policy file too.
func TestChangedModuleLosesItsGrants(t *testing.T) {
	f := newPermissionFixture(t)
	s, cs := f.serve(t, "--log-level", "debug")
	url := "http://127.0.0.1:" + f.portA + "/hello"
	if res := callTool(t, cs, "fetch_text", map[string]any{"url": url}); res.IsError {
		t.Fatalf("before the change: %q", text(res))
	}
	// A different build of the same tool: its embedded manifest says
	// something else, so its bytes change; the sidecar, which wins, does
	// not.
	tmp := t.TempDir()
	embedded := strings.Replace(string(mustRead(t, filepath.Join("..", "tools", "fetch_text", "manifest.json"))), "Fetches a URL", "Gets a URL", 1)
	if err := os.WriteFile(filepath.Join(tmp, "m.json"), []byte(embedded), 0o644); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(tmp, "fetch_text.wasm")
	run(t, exec.Command(binary, "pack", "--manifest", filepath.Join(tmp, "m.json"), "-o", packed, filepath.Join(f.dir, "fetch_text.wasm")))
	atomicWrite(t, filepath.Join(f.dir, "fetch_text.wasm"), mustRead(t, packed))
	s.waitLog(t, "tools reloaded")
	res := callTool(t, cs, "fetch_text", map[string]any{"url": url})
	if !res.IsError || !strings.Contains(text(res), "wasmcp policy approve") {
		t.Fatalf("after the change = %q; want the grants lapsed, with how to approve", text(res))
	}
	reloads := strings.Count(s.stderr.String(), "tools reloaded")
	out := run(t, exec.Command(binary, "policy", "approve", "--policy", f.policy, "--tools", f.dir, "--cache-dir", cacheDir, "fetch_text"))
	if !strings.Contains(out, "approved fetch_text") {
		t.Fatalf("approve: %s", out)
	}
	show := run(t, exec.Command(binary, "policy", "show", "--policy", f.policy, "--tools", f.dir, "--cache-dir", cacheDir, "fetch_text"))
	if !strings.Contains(show, "127.0.0.1") || strings.Contains(show, "NOT GRANTED  http host 127.0.0.1") || strings.Contains(show, testSecret) {
		t.Errorf("policy show after approval:\n%s", show)
	}
	// The registry says "policy changed" as it plans the reload, before the
	// new grants are in service; the host says "tools reloaded" after.
	s.waitLog(t, "policy changed")
	s.waitLogCount(t, reloads+1, "tools reloaded")
	if res := callTool(t, cs, "fetch_text", map[string]any{"url": url}); res.IsError {
		t.Errorf("after approval, without a restart = %q", text(res))
	}
	_, cs2 := f.serve(t)
	if res := callTool(t, cs2, "fetch_text", map[string]any{"url": url}); res.IsError {
		t.Errorf("after approval and restart = %q", text(res))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDenialsAreBoundedInTheAnswer serves a tool with no grant that asks
// for 100 hosts of its own in URLs of 64 KiB: the failed call lists a few
// denials, cut short, and counts the rest, and so does the log.
func TestDenialsAreBoundedInTheAnswer(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "denied", "denied")
	sidecar(t, dir, "denied", `{"abi":1,"tools":[{"name":"denied","description":"asks for 100 hosts","inputSchema":{"type":"object"}}]}`)
	s := startHTTPIn(t, dir)
	cs := connectHTTP(t, s, "2026-07-28")
	res := callTool(t, cs, "denied", nil)
	got := text(res)
	if !res.IsError || !strings.Contains(got, "no http grant") || !strings.Contains(got, "and 92 more") || len(got) > 8<<10 {
		t.Errorf("the answer (isError %v, %d bytes) = %.600q…; want a few denials and \"and 92 more\", within 8 KiB", res.IsError, len(got), got)
	}
	s.waitLog(t, "permission denied", "tool=denied", "more=92")
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if len(line) > 8<<10 {
			t.Errorf("a log line of %d bytes: %.200q…", len(line), line)
		}
	}
}

// TestHTTPAnswerIsBoundedByTheMemoryLimit fetches 300 KiB of control
// characters, which the answer carries as 1.8 MiB of JSON, for a tool
// whose memory limit is 1 MiB: the host refuses to hold an answer the
// tool could never take, and says why.
func TestHTTPAnswerIsBoundedByTheMemoryLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte{1}, 300<<10))
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir := t.TempDir()
	wattest.Write(t, dir, "httpcall", "httpsmall")
	sidecar(t, dir, "httpsmall", `{"abi":1,"tools":[{"name":"httpsmall","description":"passes its arguments to http_request","inputSchema":{"type":"object"}}],
		"permissions":{"http":[{"host":"127.0.0.1"}]},"limits":{"memory":"1MiB"}}`)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf("modules:\n  httpsmall:\n    sha256: %s\n    http:\n      - {host: 127.0.0.1, ports: [%s], schemes: [http], allow_private: true}\n",
		fileSHA(t, dir, "httpsmall"), port)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTPIn(t, dir, "--policy", policy)
	cs := connectHTTP(t, s, "2026-07-28")
	res := callTool(t, cs, "httpsmall", map[string]any{"url": srv.URL + "/"})
	if got := text(res); res.IsError || !strings.HasPrefix(got, "8") || !strings.Contains(got, "would take 1.758 MiB as the answer's body, more than this tool's memory limit of 1 MiB could ever hold") {
		t.Errorf("httpsmall = %.400q (isError %v); want code 8 (network) and why", got, res.IsError)
	}
}
