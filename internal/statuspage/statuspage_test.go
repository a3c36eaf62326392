package statuspage

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// source is a Source of fixed answers.
type source struct {
	status host.Status
	calls  []host.FinishedCall
}

func (s source) Status() host.Status              { return s.status }
func (s source) RecentCalls() []host.FinishedCall { return s.calls }

// Markup a hostile module, manifest or file name might carry.
const (
	hostileName   = `<script>alert("name")</script>`
	hostileText   = `</pre></td><img src=x onerror=alert(1)><b onclick="x">`
	hostileFile   = `"><svg onload=alert(2)>.wasm`
	hostileSchema = `{"type":"object","description":"</pre><script>alert(3)</script>"}`
)

func hostileSource() source {
	end := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	return source{
		status: host.Status{
			Tools: []host.ToolStatus{
				{Name: "calculate", Description: "Adds numbers.", Module: "tools/calculate.wasm", Manifest: "embedded", Output: "text",
					InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"}}}`),
					Limits:      abi.Limits{Timeout: abi.Duration(10 * time.Second), Memory: 64 << 20, Output: 1 << 20}},
				{Name: hostileName, Description: hostileText, Module: hostileFile, Manifest: hostileText, Output: "json",
					InputSchema: json.RawMessage(hostileSchema), OutputSchema: json.RawMessage(hostileSchema)},
			},
			Modules: []host.ModuleStatus{{File: hostileFile, SHA256: "0123456789abcdef0123", Manifest: "embedded", Tools: []string{hostileName}, Resources: []string{hostileText}}},
			Errors:  []host.FileError{{File: hostileFile, Error: "manifest: " + hostileText}},
		},
		calls: []host.FinishedCall{
			{Tool: "calculate", Outcome: "ok", End: end, Duration: 2 * time.Millisecond, PeakMemory: 2 << 20},
			{Tool: hostileName, Outcome: "trap", End: end.Add(time.Second), Duration: 40 * time.Millisecond},
			{Tool: "calculate", Outcome: "invalid_arguments", End: end.Add(2 * time.Second), Duration: 50 * time.Microsecond},
		},
	}
}

