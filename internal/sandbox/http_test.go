package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/wasmcp/wasmcp/abi"
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
	if got[0] != '7' || !strings.Contains(got, "evil.test") || len(out.Denials.Kept) != 1 {
		t.Errorf("a denied request: %s, denials %v", got, out.Denials)
	}
	got, out = run(`{"method":"GET","url":"https://api.test/"}`, nil)
	if got[0] != '7' || !strings.Contains(got, "no http grant") || len(out.Denials.Kept) != 1 {
		t.Errorf("a request without any grant: %s, denials %v", got, out.Denials)
	}
	for _, bad := range []string{`not json`, `{"url":"x","body":"a","body_base64":"YQ=="}`, `{"url":"x","body_base64":"%%%"}`} {
		if got, _ := run(bad, fake); got[0] != '2' || !strings.Contains(got, "error") {
			t.Errorf("request %s: %s; want code 2 with an error", bad, got)
		}
	}
}

// TestHTTPResultCodes runs the guest's requests through a real egress
// client: each kind of failure gets the code docs/abi.md gives it. Above
// all, a response over the size limit is a failed request (network), not
// an allowance of the call used up (limit).
func TestHTTPResultCodes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 2000)) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	grant := egress.Grant{Rules: []egress.Rule{{Host: "127.0.0.1", Ports: []int{p, 1}, Schemes: []string{"http"}, Methods: []string{"GET", "POST"}, AllowPrivate: true}}}
	base := egress.Limits{MaxResponseBody: 1000, MaxRequestBody: 10, MaxRedirects: 2}

	e := newEngine(t)
	c := compile(t, e, "httpcall")
	for _, tc := range []struct {
		name   string
		limits egress.Limits
		before string // a request made first by the same call's client
		req    string
		code   int32
		says   string
	}{
		{name: "an answer", req: `{"url":"{base}/ok"}`, code: abi.Ok, says: `"status":200`},
		{name: "a response over the size limit", req: `{"url":"{base}/big"}`, code: abi.ErrNetwork,
			says: "response body is over the limit (1000 bytes)"},
		{name: "too many redirects", req: `{"url":"{base}/loop"}`, code: abi.ErrNetwork, says: "redirect limit (2) reached"},
		{name: "no answer", req: `{"url":"http://127.0.0.1:1/"}`, code: abi.ErrNetwork, says: "dial tcp 127.0.0.1:1"},
		{name: "a port not granted", req: `{"url":"http://127.0.0.1:2/"}`, code: abi.ErrDenied, says: "port 2"},
		{name: "a request body over the size limit", req: `{"method":"POST","url":"{base}/ok","body":"0123456789a"}`, code: abi.ErrTooLong,
			says: "request body of 11 bytes is over the limit (10 bytes)"},
		{name: "the call's requests used up", limits: egress.Limits{MaxRequests: 1}, before: `{"url":"{base}/ok"}`, req: `{"url":"{base}/ok"}`,
			code: abi.ErrLimit, says: "request count limit (1) reached for this call"},
		{name: "the call's bytes used up", limits: egress.Limits{MaxResponseBody: 4000, MaxTotalBytes: 1500}, req: `{"url":"{base}/big"}`,
			code: abi.ErrLimit, says: "total bytes limit (1500) reached for this call"},
		{name: "a host not granted", req: `{"url":"http://10.0.0.1/"}`, code: abi.ErrDenied, says: `http host \"10.0.0.1\"`},
		{name: "a malformed request", req: `{"url":"ftp://127.0.0.1/"}`, code: abi.ErrInvalid, says: "only http and https are"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := base
			if tc.limits != (egress.Limits{}) {
				lim = tc.limits
			}
			client := egress.NewClient(grant, lim, nil)
			call := func(req string) string {
				req = strings.ReplaceAll(req, "{base}", srv.URL)
				out := c.Run(context.Background(), Run{Stdin: []byte(req), Limits: small, HTTP: client})
				if out.Failure != nil {
					t.Fatalf("run: %+v", out.Failure)
				}
				return string(out.Stdout)
			}
			if tc.before != "" {
				if got := call(tc.before); got[0] != '0' {
					t.Fatalf("the request before: %s", got)
				}
			}
			got := call(tc.req)
			if got[0] != byte('0'+tc.code) || !strings.Contains(got, tc.says) {
				t.Errorf("got %s; want code %d saying %q", got, tc.code, tc.says)
			}
		})
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

