package egress

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

// transforms are what an echoing service could be asked to do to what it
// echoes, each written with the standard library.
var transforms = map[string]func(string) string{
	"":             func(s string) string { return s },
	"upper":        strings.ToUpper,
	"lower":        strings.ToLower,
	"base64":       func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64url":    func(s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"base64raw":    func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) },
	"base64rawurl": func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	"hex":          func(s string) string { return hex.EncodeToString([]byte(s)) },
	"HEX":          func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
	"percent": func(s string) string { // every byte
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	},
	"query": url.QueryEscape,
	"path":  url.PathEscape,
	"json":  func(s string) string { b, _ := json.Marshal(s); return string(b) },
	"jsonascii": func(s string) string { // every character, as Python's ensure_ascii would a non-ASCII one
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(s)) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
		return b.String()
	},
	"jsonslash": func(s string) string { // as PHP's json_encode
		b, _ := json.Marshal(s)
		return strings.ReplaceAll(string(b), "/", `\/`)
	},
	"html": html.EscapeString,
	"htmldec": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "&#%d;", r)
		}
		return b.String()
	},
	"htmlhex": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "&#X%x;", r)
		}
		return b.String()
	},
	"utf16le": func(s string) string { le, _ := utf16Forms(s); return le },
	"utf16be": func(s string) string { _, be := utf16Forms(s); return be },
	"base64-jsonslash": func(s string) string {
		return strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(s)), "/", `\/`)
	},
	"base64-query": func(s string) string { return url.QueryEscape(base64.StdEncoding.EncodeToString([]byte(s))) },
}

// reflect echoes a request header back, the way a tool could ask an
// echoing service to:
//
//	h      the header (Authorization)
//	raw    1: without the "Bearer " of the secret's format
//	t      one of transforms, applied to the value with pad bytes before it
//	       and one after, so that an encoding holds it inside a longer text
//	where  body, header (X-Echo), split (its halves in X-Echo-1 and
//	       X-Echo-2) or lines (its halves as two X-Echo lines)
//	ce     content codings to apply to the body, in order (gzip, x-gzip,
//	       deflate, rawdeflate, or br, which is sent as it is)
//	asked  1: apply ce only if the request's Accept-Encoding asks for it
func reflect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := r.Header.Get(cmp.Or(q.Get("h"), "Authorization"))
	if q.Get("raw") != "" {
		v = strings.TrimPrefix(v, "Bearer ")
	}
	pad, _ := strconv.Atoi(q.Get("pad"))
	text := transforms[q.Get("t")](strings.Repeat("x", pad) + v + "!")
	body := []byte("no echo here")
	switch half := len(text) / 2; q.Get("where") {
	case "header":
		w.Header().Set("X-Echo", text)
	case "split":
		w.Header().Set("X-Echo-1", text[:half])
		w.Header().Set("X-Echo-2", text[half:])
	case "lines":
		w.Header().Add("X-Echo", text[:half])
		w.Header().Add("X-Echo", text[half:])
	default:
		body = []byte("echo: " + text + "\n")
	}
	if ce := q.Get("ce"); ce != "" && (q.Get("asked") == "" || r.Header.Get("Accept-Encoding") == ce) {
		var names []string
		for c := range strings.SplitSeq(ce, ",") {
			body = encode(c, body)
			names = append(names, strings.Replace(c, "rawdeflate", "deflate", 1))
		}
		w.Header().Set("Content-Encoding", strings.Join(names, ", "))
	}
	w.Write(body)
}

