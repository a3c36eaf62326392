package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJavaScriptHTTP makes requests through the JavaScript SDK's http():
// text and binary bodies both ways, a secret the host adds, and a request
// the policy denies, which throws an HTTPError naming what is missing.
func TestJavaScriptHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello from A")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		io.Copy(w, r.Body)
	})
	mux.HandleFunc("/auth", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Method+" "+cmpAuth(r.Header.Get("Authorization")))
	})
	a := httptest.NewServer(mux)
	t.Cleanup(a.Close)
	_, port, _ := net.SplitHostPort(a.Listener.Addr().String())

	dir := buildJS(t, "http_js")
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`modules:
  http_js:
    sha256: %s
    http:
      - {host: 127.0.0.1, ports: [%s], schemes: [http], methods: [GET, POST], allow_private: true}
    secrets:
      apikey: {from: TEST_API_KEY, header: Authorization, format: "Bearer {}", hosts: [127.0.0.1]}
`, fileSHA(t, dir, "http_js"), port)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_API_KEY", testSecret)
	s := startHTTPIn(t, dir, "--policy", policy)
	cs := connectHTTP(t, s, "2026-07-28")

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"text", map[string]any{"url": a.URL + "/hello"}, `{"status":200,"text":"hello from A","type":"text/plain"}`},
		{"text body", map[string]any{"url": a.URL + "/echo", "method": "POST", "body": "héllo ☃"}, `{"status":200,"text":"héllo ☃","type":"application/octet-stream"}`},
		{"binary body", map[string]any{"url": a.URL + "/echo", "method": "POST", "bytes": []int{255, 0, 128, 10}}, `{"bytes":[255,0,128,10],"status":200}`},
		{"secret", map[string]any{"url": a.URL + "/auth", "secret": "apikey"}, `{"status":200,"text":"GET authorized","type":"text/plain; charset=utf-8"}`},
		{"denied", map[string]any{"url": "http://127.0.0.1:1/hello"}, `"code":7,"denied":true`},
	} {
		res := callTool(t, cs, "js_fetch", tc.args)
		got := mustJSON(t, res.StructuredContent)
		if res.IsError || !strings.Contains(got, strings.Trim(tc.want, "{}")) {
			t.Errorf("%s: js_fetch = %s %q (isError %v); want %s", tc.name, got, text(res), res.IsError, tc.want)
		}
		if tc.name == "denied" && !strings.Contains(got, "(port 1)") {
			t.Errorf("denied: the error %s does not name the port the policy lacks", got)
		}
	}
}

func cmpAuth(h string) string {
	if h == "Bearer "+testSecret {
		return "authorized"
	}
	return "no credentials"
}
