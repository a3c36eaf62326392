package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/host"
)

func newServer(t *testing.T, cfg host.Config) *host.Server {
	t.Helper()
	if cfg.Tools == "" {
		cfg.Tools = exampleTools()
		t.Cleanup(func() { os.RemoveAll(cfg.Tools) })
	}
	cfg.Engine = os.Getenv("WASMCP_ENGINE")
	srv, err := host.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return srv
}

func TestStatusAndCompileAll(t *testing.T) {
	srv := newServer(t, host.Config{})
	st := srv.Status()
	if len(st.Tools) != 1 || st.Tools[0].Name != "echo" || st.Tools[0].Compiled != nil || len(st.Errors) != 0 {
		t.Fatalf("status %+v", st)
	}
	st = srv.CompileAll(context.Background())
	if c := st.Tools[0].Compiled; c == nil || !*c {
		t.Fatalf("after CompileAll: %+v", st.Tools[0])
	}
}

func TestUnknownTool(t *testing.T) {
	srv := newServer(t, host.Config{})
	if _, err := srv.Call(context.Background(), "nope", nil, nil); !errors.Is(err, host.ErrUnknownTool) {
		t.Fatalf("Call(nope) = %v", err)
	}
}

// The policy is read again with every reload: a grant takes effect without
// a restart, and a broken file keeps the last good one.
func TestReloadReadsThePolicy(t *testing.T) {
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyFile, []byte("modules: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, host.Config{Policy: policyFile})
	if err := os.WriteFile(policyFile, []byte("modules: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Reload(); err != nil {
		t.Fatal(err)
	}
	errs := srv.Status().Errors
	if len(errs) != 1 || errs[0].File != policyFile || !strings.Contains(errs[0].Error, "keeps granting") {
		t.Fatalf("errors after a broken policy: %+v", errs)
	}
	if res, err := srv.Call(context.Background(), "echo", json.RawMessage(`{}`), nil); err != nil || res.IsError {
		t.Fatalf("a call under the last good policy: %v %+v", err, res)
	}
}

func TestNewRefusesABrokenPolicy(t *testing.T) {
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyFile, []byte("modules: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := exampleTools()
	defer os.RemoveAll(dir)
	if _, err := host.New(context.Background(), host.Config{Tools: dir, Policy: policyFile}); err == nil {
		t.Fatal("New accepted a policy that does not load")
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	srv := newServer(t, host.Config{})
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// RecentCalls keeps the last Config.RecentCalls calls, with their outcomes,
// and nothing without it.
func TestRecentCalls(t *testing.T) {
	if got := newServer(t, host.Config{}).RecentCalls(); got != nil {
		t.Errorf("without Config.RecentCalls, RecentCalls = %v", got)
	}
	srv := newServer(t, host.Config{RecentCalls: 2, Metrics: true})
	for _, args := range []string{`{"n":1}`, `{"n":2}`, `[]`} {
		if _, err := srv.Call(context.Background(), "echo", json.RawMessage(args), nil); err != nil {
			t.Fatal(err)
		}
	}
	got := srv.RecentCalls()
	if len(got) != 2 || got[0].Outcome != "ok" || got[1].Outcome != "invalid_arguments" {
		t.Fatalf("RecentCalls after two good calls and a bad one = %+v; want the last good one, then the bad one", got)
	}
	for _, c := range got {
		if c.Tool != "echo" || c.End.IsZero() || c.Duration <= 0 {
			t.Errorf("recent call %+v lacks its tool, end or duration", c)
		}
	}
}

func TestStatusHasTheSchemas(t *testing.T) {
	st := newServer(t, host.Config{}).Status()
	if got := string(st.Tools[0].InputSchema); got != `{"type":"object"}` {
		t.Errorf("Status's inputSchema = %s; want the manifest's", got)
	}
}

// A replica's session ids begin with its id, for a load balancer to route
// by; an id a balancer's pattern could not take apart is refused.
func TestReplicaIDBeginsSessionIDs(t *testing.T) {
	srv := newServer(t, host.Config{HTTP: host.HTTPConfig{ReplicaID: "r2"}})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req := httptest.NewRequest("POST", host.Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	id := rec.Header().Get("Mcp-Session-Id")
	if prefix, rest, ok := strings.Cut(id, "."); !ok || prefix != "r2" || len(rest) < 20 {
		t.Fatalf("session id %q (status %d); want r2. and a random rest", id, rec.Code)
	}

	dir := exampleTools()
	defer os.RemoveAll(dir)
	for _, bad := range []string{"-r", "r.2", "r 2", strings.Repeat("r", 64)} {
		if _, err := host.New(context.Background(), host.Config{Tools: dir, HTTP: host.HTTPConfig{ReplicaID: bad}}); err == nil || !strings.Contains(err.Error(), "replica id") {
			t.Errorf("replica id %q: %v; want it refused", bad, err)
		}
	}
}