func encode(coding string, b []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip", "x-gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "rawdeflate":
		w, _ = flate.NewWriter(&buf, flate.DefaultCompression)
	default:
		return b
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// bombs are small gzip bodies that decode to far more than the limits of
// the tests that fetch them.
var bombs = sync.OnceValue(func() map[string][]byte {
	zeros := gzipped(make([]byte, 8<<20))
	empty := bytes.Repeat(gzipped(nil), 200_000) // empty gzip members, which decode to nothing
	return map[string][]byte{
		"zeros":         zeros,
		"zeros-twice":   gzipped(zeros),
		"empty-members": empty,
		"empty-twice":   gzipped(empty),
		"garbage":       []byte("not gzip at all"),
	}
})

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// bomb serves /bomb?b=<name of bombs>&ce=<Content-Encoding>, chunked.
func bomb(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Encoding", q.Get("ce"))
	w.Write(bombs()[q.Get("b")])
}

// noLeak fails the test unless the secret was taken out of resp, and no
// value shows in it in any form the suite knows how to undo.
func noLeak(t *testing.T, resp *Response) {
	t.Helper()
	var all, joined strings.Builder
	all.Write(resp.Body)
	for _, k := range slices.Sorted(maps.Keys(resp.Header)) {
		fmt.Fprintf(&all, "\n%s: %s", k, resp.Header[k])
		joined.WriteString(resp.Header[k])
	}
	all.WriteString("\n" + joined.String())
	if v := leaked(all.String()); v != "" {
		t.Fatalf("secret %q reached the guest: %q", v, all.String())
	}
	le, be := utf16Forms(redactedText)
	if !strings.Contains(all.String(), redactedText) && !strings.Contains(all.String(), le) && !strings.Contains(all.String(), be) {
		t.Fatalf("nothing was redacted: %q", all.String())
	}
}

func echoGrant(port int) Grant {
	return Grant{Rules: []Rule{lan("api.test", port), lan("other.test", port)}, Secrets: weatherKey("api.test")}
}

// TestSecretEchoes has a server echo the secret in each way a tool could
// ask it to, and checks that the guest gets none of them.
func TestSecretEchoes(t *testing.T) {
	var cases []tc
	add := func(name, secret, query string) {
		cases = append(cases, tc{name: name, grant: echoGrant,
			req:    Request{URL: "http://api.test:{port}/reflect?" + query, Secret: secret},
			status: 200, after: func(t *testing.T, _ *server, resp *Response) { noLeak(t, resp) }})
	}
	for tname := range transforms {
		pads := []int{0}
		if strings.HasPrefix(tname, "base64") {
			pads = []int{0, 1, 2}
		}
		for _, pad := range pads {
			for _, s := range []struct{ name, secret, query string }{
				{"formatted", "weather_key", ""},
				{"raw", "weather_key", "&raw=1"},
				{"special", "special_key", "&h=X-Api-Key"},
			} {
				q := fmt.Sprintf("t=%s&pad=%d%s", tname, pad, s.query)
				add(fmt.Sprintf("%s at %d, %s, in the body", cmp.Or(tname, "verbatim"), pad, s.name), s.secret, q)
				if strings.HasPrefix(tname, "utf16") {
					continue // not a header value
				}
				for _, where := range []string{"header", "split", "lines"} {
					add(fmt.Sprintf("%s at %d, %s, in %s", cmp.Or(tname, "verbatim"), pad, s.name, where), s.secret, q+"&where="+where)
				}
			}
		}
	}
	for _, ce := range []string{"gzip", "x-gzip", "deflate", "rawdeflate", "gzip,deflate", "deflate,gzip"} {
		for _, tname := range []string{"", "base64", "json"} {
			add(fmt.Sprintf("%s, unasked, %s", ce, cmp.Or(tname, "verbatim")), "weather_key", "ce="+ce+"&t="+tname)
		}
	}
	add("gzip asked for by the host", "weather_key", "ce=gzip&asked=1")
	add("HEAD", "weather_key", "where=split&t=base64")
	cases[len(cases)-1].req.Method = http.MethodHead
	run(t, cases)
}

// TestShapingHeaders checks that a tool may not choose the form or the
// part of the answer to a request that carries a secret, and may without
// one.
func TestShapingHeaders(t *testing.T) {
	var cases []tc
	for h, v := range map[string]string{
		"Accept-Encoding": "gzip", "accept-encoding": "identity", "Range": "bytes=0-9", "If-Range": `"x"`,
		"Accept-Charset": "utf-16", "A-IM": "gzip",
	} {
		cases = append(cases,
			tc{name: h + " refused with a secret", grant: echoGrant,
				req:     Request{URL: "http://api.test:{port}/reflect", Secret: "weather_key", Header: map[string]string{h: v}},
				errText: "may not be set on a request that carries secret", invalid: true, hits: none},
			tc{name: h + " allowed without one", grant: echoGrant,
				req: Request{URL: "http://api.test:{port}/reflect", Header: map[string]string{h: v}}, status: 200})
	}
	run(t, cases)
}

// TestContentCodings checks what the host does with each content coding:
// it decodes what it asked for and what a server sends unasked to a
// request that carried a secret, refuses what it cannot decode then, and
// bounds decoding by the response limits.
func TestContentCodings(t *testing.T) {
	gz := func(t *testing.T, resp *Response) {
		if _, ok := resp.Header["Content-Encoding"]; ok {
			t.Errorf("Content-Encoding %q handed on though the host decoded the body", resp.Header["Content-Encoding"])
		}
	}
	limits := Limits{MaxResponseBody: 64 << 10}
	run(t, []tc{
		{name: "the host asks for gzip and decodes it", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/reflect?ce=gzip&asked=1"}, status: 200, body: "echo: !\n",
			after: func(t *testing.T, s *server, resp *Response) {
				if got := s.seen()[0].AcceptEncoding; got != "gzip" {
					t.Errorf("the server saw Accept-Encoding %q", got)
				}
				gz(t, resp)
			}},
		{name: "a tool's own Accept-Encoding gets the body as it came", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/reflect?ce=gzip", Header: map[string]string{"Accept-Encoding": "gzip"}}, status: 200,
			after: func(t *testing.T, _ *server, resp *Response) {
				if resp.Header["Content-Encoding"] != "gzip" || !bytes.Equal(resp.Body, encode("gzip", []byte("echo: !\n"))) {
					t.Errorf("got %q and %q", resp.Header["Content-Encoding"], resp.Body)
				}
			}},
		{name: "an unknown coding sent unasked, without a secret, is handed on", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/reflect?ce=br"}, status: 200, body: "echo: !\n",
			after: func(t *testing.T, _ *server, resp *Response) {
				if resp.Header["Content-Encoding"] != "br" {
					t.Errorf("Content-Encoding %q", resp.Header["Content-Encoding"])
				}
			}},
		{name: "an unknown coding, to a request that carried a secret, is refused", grant: echoGrant,
			req:     Request{URL: "http://api.test:{port}/reflect?ce=br", Secret: "weather_key"},
			errText: `the response's content coding "br" is not one the host can decode (gzip, deflate); the answer to a request that carries a secret is checked for the secret`},
		{name: "so is one under gzip", grant: echoGrant,
			req:     Request{URL: "http://api.test:{port}/reflect?ce=br,gzip", Secret: "weather_key"},
			errText: `content coding "br"`},
		{name: "and three codings", grant: echoGrant,
			req:     Request{URL: "http://api.test:{port}/reflect?ce=gzip,gzip,gzip", Secret: "weather_key"},
			errText: "the response has 3 content codings (gzip, gzip, gzip); the host undoes at most 2"},
		{name: "a body that is not what its coding says is an error", grant: echoGrant,
			req:     Request{URL: "http://api.test:{port}/bomb?b=garbage&ce=gzip", Secret: "weather_key"},
			errText: "decoding the response's gzip coding"},
		{name: "a gzip bomb stops at the response limit", grant: rules(lanRule("api.test")), limits: limits,
			req: Request{URL: "http://api.test:{port}/bomb?b=zeros&ce=gzip"}, errText: "response body, decoded from gzip, is over the limit (65536 bytes)"},
		{name: "and one inside another", grant: rules(lanRule("api.test")), limits: limits,
			req: Request{URL: "http://api.test:{port}/bomb?b=zeros-twice&ce=gzip,gzip"}, errText: "response body, decoded from gzip, gzip, is over the limit (65536 bytes)"},
		{name: "a stream of empty gzip members stops at the limit on the wire", grant: rules(lanRule("api.test")), limits: limits,
			req: Request{URL: "http://api.test:{port}/bomb?b=empty-members&ce=gzip"}, errText: "response body is over the limit (65536 bytes)"},
		{name: "and inside gzip at the limit on what the outer layer gives", grant: rules(lanRule("api.test")), limits: limits,
			req: Request{URL: "http://api.test:{port}/bomb?b=empty-twice&ce=gzip,gzip"}, errText: "response body, decoded from gzip, gzip, is over the limit (65536 bytes)"},
		{name: "decoded bytes count towards the call's total", grant: rules(lanRule("api.test")), limits: Limits{MaxTotalBytes: 4 << 20},
			before: []Request{{URL: "http://api.test:{port}/big?n=" + strconv.Itoa(1<<20)}},
			req:    Request{URL: "http://api.test:{port}/bomb?b=zeros&ce=gzip"}, limit: "total bytes limit (4194304) reached for this call"},
	})
}

// TestDecodingIsBounded checks what a gzip bomb costs: no more decoded
// bytes than the limit, counted against the call.
func TestDecodingIsBounded(t *testing.T) {
	s := newServer(t, false)
	c := NewClient(echoGrant(s.port), Limits{MaxResponseBody: 64 << 10}, names)
	_, err := do(context.Background(), c, Request{URL: fmt.Sprintf("http://api.test:%d/bomb?b=zeros&ce=gzip", s.port), Secret: "weather_key"})
	if err == nil {
		t.Fatal("a gzip bomb was decoded whole")
	}
	if c.bytes != 64<<10+1 {
		t.Fatalf("the call counted %d bytes, want the limit and one", c.bytes)
	}
}

// TestRedirectedEchoes follows redirects with a secret: what the last hop
// echoes is scrubbed, and no Location takes the secret anywhere.
func TestRedirectedEchoes(t *testing.T) {
	esc := func(u string) string { return strings.ReplaceAll(url.QueryEscape(u), "%7Bport%7D", "{port}") }
	to := func(u string) string { return "http://api.test:{port}/redirect?to=" + esc(u) }
	run(t, []tc{
		{name: "same host, echoed in base64", grant: echoGrant,
			req:    Request{URL: to("/reflect?t=base64&pad=1"), Secret: "weather_key"},
			status: 200, after: func(t *testing.T, _ *server, resp *Response) { noLeak(t, resp) }},
		{name: "out and back, echoed gzipped", grant: echoGrant,
			req:    Request{URL: to("http://other.test:{port}/redirect?to=" + esc("http://api.test:{port}/reflect?ce=gzip")), Secret: "weather_key"},
			status: 200, hits: []string{"GET api.test/redirect", "GET other.test/redirect", "GET api.test/reflect"},
			after: func(t *testing.T, s *server, resp *Response) {
				noLeak(t, resp)
				if h := s.seen(); h[1].Auth != "" || h[2].Auth != "Bearer "+secretValue {
					t.Errorf("the hops saw %q, %q", h[1].Auth, h[2].Auth)
				}
			}},
		{name: "a Location with the secret percent-encoded", grant: echoGrant,
			req:     Request{URL: "http://api.test:{port}/leak-location?t=query", Secret: "weather_key"},
			errText: `redirect not followed: its Location holds the value of secret "weather_key"`, hits: []string{"GET api.test/leak-location"}},
		{name: "a Location with the secret in base64", grant: echoGrant,
			req:     Request{URL: "http://api.test:{port}/leak-location?t=base64url", Secret: "weather_key"},
			errText: `redirect not followed: its Location holds the value of secret "weather_key"`, hits: []string{"GET api.test/leak-location"}},
	})
}

// rawServer answers each request on a fresh connection with what respond
// returns, written as it is: responses that net/http's server would not
// send, framed as the test says.
func rawServer(t *testing.T, respond func(*http.Request) string) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if req, err := http.ReadRequest(bufio.NewReader(conn)); err == nil {
					io.WriteString(conn, respond(req))
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestTransferCodings checks that net/http undoes chunking before the
// secret is looked for, so a secret split over chunks is one string again,
// that a trailer never reaches the guest, and that a transfer coding Go
// does not know is an error.
func TestTransferCodings(t *testing.T) {
	chunks := func(r *http.Request) string {
		auth := r.Header.Get("Authorization")
		var b strings.Builder
		for i := 0; i < len(auth); i += 3 {
			piece := auth[i:min(i+3, len(auth))]
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(piece), piece)
		}
		b.WriteString("0\r\nX-Echo: " + auth + "\r\n\r\n")
		return b.String()
	}
	fetch := func(respond func(*http.Request) string) (*Response, error) {
		port := rawServer(t, respond)
		c := NewClient(Grant{Rules: []Rule{lan("api.test", port)}, Secrets: weatherKey("api.test")}, Limits{}, names)
		return do(context.Background(), c, Request{URL: fmt.Sprintf("http://api.test:%d/", port), Secret: "weather_key"})
	}

	resp, err := fetch(func(r *http.Request) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Echo\r\n\r\n" + chunks(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "Bearer "+redactedText {
		t.Fatalf("got %q, want the chunks put together and redacted", resp.Body)
	}
	noLeak(t, resp)

	_, err = fetch(func(r *http.Request) string {
		return "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" + chunks(r)
	})
	if err == nil || !strings.Contains(err.Error(), "unsupported transfer encoding") {
		t.Fatalf("a gzip transfer coding: got %v, want net/http's refusal", err)
	}
}

// TestErrorsAreScrubbed checks each kind of error for the secret in the
// forms the redactor knows, though only a server could put it there.
func TestErrorsAreScrubbed(t *testing.T) {
	c := NewClient(Grant{Secrets: weatherKey("api.test")}, Limits{}, names)
	suffix := " " + hex.EncodeToString([]byte(secretValue))
	for _, tc := range []struct {
		err  error
		kind func(error) bool
	}{
		{&Denied{Permission: "http host " + quote(url.QueryEscape(secretValue)+".evil.test")}, func(err error) bool { var d *Denied; return errors.As(err, &d) }},
		{&LimitError{Limit: "limit " + strings.ToUpper(otherValue)}, func(err error) bool { var l *LimitError; return errors.As(err, &l) }},
		{invalidf("bad %s", base64.StdEncoding.EncodeToString([]byte("x"+specialValue))), func(err error) bool { return errors.Is(err, ErrInvalid) }},
		{tooLongf("long %s", secretValue), func(err error) bool { return errors.Is(err, ErrTooLong) }},
		{fmt.Errorf("egress: wrapped: %w", context.Canceled), func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		got := c.scrubError(fmt.Errorf("%w%s", tc.err, suffix))
		record(nil, got)
		switch {
		case !strings.Contains(got.Error(), redactedText):
			t.Errorf("%v: nothing redacted in %q", tc.err, got)
		case leaked(got.Error()) != "":
			t.Errorf("%q still holds a secret", got)
		case !tc.kind(got):
			t.Errorf("%q lost its kind", got)
		}
	}
}
