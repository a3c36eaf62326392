package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// A Python tool reaches the host through the SDK: HTTP where the policy
// grants it (and a HostError with the code where it does not), the call's
// granted variable and directory although its snapshot was made without
// them, and progress with the host's result codes.
func TestPythonToolReachesTheHost(t *testing.T) {
	dir, notes := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(notes, "a.txt"), []byte("note A"), 0o644); err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from A") }))
	t.Cleanup(web.Close)
	_, port, _ := net.SplitHostPort(web.Listener.Addr().String())
	buildPython(t, dir, "hostprobe", "../sdk-guest/python/hostprobe",
		`{"abi":1,"start":"reactor","tools":[{"name":"hostprobe","description":"Reaches the host.","inputSchema":{"type":"object"},"output":"json"}],
		"permissions":{"http":[{"host":"127.0.0.1"}],"env":["GREETING"],"dirs":[{"guest":"/notes"}]},"limits":{"memory":"64MiB"}}`)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`modules:
  hostprobe:
    sha256: %s
    http:
      - {host: 127.0.0.1, ports: [%s], schemes: [http], allow_private: true}
    env:
      GREETING: hello
    dirs:
      /notes: {host: %s}
`, fileSHA(t, dir, "hostprobe"), port, notes)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTPIn(t, dir, "--policy", policy)
	cs := connectHTTP(t, s, "2025-11-25")
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": "http://127.0.0.1:" + port + "/hello"}, `{"http":{"body":"hello from A","status":200}}`},
		{map[string]any{"env": "GREETING"}, `{"env":"hello"}`},
		{map[string]any{"path": "/notes/a.txt"}, `{"file":"note A"}`},
		{map[string]any{"progress": true}, `{"progress":[0,6]}`},
	} {
		res := callTool(t, cs, "hostprobe", tt.args)
		if res.IsError || mustJSON(t, res.StructuredContent) != tt.want {
			t.Errorf("hostprobe %s = %s %q; want %s", mustJSON(t, tt.args), mustJSON(t, res.StructuredContent), text(res), tt.want)
		}
	}
	// A port the policy does not grant: the host refuses, and the tool
	// gets HostError with code 7 (denied) and the reason.
	res := callTool(t, cs, "hostprobe", map[string]any{"url": "http://127.0.0.1:1/hello"})
	var got struct {
		HTTP struct {
			Code  int
			Error string
		}
	}
	if res.IsError {
		t.Fatalf("hostprobe to an ungranted port: %q", text(res))
	}
	if err := json.Unmarshal([]byte(mustJSON(t, res.StructuredContent)), &got); err != nil || got.HTTP.Code != 7 || got.HTTP.Error == "" {
		t.Errorf("hostprobe to an ungranted port = %s; want code 7 with the reason", mustJSON(t, res.StructuredContent))
	}
}