// TestDenialsAreBounded has a guest refused 100 times, each time for a
// host of its own in a URL of 64 KiB: the run keeps MaxDenials of them,
// each cut short with its end kept, and counts the others, whether the
// refusal is the host's (no grant at all) or egress's.
func TestDenialsAreBounded(t *testing.T) {
	c := compile(t, newEngine(t), "denied")
	for name, doer := range map[string]HTTPDoer{"no grant": nil, "not granted": namesTheURL{}} {
		t.Run(name, func(t *testing.T) {
			lim := small
			lim.Timeout = time.Minute // 6 MiB of requests to read, under the race detector
			lim.Output = 1 << 20      // egress's answer, which names the URL
			out := c.Run(context.Background(), Run{Limits: lim, HTTP: doer})
			if out.Failure == nil || out.Failure.Kind != Exit {
				t.Fatalf("failure %+v; want exit status 1", out.Failure)
			}
			if len(out.Denials.Kept) != MaxDenials || out.Denials.More != 100-MaxDenials {
				t.Fatalf("kept %d denials and counted %d more; want %d and %d", len(out.Denials.Kept), out.Denials.More, MaxDenials, 100-MaxDenials)
			}
			for _, d := range out.Denials.Kept {
				if len(d) > MaxDenialLen || !strings.Contains(d, "…") || !utf8.ValidString(d) {
					t.Errorf("kept %q (%d bytes); want at most %d, cut with …", d, len(d), MaxDenialLen)
				}
			}
			if doer == nil && len(out.Stderr) > 2*MaxDenialLen {
				t.Errorf("the guest was told %d bytes: %.100s…; want the refusal cut short too", len(out.Stderr), out.Stderr)
			}
		})
	}
}

// namesTheURL denies every request, naming its whole URL, as egress names
// a host that is not granted.
type namesTheURL struct{}

func (namesTheURL) Do(_ context.Context, req egress.Request) (*egress.Response, error) {
	return nil, &egress.Denied{Permission: "http host " + strconv.Quote(req.URL) + " (method GET)"}
}

func TestDenialsKeepDistinctOnesAndCountTheRest(t *testing.T) {
	var d Denials
	if !d.Empty() {
		t.Fatal("a new Denials is not empty")
	}
	for range 3 {
		d.Add("http host \"a.test\"")
	}
	if len(d.Kept) != 1 || d.More != 0 || d.Empty() {
		t.Fatalf("a denial repeated: %+v; want it kept once", d)
	}
	long := "http host \"" + strings.Repeat("é", 1000) + "\" (method POST)"
	d.Add(long)
	if got := d.Kept[1]; len(got) > MaxDenialLen || !strings.HasPrefix(got, "http host \"é") || !strings.HasSuffix(got, "é\" (method POST)") || !utf8.ValidString(got) {
		t.Errorf("a long denial was kept as %q; want its start and end, valid UTF-8, within %d bytes", got, MaxDenialLen)
	}
	for i := range MaxDenials + 5 {
		d.Add(fmt.Sprint("denial ", i))
	}
	if len(d.Kept) != MaxDenials || d.More != 7 || d.Kept[2] != "denial 0" {
		t.Errorf("after %d distinct denials: kept %q, %d more; want the first %d and 7 more", MaxDenials+7, d.Kept, d.More, MaxDenials)
	}
	d.Add("denial 0")
	if d.More != 7 {
		t.Errorf("a kept denial again counted as one more: %d", d.More)
	}
}

// bodyOf answers every request with its body.
type bodyOf []byte

func (b bodyOf) Do(context.Context, egress.Request) (*egress.Response, error) {
	return &egress.Response{Status: 200, Body: b}, nil
}

// TestHTTPAnswerIsBoundedByTheMemoryLimit: an answer waits in the host
// until the guest takes it, so one that, encoded, is larger than the
// guest's memory limit (which it could never take) is refused before it is
// made: a body of control characters takes six times its size as a JSON
// string, one that is not UTF-8 four thirds as base64.
func TestHTTPAnswerIsBoundedByTheMemoryLimit(t *testing.T) {
	c := compile(t, newEngine(t), "httpcall")
	lim := small
	lim.Memory = 1 << 20
	for _, tc := range []struct {
		name string
		body []byte
		code rune
		says string
	}{
		{"control characters that fit", bytes.Repeat([]byte{1}, 1000), '0', `"body":"\u0001\u0001`},
		{"control characters that would not", bytes.Repeat([]byte{1}, 200<<10), '8', "the response's body of 200 KiB would take 1.172 MiB as the answer's body, more than this tool's memory limit of 1 MiB could ever hold"},
		{"binary that would not", bytes.Repeat([]byte{0xff}, 800<<10), '8', "the response's body of 800 KiB would take 1.042 MiB as the answer's body_base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := c.Run(context.Background(), Run{Stdin: []byte(`{"url":"https://api.test/"}`), Limits: lim, HTTP: bodyOf(tc.body)})
			if out.Failure != nil {
				t.Fatalf("run: %+v", out.Failure)
			}
			if got := string(out.Stdout); !strings.HasPrefix(got, string(tc.code)) || !strings.Contains(got, tc.says) {
				t.Errorf("answer %.300s; want code %c saying %q", got, tc.code, tc.says)
			}
		})
	}
}
