package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/wasmcp/wasmcp/internal/egress"
)

// fakeHTTP answers every request, or denies those to denyHost.
type fakeHTTP struct {
	got      []egress.Request
	denyHost string
}

func (f *fakeHTTP) Do(_ context.Context, req egress.Request) (*egress.Response, error) {
	f.got = append(f.got, req)
	if strings.Contains(req.URL, f.denyHost) {
		return nil, &egress.Denied{Permission: "http host " + f.denyHost}
	}
	return &egress.Response{Status: 201, Header: map[string]string{"Content-Type": "text/plain"}, Body: []byte("made \xff")}, nil
}

func TestHTTPRequestsGoThroughTheDoer(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "httpcall")
	fake := &fakeHTTP{denyHost: "evil.test"}
	run := func(req string, doer HTTPDoer) (string, Outcome) {
		out := c.Run(context.Background(), Run{Stdin: []byte(req), Limits: small, HTTP: doer})
		if out.Failure != nil {
			t.Fatalf("run: %+v", out.Failure)
		}
		return string(out.Stdout), out
	}

	got, _ := run(`{"method":"POST","url":"https://api.test/x","headers":{"A":"b"},"body":"hi","secret":"k"}`, fake)
	if got[0] != '0' {
		t.Fatalf("code %c; answer %s", got[0], got[1:])
	}
	var a struct {
		Status     int
		Headers    map[string]string
		BodyBase64 string `json:"body_base64"`
	}
	if err := json.Unmarshal([]byte(got[1:]), &a); err != nil || a.Status != 201 || a.BodyBase64 != "bWFkZSD/" || a.Headers["Content-Type"] != "text/plain" {
		t.Errorf("answer = %s (%v)", got[1:], err)
	}
	if r := fake.got[0]; r.Method != "POST" || string(r.Body) != "hi" || r.Secret != "k" || r.Header["A"] != "b" {
		t.Errorf("the doer got %+v", r)
	}

	got, out := run(`{"method":"GET","url":"https://evil.test/"}`, fake)
	if got[0] != '7' || !strings.Contains(got, "evil.test") || len(out.Denials) != 1 {
		t.Errorf("a denied request: %s, denials %v", got, out.Denials)
	}
	got, out = run(`{"method":"GET","url":"https://api.test/"}`, nil)
	if got[0] != '7' || !strings.Contains(got, "no http grant") || len(out.Denials) != 1 {
		t.Errorf("a request without any grant: %s, denials %v", got, out.Denials)
	}
	for _, bad := range []string{`not json`, `{"url":"x","body":"a","body_base64":"YQ=="}`, `{"url":"x","body_base64":"%%%"}`} {
		if got, _ := run(bad, fake); got[0] != '2' || !strings.Contains(got, "error") {
			t.Errorf("request %s: %s; want code 2 with an error", bad, got)
		}
	}
}

func TestMountsAreReadOnlyUnlessGrantedWrite(t *testing.T) {
	dir := t.TempDir()
	for _, write := range []bool{false, true} {
		cfs, err := newConfinedFS(Mount{Host: dir, Guest: "/m", Write: write})
		if err != nil {
			t.Fatal(err)
		}
		f, errno := cfs.OpenFile("new.txt", experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
		if (errno == 0) != write {
			t.Errorf("write %v: creating a file gave errno %v", write, errno)
		}
		if f != nil {
			f.Close()
		}
		if errno := cfs.Mkdir("sub", 0o755); (errno == 0) != write {
			t.Errorf("write %v: mkdir gave errno %v", write, errno)
		}
		cfs.root.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Errorf("the writable mount did not write: %v", err)
	}
}
