package e2e

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pageSeen is what e2e/node/page.mjs reports of the status page.
type pageSeen struct {
	WithoutToken struct {
		Status int
		Text   string
	}
	Status  int
	URL     string
	Cookies []struct {
		Name, SameSite       string
		HTTPOnly, HoldsToken bool
	}
	DocumentCookie string
	Title, Summary string
	Calls          [][]string
	Tools          []string
	Errors         [][]string
	Injected       []string
	Charts         map[string]struct {
		OK, Failed int
		Box        struct{ X, Y, Width, Height float64 }
	}
	FirstSchema string
	Requests    []string
	Console     []string
	Dialogs     []string
}

// hostileFile is a file in the tool directory whose name is markup: it
// does not load, and the page must show its name as text.
const hostileFileName = `<img src=x onerror=alert(document.domain)>.wasm`

// TestStatusPageInBrowser serves the examples and a broken file with a
// hostile name behind a token, makes calls (one failing), and opens the
// status page in headless Chromium: the page admits the browser only
// with the token, shows the tools, the load error and the calls, draws
// both charts, runs nothing the file name wrote, fetches nothing from
// elsewhere, and its screenshot shows the charts.
func TestStatusPageInBrowser(t *testing.T) {
	dir := t.TempDir()
	examples, err := os.ReadDir("../tools")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		if !e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(toolsDir, e.Name()+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()+".wasm"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, hostileFileName), []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "a-long-enough-page-token"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTPIn(t, dir, "--auth-token-file", tokenFile)
	client := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: client}, "2026-07-28", s)
	callTool(t, cs, "calculate", map[string]any{"a": 10, "b": 5, "operation": "add"})
	if res := callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 0, "operation": "divide"}); !res.IsError {
		t.Fatalf("dividing by zero = %q; want an error", text(res))
	}
	callTool(t, cs, "slugify", map[string]any{"text": "Hello, World!"})
	callTool(t, cs, "text_stats", map[string]any{"text": "One two. Three."})

	shot := filepath.Join(t.TempDir(), "page.png")
	pageURL := strings.TrimSuffix(s.url, "/mcp") + "/"
	// playwright-core bounds each step it takes (30 s by default), so the
	// script ends even if the browser does not answer.
	cmd := nodeCommand(t, "node", "page.mjs", pageURL, token, shot)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("page.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var seen pageSeen
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil {
		t.Fatalf("page.mjs printed %q: %v", stdout.String(), err)
	}

	if seen.WithoutToken.Status != http.StatusUnauthorized || !strings.Contains(seen.WithoutToken.Text, "?token=") {
		t.Errorf("without the token: %d %q; want 401 saying how to pass it", seen.WithoutToken.Status, seen.WithoutToken.Text)
	}
	if seen.Status != http.StatusOK || seen.URL != pageURL || seen.Title != "wasmcp status" {
		t.Errorf("with the token: %d at %s titled %q; want 200 at %s, the token gone from the address", seen.Status, seen.URL, seen.Title, pageURL)
	}
	if len(seen.Cookies) != 1 || !seen.Cookies[0].HTTPOnly || seen.Cookies[0].SameSite != "Strict" || seen.Cookies[0].HoldsToken || seen.DocumentCookie != "" {
		t.Errorf("cookies %+v, document.cookie %q; want one HttpOnly SameSite=Strict cookie without the token", seen.Cookies, seen.DocumentCookie)
	}
	wantCalls := [][]string{{"text_stats", "ok"}, {"slugify", "ok"}, {"calculate", "exit"}, {"calculate", "ok"}}
	var gotCalls [][]string
	for _, row := range seen.Calls {
		if len(row) < 4 {
			t.Errorf("call row %q is short", row)
			continue
		}
		if _, err := time.ParseDuration(row[3]); err != nil {
			t.Errorf("call row %q has no duration: %v", row, err)
		}
		gotCalls = append(gotCalls, row[1:3])
	}
	if !slices.EqualFunc(gotCalls, wantCalls, slices.Equal) {
		t.Errorf("recent calls (tool, outcome) = %q; want %q, newest first", gotCalls, wantCalls)
	}
	if !strings.Contains(seen.Summary, "Recent calls: 4, 1 failed;") || !strings.Contains(seen.Summary, "Load errors: 1.") {
		t.Errorf("summary %q", seen.Summary)
	}
	for _, c := range inspectorCalls {
		if !slices.Contains(seen.Tools, c.tool) {
			t.Errorf("the page lists tools %q, not %s", seen.Tools, c.tool)
		}
	}
	if len(seen.Errors) != 1 || seen.Errors[0][0] != filepath.Join(dir, hostileFileName) || seen.Errors[0][1] == "" {
		t.Errorf("load errors %q; want the hostile file, by its name as text, with its reason", seen.Errors)
	}
	if len(seen.Injected) > 0 || len(seen.Dialogs) > 0 {
		t.Errorf("the file's name made elements %q and dialogs %q", seen.Injected, seen.Dialogs)
	}
	if !strings.Contains(seen.FirstSchema, `"type": "object"`) {
		t.Errorf("the first tool's schema reads %q", seen.FirstSchema)
	}
	for _, u := range seen.Requests {
		if !strings.HasPrefix(u, pageURL) {
			t.Errorf("the page made the browser fetch %s", u)
		}
	}
	// The browser logs the first visit's 401 and its request for a
	// favicon; anything else (a policy violation above all) is a fault.
	for _, m := range seen.Console {
		if !strings.HasPrefix(m, "Failed to load resource: the server responded with a status of 40") {
			t.Errorf("the browser's console: %s", m)
		}
	}
	if c := seen.Charts["latency-chart"]; c.OK != 3 || c.Failed != 1 {
		t.Errorf("latency chart: %d good and %d failed bars; want 3 and 1", c.OK, c.Failed)
	}
	if c := seen.Charts["error-chart"]; c.Failed != 4 {
		t.Errorf("error-rate chart: %d bars; want one per call, 4", c.Failed)
	}
	checkScreenshot(t, shot, seen)
}

