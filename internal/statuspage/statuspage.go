// Package statuspage serves a read-only HTML page of what a wasmcp server
// serves and does: its modules, tools with their schemas and limits, the
// files that did not load and why, the last calls with their outcomes and
// durations, and charts of their latency and error rate. It shows only
// what the server already reports (host.Server's Status and RecentCalls),
// drawn on the server: the page has no script, loads nothing from
// anywhere, and everything a module or manifest wrote reaches it escaped.
package statuspage

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/wasmcp/wasmcp/host"
)

// RecentCalls is how many calls the page shows, the last ones finished:
// enough for the charts to show a trend, few enough that the page stays
// small. A server's whole history is for Prometheus (/metrics).
const RecentCalls = 200

// Source is what the page shows; *host.Server is one.
type Source interface {
	Status() host.Status
	RecentCalls() []host.FinishedCall
}

// CookieName is the cookie that admits a browser to the page once it has
// shown the token (see Handler).
const CookieName = "wasmcp_page"

//go:embed page.html page.css
var files embed.FS

var (
	page = template.Must(template.New("page.html").ParseFS(files, "page.html"))
	// css is the page's one style sheet, inline; the Content-Security-Policy
	// admits it by its hash and nothing else.
	css = template.CSS(must(files.ReadFile("page.css")))
	csp = "default-src 'none'; style-src 'sha256-" + hash(string(css)) + "'; img-src 'none'; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Handler serves the page. With a token, a request must show it, in one of
// three ways:
//
//   - the Authorization: Bearer header, as on /mcp, /status and /metrics;
//   - once, as ?token= in the address: the answer sets an HttpOnly,
//     SameSite=Strict cookie and sends the browser on to the address
//     without it, so that the token stays out of the address bar;
//   - that cookie. It holds an HMAC of the token, not the token, so a
//     stolen cookie opens this page and nothing else.
//
// On a loopback listener the Host must be loopback too, so that a web
// page that rebinds its own name to 127.0.0.1 cannot read this one.
func Handler(src Source, token string, log *slog.Logger) http.Handler {
	show := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		if err := page.Execute(&buf, newView(src.Status(), src.RecentCalls())); err != nil {
			log.Error("rendering the status page", "error", err)
			http.Error(w, "the status page could not be drawn; the server's log says why", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		w.Write(buf.Bytes())
	})
	var next http.Handler = show
	if token != "" {
		next = withToken(token, show)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && loopback(local.String()) && !loopback(r.Host) {
			http.Error(w, "forbidden: the status page of a server on loopback answers only to a loopback host name (localhost, 127.0.0.1, [::1])", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withToken admits the requests that show token, as Handler describes.
func withToken(token string, next http.Handler) http.Handler {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("wasmcp status page"))
	cookie := hex.EncodeToString(mac.Sum(nil))
	bearer := host.RequireBearer(token, next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if given := r.URL.Query().Get("token"); given != "" {
			if subtle.ConstantTimeCompare([]byte(given), []byte(token)) != 1 {
				unauthorized(w, "the token in the address is not this server's: use the contents of the server's --auth-token-file")
				return
			}
			http.SetCookie(w, &http.Cookie{
				Name: CookieName, Value: cookie, Path: r.URL.Path,
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
			})
			http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(CookieName); err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(cookie)) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		if r.Header.Get("Authorization") == "" {
			unauthorized(w, "this page needs the server's token: open it once as "+r.URL.Path+"?token=TOKEN (the contents of the server's --auth-token-file), or send Authorization: Bearer TOKEN")
			return
		}
		bearer.ServeHTTP(w, r)
	})
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="wasmcp"`)
	http.Error(w, "unauthorized: "+msg, http.StatusUnauthorized)
}

// loopback reports whether a host, or host:port, names this machine.
func loopback(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	if err != nil {
		h = strings.Trim(hostport, "[]")
	}
	if h == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// indent lays out a schema for reading; one that does not parse is shown
// as written.
func indent(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}