// get serves one request of the page.
func get(t *testing.T, h http.Handler, target string, header http.Header) *http.Response {
	t.Helper()
	r := httptest.NewRequest("GET", target, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func handler(src Source, token string) http.Handler {
	return Handler(src, token, slog.New(slog.DiscardHandler))
}

// TestHostileTextStaysText parses the page as a browser would: no element
// or attribute that a module, manifest or file name wrote makes markup,
// and each reads back as the text it was.
func TestHostileTextStaysText(t *testing.T) {
	page := body(t, get(t, handler(hostileSource(), ""), "/", nil))
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for n := range doc.Descendants() {
		switch n.Type {
		case html.ElementNode:
			if n.Data == "script" || n.Data == "img" || n.Data == "b" || (n.Data == "svg" && n.Parent.Data != "figure") {
				t.Errorf("the page has a <%s> element out of a module's text", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("<%s> has an event handler %s=%q", n.Data, a.Key, a.Val)
				}
			}
		case html.TextNode:
			texts = append(texts, n.Data)
		}
	}
	all := strings.Join(texts, "")
	for _, want := range []string{hostileName, hostileText, hostileFile, `"description": "</pre><script>alert(3)</script>"`,
		"manifest: " + hostileText, hostileName + " trap: 40ms"} {
		if !strings.Contains(all, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
}

func TestPageShowsWhatTheServerReports(t *testing.T) {
	res := get(t, handler(hostileSource(), ""), "/", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	page := body(t, res)
	for _, want := range []string{
		`<code class="tool-name">calculate</code>: Adds numbers.`,
		"timeout 10s, memory 64MiB, output 1MiB",
		`&#34;properties&#34;: {`, // the input schema, indented
		"Recent calls: 3, 2 failed; median 2ms, slowest 40ms.",
		"0123456789ab</code>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The table lists the newest call first; the charts have a bar per
	// call, and one per group of calls.
	outcomes := regexp.MustCompile(`<td class="outcome-(?:ok|failed)">([a-z_]+)</td>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range outcomes {
		got = append(got, m[1])
	}
	if want := []string{"invalid_arguments", "trap", "ok"}; !slices.Equal(got, want) {
		t.Errorf("the calls' outcomes, as listed = %v; want %v", got, want)
	}
	if n := strings.Count(page, `<rect class="bar ok"`); n != 1 {
		t.Errorf("%d bars of good calls; want 1", n)
	}
	if n := strings.Count(page, `<rect class="bar failed"`); n != 2+3 {
		t.Errorf("%d bars of failures; want 2 in the latency chart and 3 in the error chart", n)
	}
	if !strings.Contains(page, "<title>calls 2 to 2: 1 of 1 failed</title>") {
		t.Error("the error chart does not title its bars")
	}
}

func TestPageWithoutCalls(t *testing.T) {
	page := body(t, get(t, handler(source{status: host.Status{}}, ""), "/", nil))
	for _, want := range []string{"No calls yet.", "Every file in the tool directory loaded.", "No tools are served."} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<svg") {
		t.Error("the page draws charts of no calls")
	}
}

// The policy admits the page's one style sheet by its hash, and nothing
// else: no script, no image, no request elsewhere, no frame around it.
func TestContentSecurityPolicy(t *testing.T) {
	res := get(t, handler(hostileSource(), ""), "/", nil)
	policy := res.Header.Get("Content-Security-Policy")
	page := body(t, res)
	_, rest, _ := strings.Cut(page, "<style>")
	style, _, _ := strings.Cut(rest, "</style>")
	sum := sha256.Sum256([]byte(style))
	for _, want := range []string{"default-src 'none'", "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", policy, want)
		}
	}
	if strings.Contains(policy, "unsafe") || strings.Contains(policy, "script-src") {
		t.Errorf("Content-Security-Policy %q admits a script or inline code", policy)
	}
	if strings.Count(page, "<style") != 1 || strings.Contains(page, " style=") {
		t.Error("the page has a style the policy does not admit")
	}
	for h, want := range map[string]string{"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"} {
		if got := res.Header.Get(h); got != want {
			t.Errorf("%s = %q; want %q", h, got, want)
		}
	}
}

func TestToken(t *testing.T) {
	const token = "a-token-of-sixteen-or-more"
	h := handler(hostileSource(), token)
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	for _, tt := range []struct {
		name   string
		target string
		header http.Header
		status int
		says   string
	}{
		{"nothing", "/", nil, 401, "open it once as /?token=TOKEN"},
		{"a wrong bearer token", "/", bearer("wrong"), 401, "needs a bearer token"},
		{"the bearer token", "/", bearer(token), 200, "wasmcp status"},
		{"a wrong token in the address", "/?token=wrong", nil, 401, "is not this server's"},
		{"the token as the cookie", "/", http.Header{"Cookie": {CookieName + "=" + token}}, 401, "open it once"},
	} {
		res := get(t, h, tt.target, tt.header)
		if b := body(t, res); res.StatusCode != tt.status || !strings.Contains(b, tt.says) {
			t.Errorf("%s: status %d %q; want %d saying %q", tt.name, res.StatusCode, b, tt.status, tt.says)
		}
		if res.StatusCode == 401 && res.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without a challenge", tt.name)
		}
	}

	// The token in the address sets the cookie and sends the browser on
	// to the address without it; the cookie then admits it.
	res := get(t, h, "/?token="+url.QueryEscape(token), nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("?token= answers %d to %q; want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("?token= sets cookies %v; want one", cookies)
	}
	c := cookies[0]
	if c.Name != CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || strings.Contains(c.Value, token) {
		t.Errorf("cookie %+v; want %s, HttpOnly, SameSite=Strict, path /, not holding the token", c, CookieName)
	}
	res = get(t, h, "/", http.Header{"Cookie": {c.String()}})
	if b := body(t, res); res.StatusCode != 200 || !strings.Contains(b, "wasmcp status") {
		t.Errorf("with the cookie: %d %q", res.StatusCode, b)
	}
	forged := &http.Cookie{Name: CookieName, Value: strings.Repeat("0", len(c.Value))}
	if res := get(t, h, "/", http.Header{"Cookie": {forged.String()}}); res.StatusCode != 401 {
		t.Errorf("a forged cookie gets %d; want 401", res.StatusCode)
	}
}

// On a loopback listener, a request naming another host is one a web page
// made by rebinding its own name to 127.0.0.1: it is refused.
func TestLoopbackHost(t *testing.T) {
	srv := httptest.NewServer(handler(hostileSource(), ""))
	defer srv.Close()
	for host, want := range map[string]int{"": 200, "localhost:1234": 200, "attacker.example": 403, "attacker.example:80": 403} {
		req, err := http.NewRequest("GET", srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %q: status %d; want %d", host, res.StatusCode, want)
		}
	}
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 777: "777ns", 3131 * time.Nanosecond: "3.13µs", 71849 * time.Microsecond: "71.8ms",
		1281 * time.Millisecond: "1.28s", 999_600 * time.Microsecond: "1s", 42 * time.Millisecond: "42ms",
	} {
		if got := short(d); got != want {
			t.Errorf("short(%v) = %q; want %q", d, got, want)
		}
	}
}

// BenchmarkPage draws the page of a server with 100 tools and a full ring
// of calls.
func BenchmarkPage(b *testing.B) {
	src := source{}
	for i := range 100 {
		src.status.Tools = append(src.status.Tools, host.ToolStatus{
			Name: "tool_" + strings.Repeat("x", i%20), Description: strings.Repeat("Does a thing. ", 20),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string","enum":["x","y"]}},"required":["a"]}`),
		})
	}
	for i := range RecentCalls {
		outcome := "ok"
		if i%7 == 0 {
			outcome = "trap"
		}
		src.calls = append(src.calls, host.FinishedCall{Tool: "tool_x", Outcome: outcome, End: time.Now(), Duration: time.Duration(i+1) * 37 * time.Microsecond})
	}
	h := handler(src, "")
	r := httptest.NewRequest("GET", "/", nil)
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