// The charts' colours, as page.css has them.
var (
	okBar     = color.RGBA{0x2f, 0x7e, 0xc7, 0xff}
	failedBar = color.RGBA{0xd1, 0x43, 0x2f, 0xff}
)

// checkScreenshot checks that the screenshot is the whole page at the
// browser's width, that it is not blank, and that each chart's box holds
// its bars' colours. With WASMCP_PAGE_SCREENSHOT set, it is also copied
// there (docs/status-page.png is made so).
func checkScreenshot(t *testing.T, file string, seen pageSeen) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if size := img.Bounds().Size(); size.X != 1280 || size.Y <= 900 {
		t.Errorf("the screenshot is %v; want the whole page, 1280 wide and longer than the 900 of the window", size)
	}
	colours := map[color.RGBA]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 3 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 3 {
			colours[rgba(img.At(x, y))] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("the screenshot has %d colours: it is blank", len(colours))
	}
	for id, want := range map[string][]color.RGBA{"latency-chart": {okBar, failedBar}, "error-chart": {failedBar}} {
		box := seen.Charts[id].Box
		area := image.Rect(int(box.X), int(box.Y), int(box.X+box.Width), int(box.Y+box.Height))
		if area.Empty() || !area.In(img.Bounds()) {
			t.Errorf("%s's box %v is not within the screenshot %v", id, area, img.Bounds())
			continue
		}
		for _, c := range want {
			if n := count(img, area, c); n < 20 {
				t.Errorf("%s's box in the screenshot has %d pixels of %v; want its bars", id, n, c)
			}
		}
	}
	if to := os.Getenv("WASMCP_PAGE_SCREENSHOT"); to != "" {
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func rgba(c color.Color) color.RGBA {
	r, g, b, a := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func count(img image.Image, area image.Rectangle, c color.RGBA) int {
	n := 0
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if rgba(img.At(x, y)) == c {
				n++
			}
		}
	}
	return n
}
