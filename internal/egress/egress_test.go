package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The secret values of the suite. TestMain fails the run if any of them
// shows in an error, a Denied, or a response handed to the guest, as it is
// or in any of the encodings exposures undoes. specialValue holds the
// characters that escapes change.
const (
	secretValue  = "sk-live-7f3a9c-do-not-leak"
	otherValue   = "other-secret-2b81e4"
	specialValue = `sp3c/al+key=&<x>"y'~z`
)

var secretValues = []string{secretValue, otherValue, specialValue}

var (
	seenMu sync.Mutex
	seen   []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	seenMu.Lock()
	defer seenMu.Unlock()
	for _, s := range slices.Compact(slices.Sorted(slices.Values(seen))) {
		if v := leaked(s); v != "" {
			fmt.Fprintf(os.Stderr, "FAIL: secret %q reached the guest or an error: %q\n", v, s)
			code = 1
		}
	}
	if code == 0 && testing.Verbose() {
		fmt.Printf("checked %d errors and responses for secret values\n", len(seen))
	}
	os.Exit(code)
}

// record keeps everything the guest or a log could see of one Do: each
// error in the chain, Denied's permission, the response's headers and body.
func record(resp *Response, err error) {
	seenMu.Lock()
	defer seenMu.Unlock()
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		seen = append(seen, e.Error(), fmt.Sprintf("%+v", e))
		if d, ok := e.(*Denied); ok {
			seen = append(seen, d.Permission)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	if resp != nil {
		var all strings.Builder // a secret split over headers, put together again
		for _, k := range slices.Sorted(maps.Keys(resp.Header)) {
			seen = append(seen, k+": "+resp.Header[k])
			all.WriteString(resp.Header[k])
		}
		seen = append(seen, all.String(), string(resp.Body))
	}
}

func do(ctx context.Context, c *Client, req Request) (*Response, error) {
	resp, err := c.Do(ctx, req)
	record(resp, err)
	return resp, err
}

// resolver maps made-up names to addresses.
type resolver map[string][]string

func (r resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := r[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, a := range addrs {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

var names = resolver{
	"api.test":           {"127.0.0.1"},
	"other.test":         {"127.0.0.1"},
	"wild.test":          {"127.0.0.1"},
	"eu.wild.test":       {"127.0.0.1"},
	"deep.eu.wild.test":  {"127.0.0.1"},
	"public.test":        {"127.0.0.1"}, // granted only as a public host
	"internal.test":      {"10.0.0.5"},
	"meta.test":          {"169.254.169.254"},
	"v6.test":            {"::1"},
	"ula.test":           {"fd00::1"},
	"ec2v6.test":         {"fd00:ec2::254"},
	"mapped.test":        {"::ffff:127.0.0.1"},
	"cgnat.test":         {"100.100.100.200"},
	"mixed.test":         {"93.184.216.34", "10.0.0.5"},
	"example.com":        {"127.0.0.1"}, // httptest's certificate names it
	"unspecified.test":   {"0.0.0.0"},
	"multicast.test":     {"224.0.0.251"},
	"linklocal6.test":    {"fe80::1"},
	"nat64loopback.test": {"64:ff9b::7f00:1"},
}

// server is an httptest server on 127.0.0.1 that records the requests it
// gets.
type server struct {
	*httptest.Server
	port    int
	mu      sync.Mutex
	hits    []hit
	release chan struct{} // closed at the end of the test: /hang returns
	arrived chan struct{} // one value per request to /hang
}

type hit struct {
	Method, Host, Path, Auth, AcceptEncoding, Body string
}

func (h hit) String() string { return h.Method + " " + h.Host + h.Path }

func newServer(t *testing.T, useTLS bool) *server {
	s := &server{release: make(chan struct{}), arrived: make(chan struct{}, 16)}
	h := http.HandlerFunc(s.serve)
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes TestTLS provokes
	if useTLS {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)                     // runs second: waits for handlers
	t.Cleanup(func() { close(s.release) }) // runs first
	s.port = s.Listener.Addr().(*net.TCPAddr).Port
	return s
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	body := make([]byte, 1<<16)
	n, _ := r.Body.Read(body)
	host, port, _ := net.SplitHostPort(r.Host)
	auth := r.Header.Get("Authorization")
	s.mu.Lock()
	s.hits = append(s.hits, hit{Method: r.Method, Host: host, Path: r.URL.Path, Auth: auth, AcceptEncoding: r.Header.Get("Accept-Encoding"), Body: string(body[:n])})
	s.mu.Unlock()
	q := r.URL.Query()
	switch r.URL.Path {
	case "/redirect":
		code, _ := strconv.Atoi(q.Get("code"))
		w.Header().Set("Location", q.Get("to"))
		w.WriteHeader(cmpOr(code, http.StatusFound))
	case "/loop":
		w.Header().Set("Location", "/loop")
		w.WriteHeader(http.StatusFound)
	case "/echo":
		w.Header().Set("X-Seen-Auth", auth)
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		fmt.Fprintf(w, "method=%s auth=%s body=%s", r.Method, auth, body[:n])
	case "/big":
		size, _ := strconv.Atoi(q.Get("n"))
		if q.Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		w.Write([]byte(strings.Repeat("x", size)))
	case "/hang":
		s.arrived <- struct{}{}
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
	case "/leak-location": // echoes the secret into a redirect, transformed by ?t= (see transforms)
		w.Header().Set("Location", "http://nx.test:"+port+"/"+transforms[q.Get("t")](strings.TrimPrefix(auth, "Bearer ")))
		w.WriteHeader(http.StatusFound)
	case "/reflect":
		reflect(w, r)
	case "/bomb":
		bomb(w, r)
	case "/leak-host":
		w.Header().Set("Location", "http://"+strings.TrimPrefix(auth, "Bearer ")+".evil.test:"+port+"/")
		w.WriteHeader(http.StatusFound)
	default:
		fmt.Fprint(w, "hello")
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func (s *server) seen() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hits)
}

// lan grants http to a host on the test server's port, private addresses
// included; public grants the same without them.
func lan(host string, port int, methods ...string) Rule {
	return Rule{Host: host, Ports: []int{port}, Schemes: []string{"http"}, Methods: methods, AllowPrivate: true}
}

func public(host string, port int, methods ...string) Rule {
	r := lan(host, port, methods...)
	r.AllowPrivate = false
	return r
}

func weatherKey(hosts ...string) map[string]Secret {
	return map[string]Secret{
		"weather_key": {Value: secretValue, Header: "Authorization", Format: "Bearer {}", Hosts: hosts},
		"other_key":   {Value: otherValue, Header: "X-Api-Key", Hosts: []string{"other.test"}},
		"special_key": {Value: specialValue, Header: "X-Api-Key", Hosts: hosts},
	}
}

var none = []string{}

// tc is one request against a fresh server. URL's "{port}" is the server's
// port. Exactly one outcome is expected: a status, a Denied permission, a
// limit, an invalid or too long request, or a failure (errIs / errText).
type tc struct {
	name    string
	grant   func(port int) Grant
	limits  Limits
	before  []Request // sent first, each must succeed
	req     Request
	status  int
	body    string // substring of the body
	denied  string // exact permission
	limit   string // exact LimitError.Limit
	invalid bool
	tooLong bool
	errIs   error
	errText string   // substring of the error, whatever its kind
	hits    []string // requests the server got, if not nil
	after   func(t *testing.T, s *server, resp *Response)
}

func rules(r ...func(port int) Rule) func(int) Grant {
	return func(port int) Grant {
		var g Grant
		for _, f := range r {
			g.Rules = append(g.Rules, f(port))
		}
		return g
	}
}

func lanRule(host string, methods ...string) func(int) Rule {
	return func(port int) Rule { return lan(host, port, methods...) }
}

func publicRule(host string, methods ...string) func(int) Rule {
	return func(port int) Rule { return public(host, port, methods...) }
}

func withSecrets(g func(int) Grant, s map[string]Secret) func(int) Grant {
	return func(port int) Grant {
		gr := g(port)
		gr.Secrets = s
		return gr
	}
}

func run(t *testing.T, cases []tc) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, false)
			c := NewClient(tc.grant(s.port), tc.limits, names)
			fill := func(r Request) Request {
				r.URL = strings.ReplaceAll(r.URL, "{port}", strconv.Itoa(s.port))
				return r
			}
			for _, r := range tc.before {
				if _, err := do(context.Background(), c, fill(r)); err != nil {
					t.Fatalf("request before the one tested: %v", err)
				}
			}
			resp, err := do(context.Background(), c, fill(tc.req))
			var d *Denied
			var le *LimitError
			switch {
			case tc.status != 0:
				if err != nil {
					t.Fatalf("error %v, want status %d", err, tc.status)
				}
				if resp.Status != tc.status || !strings.Contains(string(resp.Body), tc.body) {
					t.Fatalf("got %d %q, want %d and a body with %q", resp.Status, resp.Body, tc.status, tc.body)
				}
			case err == nil:
				t.Fatalf("got %d %q, want an error", resp.Status, resp.Body)
			case !strings.Contains(err.Error(), strings.ReplaceAll(tc.errText, "{port}", strconv.Itoa(s.port))):
				t.Fatalf("got %v, want %q in it", err, tc.errText)
			case tc.denied != "":
				if !errors.As(err, &d) || d.Permission != tc.denied {
					t.Fatalf("got %v, want Denied %q", err, tc.denied)
				}
			case tc.limit != "":
				if !errors.As(err, &le) || le.Limit != tc.limit {
					t.Fatalf("got %v, want LimitError %q", err, tc.limit)
				}
			case tc.invalid:
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("got %v, want ErrInvalid", err)
				}
			case tc.tooLong:
				if !errors.Is(err, ErrTooLong) || errors.Is(err, ErrInvalid) {
					t.Fatalf("got %v, want ErrTooLong", err)
				}
			default:
				if errors.As(err, &d) || errors.As(err, &le) || errors.Is(err, ErrInvalid) || errors.Is(err, ErrTooLong) {
					t.Fatalf("got %v, want the request to have failed", err)
				}
				if tc.errIs != nil && !errors.Is(err, tc.errIs) {
					t.Fatalf("got %v, want one that is %v", err, tc.errIs)
				}
			}
			if tc.hits != nil {
				var got []string
				for _, h := range s.seen() {
					got = append(got, h.String())
				}
				if !slices.Equal(got, tc.hits) {
					t.Fatalf("server got %q, want %q", got, tc.hits)
				}
			}
			if tc.after != nil {
				tc.after(t, s, resp)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	run(t, []tc{
		{name: "allowed GET", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/echo"}, status: 200, body: "method=GET",
			hits: []string{"GET api.test/echo"},
			after: func(t *testing.T, _ *server, resp *Response) {
				if resp.Header["X-Multi"] != "one" {
					t.Errorf("X-Multi = %q, want the first value", resp.Header["X-Multi"])
				}
			}},
		{name: "HEAD allowed by default", grant: rules(lanRule("api.test")),
			req: Request{Method: "HEAD", URL: "http://api.test:{port}/"}, status: 200, hits: []string{"HEAD api.test/"}},
		{name: "method is upper-cased", grant: rules(lanRule("api.test")),
			req: Request{Method: "get", URL: "http://api.test:{port}/"}, status: 200, hits: []string{"GET api.test/"}},
		{name: "method denied", grant: rules(lanRule("api.test")),
			req:    Request{Method: "POST", URL: "http://api.test:{port}/", Body: []byte("x")},
			denied: `http host "api.test" (method POST)`, hits: none},
		{name: "method granted", grant: rules(lanRule("api.test", "POST")),
			req:    Request{Method: "POST", URL: "http://api.test:{port}/echo", Body: []byte("payload")},
			status: 200, body: "method=POST auth= body=payload"},
		{name: "host denied", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://evil.test:{port}/"}, denied: `http host "evil.test"`, hits: none},
		{name: "wildcard matches a subdomain", grant: rules(lanRule("*.wild.test")),
			req: Request{URL: "http://eu.wild.test:{port}/"}, status: 200, hits: []string{"GET eu.wild.test/"}},
		{name: "wildcard matches a deeper subdomain", grant: rules(lanRule("*.wild.test")),
			req: Request{URL: "http://deep.eu.wild.test:{port}/"}, status: 200},
		{name: "wildcard does not match the apex", grant: rules(lanRule("*.wild.test")),
			req: Request{URL: "http://wild.test:{port}/"}, denied: `http host "wild.test"`, hits: none},
		{name: "wildcard does not match a lookalike", grant: rules(lanRule("*.wild.test")),
			req: Request{URL: "http://evilwild.test:{port}/"}, denied: `http host "evilwild.test"`},
		{name: "hosts match case-insensitively", grant: rules(lanRule("*.wild.test")),
			req: Request{URL: "http://EU.wild.Test:{port}/"}, status: 200, hits: []string{"GET eu.wild.test/"}},
		{name: "scheme denied: http when only https", grant: rules(func(p int) Rule { return Rule{Host: "api.test", Ports: []int{p}, AllowPrivate: true} }),
			req: Request{URL: "http://api.test:{port}/"}, denied: `http host "api.test" (scheme http)`, hits: none},
		{name: "port denied", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:81/"}, denied: `http host "api.test" (port 81)`, hits: none},
		{name: "a pattern with a port matches nothing", grant: rules(func(p int) Rule {
			return Rule{Host: "api.test:" + strconv.Itoa(p), Schemes: []string{"http"}, AllowPrivate: true}
		}),
			req: Request{URL: "http://api.test:{port}/"}, denied: `http host "api.test"`},
		{name: "an IP rule", grant: rules(lanRule("127.0.0.1")),
			req: Request{URL: "http://127.0.0.1:{port}/"}, status: 200},
		{name: "an IPv4-mapped literal matches its IPv4 rule", grant: rules(lanRule("127.0.0.1")),
			req: Request{URL: "http://[::ffff:127.0.0.1]:{port}/"}, status: 200},
		{name: "an IP literal does not match a name rule", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://127.0.0.1:{port}/"}, denied: `http host "127.0.0.1"`},
		{name: "unknown name is a network error", grant: rules(lanRule("nx.test")),
			req: Request{URL: "http://nx.test:{port}/"}, errText: "no such host", hits: none},
		{name: "refused connection is a network error", grant: rules(lanRule("api.test"), func(int) Rule { return lan("api.test", 1) }),
			req: Request{URL: "http://api.test:1/"}, errText: "GET http://api.test:1/: dial tcp 127.0.0.1:1"},
	})
}

func TestAddresses(t *testing.T) {
	run(t, []tc{
		{name: "loopback literal denied though the host matches", grant: rules(publicRule("127.0.0.1")),
			req: Request{URL: "http://127.0.0.1:{port}/"}, denied: `private address 127.0.0.1 for host "127.0.0.1"`, hits: none},
		{name: "name resolving to loopback denied", grant: rules(publicRule("api.test")),
			req: Request{URL: "http://api.test:{port}/"}, denied: `private address 127.0.0.1 for host "api.test"`, hits: none},
		{name: "name resolving to a private address denied", grant: rules(publicRule("internal.test")),
			req: Request{URL: "http://internal.test:{port}/"}, denied: `private address 10.0.0.5 for host "internal.test"`},
		{name: "name resolving to the metadata address denied", grant: rules(publicRule("meta.test")),
			req: Request{URL: "http://meta.test:{port}/latest/meta-data/"}, denied: `private address 169.254.169.254 for host "meta.test"`},
		{name: "metadata literal denied", grant: rules(func(int) Rule { return Rule{Host: "169.254.169.254", Schemes: []string{"http"}} }),
			req: Request{URL: "http://169.254.169.254/latest/meta-data/"}, denied: `private address 169.254.169.254 for host "169.254.169.254"`},
		{name: "IPv6 loopback by name denied", grant: rules(publicRule("v6.test")),
			req: Request{URL: "http://v6.test:{port}/"}, denied: `private address ::1 for host "v6.test"`},
		{name: "IPv6 loopback literal denied", grant: rules(publicRule("::1")),
			req: Request{URL: "http://[::1]:{port}/"}, denied: `private address ::1 for host "::1"`},
		{name: "unique-local address denied", grant: rules(publicRule("ula.test")),
			req: Request{URL: "http://ula.test:{port}/"}, denied: `private address fd00::1 for host "ula.test"`},
		{name: "AWS IPv6 metadata address denied", grant: rules(publicRule("ec2v6.test")),
			req: Request{URL: "http://ec2v6.test:{port}/"}, denied: `private address fd00:ec2::254 for host "ec2v6.test"`},
		{name: "IPv4-mapped loopback denied", grant: rules(publicRule("mapped.test")),
			req: Request{URL: "http://mapped.test:{port}/"}, denied: `private address 127.0.0.1 for host "mapped.test"`},
		{name: "IPv4-mapped literal denied", grant: rules(publicRule("127.0.0.1")),
			req: Request{URL: "http://[::ffff:127.0.0.1]:{port}/"}, denied: `private address 127.0.0.1 for host "::ffff:127.0.0.1"`},
		{name: "NAT64 of loopback denied", grant: rules(publicRule("nat64loopback.test")),
			req: Request{URL: "http://nat64loopback.test:{port}/"}, denied: `private address 64:ff9b::7f00:1 for host "nat64loopback.test"`},
		{name: "CGNAT (Alibaba metadata) denied", grant: rules(publicRule("cgnat.test")),
			req: Request{URL: "http://cgnat.test:{port}/"}, denied: `private address 100.100.100.200 for host "cgnat.test"`},
		{name: "unspecified address denied", grant: rules(publicRule("unspecified.test")),
			req: Request{URL: "http://unspecified.test:{port}/"}, denied: `private address 0.0.0.0 for host "unspecified.test"`},
		{name: "multicast denied", grant: rules(publicRule("multicast.test")),
			req: Request{URL: "http://multicast.test:{port}/"}, denied: `private address 224.0.0.251 for host "multicast.test"`},
		{name: "IPv6 link-local denied", grant: rules(publicRule("linklocal6.test")),
			req: Request{URL: "http://linklocal6.test:{port}/"}, denied: `private address fe80::1 for host "linklocal6.test"`},
		{name: "one private address among public ones denies", grant: rules(publicRule("mixed.test")),
			req: Request{URL: "http://mixed.test:{port}/"}, denied: `private address 10.0.0.5 for host "mixed.test"`},
		{name: "AllowPrivate on another host's rule does not help", grant: rules(lanRule("other.test"), publicRule("api.test")),
			req: Request{URL: "http://api.test:{port}/"}, denied: `private address 127.0.0.1 for host "api.test"`, hits: none},
		{name: "AllowPrivate lets loopback through", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/"}, status: 200, hits: []string{"GET api.test/"}},
	})
}

func TestRedirects(t *testing.T) {
	run(t, []tc{
		{name: "relative redirect followed", grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/redirect?to=/echo"}, status: 200, body: "method=GET",
			hits: []string{"GET api.test/redirect", "GET api.test/echo"}},
		{name: "redirect to a disallowed host denied", grant: rules(lanRule("api.test")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://evil.test:{port}/"},
			denied: `http host "evil.test"`, hits: []string{"GET api.test/redirect"}},
		{name: "redirect to a host allowed only as public, resolving to loopback, denied",
			grant:  rules(lanRule("api.test"), publicRule("public.test")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://public.test:{port}/"},
			denied: `private address 127.0.0.1 for host "public.test"`, hits: []string{"GET api.test/redirect"}},
		{name: "redirect to a loopback literal allowed only as public denied",
			grant:  rules(lanRule("api.test"), publicRule("127.0.0.1")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://127.0.0.1:{port}/"},
			denied: `private address 127.0.0.1 for host "127.0.0.1"`, hits: []string{"GET api.test/redirect"}},
		{name: "redirect to the metadata address denied", grant: rules(lanRule("api.test"), func(int) Rule {
			return Rule{Host: "169.254.169.254", Schemes: []string{"http"}}
		}),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://169.254.169.254/latest/meta-data/"},
			denied: `private address 169.254.169.254 for host "169.254.169.254"`},
		{name: "redirect to a port not granted denied", grant: rules(lanRule("api.test")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://api.test:22/"},
			denied: `http host "api.test" (port 22)`, hits: []string{"GET api.test/redirect"}},
		{name: "redirect to a scheme not granted denied", grant: rules(lanRule("api.test")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=https://api.test:{port}/"},
			denied: `http host "api.test" (scheme https)`},
		{name: "redirect to an unsupported scheme fails", grant: rules(lanRule("api.test")),
			req:     Request{URL: "http://api.test:{port}/redirect?to=file:///etc/passwd"},
			errText: "redirect cannot be followed"},
		{name: "redirect loop capped", grant: rules(lanRule("api.test")), limits: Limits{MaxRedirects: 3},
			req: Request{URL: "http://api.test:{port}/loop"}, errText: "GET http://api.test:{port}/loop: redirect limit (3) reached",
			hits: []string{"GET api.test/loop", "GET api.test/loop", "GET api.test/loop", "GET api.test/loop"}},
		{name: "each hop counts as a request", grant: rules(lanRule("api.test")), limits: Limits{MaxRequests: 3, MaxRedirects: 10},
			req: Request{URL: "http://api.test:{port}/loop"}, limit: "request count limit (3) reached for this call",
			hits: []string{"GET api.test/loop", "GET api.test/loop", "GET api.test/loop"}},
		{name: "negative MaxRedirects returns the redirect", grant: rules(lanRule("api.test")), limits: Limits{MaxRedirects: -1},
			req: Request{URL: "http://api.test:{port}/loop"}, status: 302, hits: []string{"GET api.test/loop"},
			after: func(t *testing.T, _ *server, resp *Response) {
				if resp.Header["Location"] != "/loop" {
					t.Errorf("Location = %q", resp.Header["Location"])
				}
			}},
		{name: "303 turns POST into GET without the body", grant: rules(lanRule("api.test", "POST", "GET")),
			req:    Request{Method: "POST", URL: "http://api.test:{port}/redirect?code=303&to=/echo", Body: []byte("payload"), Header: map[string]string{"Content-Type": "text/plain"}},
			status: 200, body: "method=GET auth= body=",
			hits: []string{"POST api.test/redirect", "GET api.test/echo"}},
		{name: "303 to GET needs GET granted", grant: rules(lanRule("api.test", "POST")),
			req:    Request{Method: "POST", URL: "http://api.test:{port}/redirect?code=303&to=/echo", Body: []byte("payload")},
			denied: `http host "api.test" (method GET)`, hits: []string{"POST api.test/redirect"}},
		{name: "307 keeps the method and the body", grant: rules(lanRule("api.test", "POST")),
			req:    Request{Method: "POST", URL: "http://api.test:{port}/redirect?code=307&to=/echo", Body: []byte("payload")},
			status: 200, body: "method=POST auth= body=payload",
			hits: []string{"POST api.test/redirect", "POST api.test/echo"}},
		{name: "307 to a host where the method is not granted denied", grant: rules(lanRule("api.test", "POST"), lanRule("other.test")),
			req:    Request{Method: "POST", URL: "http://api.test:{port}/redirect?code=307&to=http://other.test:{port}/echo", Body: []byte("payload")},
			denied: `http host "other.test" (method POST)`, hits: []string{"POST api.test/redirect"}},
		{name: "a 307's body is counted again", grant: rules(lanRule("api.test", "POST")), limits: Limits{MaxTotalBytes: 10},
			req:   Request{Method: "POST", URL: "http://api.test:{port}/redirect?code=307&to=/echo", Body: []byte("payload")},
			limit: "total bytes limit (10) reached for this call", hits: []string{"POST api.test/redirect"}},
		{name: "the guest's Authorization does not follow a change of host", grant: rules(lanRule("api.test"), lanRule("other.test")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://other.test:{port}/echo", Header: map[string]string{"Authorization": "Bearer guest-own"}},
			status: 200, body: "auth= ",
			after: func(t *testing.T, s *server, _ *Response) {
				if h := s.seen(); h[0].Auth != "Bearer guest-own" || h[1].Auth != "" {
					t.Errorf("server saw %+v", h)
				}
			}},
	})
}

func TestSecrets(t *testing.T) {
	run(t, []tc{
		{name: "secret injected for its host, and not shown to the guest",
			grant:  withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:    Request{URL: "http://api.test:{port}/echo", Secret: "weather_key"},
			status: 200, body: "auth=Bearer " + redactedText,
			after: func(t *testing.T, s *server, resp *Response) {
				if h := s.seen(); h[0].Auth != "Bearer "+secretValue {
					t.Errorf("server saw Authorization %q", h[0].Auth)
				}
				if resp.Header["X-Seen-Auth"] != "Bearer "+redactedText {
					t.Errorf("X-Seen-Auth = %q", resp.Header["X-Seen-Auth"])
				}
			}},
		{name: "secret matched by a wildcard and a format-less header",
			grant: withSecrets(rules(lanRule("*.wild.test")), map[string]Secret{
				"k": {Value: otherValue, Header: "authorization", Hosts: []string{"*.wild.test"}},
			}),
			req: Request{URL: "http://eu.wild.test:{port}/echo", Secret: "k"}, status: 200,
			after: func(t *testing.T, s *server, _ *Response) {
				if h := s.seen(); h[0].Auth != otherValue {
					t.Errorf("server saw Authorization %q", h[0].Auth)
				}
			}},
		{name: "secret refused for another host",
			grant:  withSecrets(rules(lanRule("api.test"), lanRule("other.test")), weatherKey("api.test")),
			req:    Request{URL: "http://other.test:{port}/echo", Secret: "weather_key"},
			denied: `secret "weather_key" for host "other.test"`, hits: none},
		{name: "secret refused for the apex of its wildcard",
			grant:  withSecrets(rules(lanRule("wild.test")), weatherKey("*.wild.test")),
			req:    Request{URL: "http://wild.test:{port}/", Secret: "weather_key"},
			denied: `secret "weather_key" for host "wild.test"`, hits: none},
		{name: "host denial comes before the secret's",
			grant:  withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:    Request{URL: "http://evil.test:{port}/", Secret: "weather_key"},
			denied: `http host "evil.test"`},
		{name: "unknown secret denied",
			grant:  withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:    Request{URL: "http://api.test:{port}/", Secret: "nope"},
			denied: `secret "nope"`, hits: none},
		{name: "secret not carried across a redirect to another host",
			grant:  withSecrets(rules(lanRule("api.test"), lanRule("other.test")), weatherKey("api.test")),
			req:    Request{URL: "http://api.test:{port}/redirect?to=http://other.test:{port}/echo", Secret: "weather_key"},
			status: 200, body: "auth= ",
			hits: []string{"GET api.test/redirect", "GET other.test/echo"},
			after: func(t *testing.T, s *server, _ *Response) {
				if h := s.seen(); h[0].Auth != "Bearer "+secretValue || h[1].Auth != "" {
					t.Errorf("server saw %q then %q", h[0].Auth, h[1].Auth)
				}
			}},
		{name: "secret added again on a hop back to its host",
			grant: withSecrets(rules(lanRule("api.test"), lanRule("other.test")), weatherKey("api.test")),
			req: Request{Secret: "weather_key",
				URL: "http://api.test:{port}/redirect?to=http://other.test:{port}/redirect%3Fto%3Dhttp://api.test:{port}/echo"},
			status: 200, body: "auth=Bearer " + redactedText,
			after: func(t *testing.T, s *server, _ *Response) {
				var auths []string
				for _, h := range s.seen() {
					auths = append(auths, h.Auth)
				}
				want := []string{"Bearer " + secretValue, "", "Bearer " + secretValue}
				if !slices.Equal(auths, want) {
					t.Errorf("server saw %q, want the secret on api.test only", auths)
				}
			}},
		{name: "a redirect whose Location holds the secret is not followed",
			grant:   withSecrets(rules(lanRule("api.test"), lanRule("nx.test")), weatherKey("api.test")),
			req:     Request{URL: "http://api.test:{port}/leak-location", Secret: "weather_key"},
			errText: `redirect not followed: its Location holds the value of secret "weather_key"`, hits: []string{"GET api.test/leak-location"}},
		{name: "nor one whose host does",
			grant:   withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:     Request{URL: "http://api.test:{port}/leak-host", Secret: "weather_key"},
			errText: `redirect not followed: its Location holds the value of secret "weather_key"`},
		{name: "guest may not set the header a secret sets",
			grant:   withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:     Request{URL: "http://api.test:{port}/", Secret: "weather_key", Header: map[string]string{"Authorization": "Bearer mine"}},
			invalid: true, hits: none},
		{name: "nor in another case",
			grant:   withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:     Request{URL: "http://api.test:{port}/", Secret: "weather_key", Header: map[string]string{"authorization": "Bearer mine"}},
			invalid: true, hits: none},
		{name: "guest may set Authorization when no secret is named",
			grant:  withSecrets(rules(lanRule("api.test")), weatherKey("api.test")),
			req:    Request{URL: "http://api.test:{port}/echo", Header: map[string]string{"Authorization": "Bearer mine"}},
			status: 200, body: "auth=Bearer mine"},
		{name: "a secret whose value would break the header is not sent",
			grant: withSecrets(rules(lanRule("api.test")), map[string]Secret{
				"bad": {Value: secretValue + "\r\nX-Injected: 1", Header: "Authorization", Hosts: []string{"api.test"}},
			}),
			req:     Request{URL: "http://api.test:{port}/", Secret: "bad"},
			errText: `secret "bad" cannot be sent: its value holds control characters`, hits: none},
	})
}

func TestLimits(t *testing.T) {
	big := func(n int, chunked bool) Request {
		u := "http://api.test:{port}/big?n=" + strconv.Itoa(n)
		if chunked {
			u += "&chunked=1"
		}
		return Request{URL: u}
	}
	run(t, []tc{
		{name: "response body at the cap", grant: rules(lanRule("api.test")), limits: Limits{MaxResponseBody: 1000},
			req: big(1000, false), status: 200, body: strings.Repeat("x", 1000)},
		{name: "response body over the cap, by Content-Length", grant: rules(lanRule("api.test")), limits: Limits{MaxResponseBody: 1000},
			req: big(1001, false), errText: "GET http://api.test:{port}/big: response body is over the limit (1000 bytes)"},
		{name: "response body over the cap, chunked", grant: rules(lanRule("api.test")), limits: Limits{MaxResponseBody: 1000},
			req: big(5000, true), errText: "GET http://api.test:{port}/big: response body is over the limit (1000 bytes)"},
		{name: "HEAD of a body over the cap", grant: rules(lanRule("api.test")), limits: Limits{MaxResponseBody: 1000},
			req: Request{Method: "HEAD", URL: "http://api.test:{port}/big?n=5000"}, status: 200,
			after: func(t *testing.T, _ *server, resp *Response) {
				if resp.Header["Content-Length"] != "5000" || len(resp.Body) != 0 {
					t.Errorf("got %q and %d bytes", resp.Header["Content-Length"], len(resp.Body))
				}
			}},
		{name: "request body over the cap", grant: rules(lanRule("api.test", "POST")), limits: Limits{MaxRequestBody: 10},
			req:     Request{Method: "POST", URL: "http://api.test:{port}/", Body: []byte("0123456789a")},
			tooLong: true, errText: "request body of 11 bytes is over the limit (10 bytes)", hits: none},
		{name: "total bytes over a call", grant: rules(lanRule("api.test")), limits: Limits{MaxTotalBytes: 1000},
			before: []Request{big(600, false)}, req: big(600, false),
			limit: "total bytes limit (1000) reached for this call"},
		{name: "request count cap", grant: rules(lanRule("api.test")), limits: Limits{MaxRequests: 2},
			before: []Request{{URL: "http://api.test:{port}/"}, {URL: "http://api.test:{port}/"}},
			req:    Request{URL: "http://api.test:{port}/"}, limit: "request count limit (2) reached for this call",
			hits: []string{"GET api.test/", "GET api.test/"}},
		{name: "timeout honoured", grant: rules(lanRule("api.test")), limits: Limits{RequestTimeout: 100 * time.Millisecond},
			req: Request{URL: "http://api.test:{port}/hang"}, errIs: context.DeadlineExceeded, errText: "no complete answer within 100ms"},
	})
}

func TestRefusalsDoNotCount(t *testing.T) {
	s := newServer(t, false)
	c := NewClient(Grant{Rules: []Rule{lan("api.test", s.port)}}, Limits{MaxRequests: 1}, names)
	for _, u := range []string{"http://evil.test/", "/relative", "http://api.test:81/"} {
		if _, err := do(context.Background(), c, Request{URL: u}); err == nil {
			t.Fatalf("%s succeeded", u)
		}
	}
	if _, err := do(context.Background(), c, Request{URL: fmt.Sprintf("http://api.test:%d/", s.port)}); err != nil {
		t.Fatalf("the one request allowed: %v", err)
	}
}

func TestCallerContextEndsRequest(t *testing.T) {
	s := newServer(t, false)
	c := NewClient(Grant{Rules: []Rule{lan("api.test", s.port)}}, Limits{}, names)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-s.arrived
		cancel()
	}()
	_, err := do(ctx, c, Request{URL: fmt.Sprintf("http://api.test:%d/hang", s.port)})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "the call ended") {
		t.Fatalf("got %v, want the caller's cancellation", err)
	}
}

func TestRequestValidation(t *testing.T) {
	var cases []tc
	for _, u := range []string{
		"/relative",
		"api.test/no-scheme",
		"http:///no-host",
		"http://user:pw@api.test:{port}/",
		"ftp://api.test/",
		"mailto:someone@api.test",
		"http://2130706433:{port}/",
		"http://0x7f.1:{port}/",
		"http://127.1:{port}/",
		"http://[fe80::1%25eth0]:{port}/",
		"http://api.test:0/",
		"http://api.test:99999/",
		"http://api.test.:{port}/",
		"http://ap%69.test:{port}/",
		"http://api..test:{port}/",
		"http://-api.test:{port}/",
		"http://api_.test-:{port}/",
		"http://*.api.test:{port}/",
	} {
		cases = append(cases, tc{name: "URL " + u, grant: rules(lanRule("api.test")), req: Request{URL: u}, invalid: true, hits: none})
	}
	cases = append(cases, tc{name: "URL longer than 8 KiB", grant: rules(lanRule("api.test")),
		req: Request{URL: "http://" + strings.Repeat("a", maxURLLen) + ".test/"}, tooLong: true, hits: none})
	for _, h := range []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", "Proxy-Authorization", "proxy-connection", "Keep-Alive", "Upgrade", "TE", "Trailer"} {
		cases = append(cases, tc{name: "header " + h, grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/", Header: map[string]string{h: "x"}}, invalid: true, hits: none})
	}
	for name, hdr := range map[string]map[string]string{
		"header name with a space": {"X Bad": "x"},
		"header name with a colon": {":authority": "x"},
		"header value with CRLF":   {"X-Ok": "a\r\nX-Injected: 1"},
		"header value with NUL":    {"X-Ok": "a\x00"},
		"header given twice":       {"X-Dup": "1", "x-dup": "2"},
	} {
		cases = append(cases, tc{name: name, grant: rules(lanRule("api.test")),
			req: Request{URL: "http://api.test:{port}/", Header: hdr}, invalid: true, hits: none})
	}
	cases = append(cases, tc{name: "headers over 64 KiB in size", grant: rules(lanRule("api.test")),
		req: Request{URL: "http://api.test:{port}/", Header: map[string]string{"X-Big": strings.Repeat("a", maxHeaderBytes)}}, tooLong: true, hits: none})
	for _, m := range []string{"TRACE", "CONNECT", "GE T", "GET\r\n"} {
		cases = append(cases, tc{name: "method " + strconv.Quote(m), grant: rules(lanRule("api.test", m)),
			req: Request{Method: m, URL: "http://api.test:{port}/"}, invalid: true, hits: none})
	}
	cases = append(cases, tc{name: "guest headers are sent", grant: rules(lanRule("api.test")),
		req: Request{URL: "http://api.test:{port}/echo", Header: map[string]string{"x-custom": "v\tw", "Cookie": "a=b"}}, status: 200})
	run(t, cases)
}

// TestTLS checks that https verifies the certificate against the URL's
// host name, although the dialer connects to an IP address, and that a
// secret never goes over http once a chain of redirects has used https.
func TestTLS(t *testing.T) {
	tlsSrv := newServer(t, true)
	plain := newServer(t, false)
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	client := func() *Client {
		c := NewClient(Grant{
			Rules: []Rule{
				{Host: "example.com", Ports: []int{tlsSrv.port}, AllowPrivate: true},
				{Host: "other.test", Ports: []int{tlsSrv.port}, AllowPrivate: true},
				lan("api.test", plain.port),
			},
			Secrets: weatherKey("example.com", "api.test"),
		}, Limits{}, names)
		c.transport.TLSClientConfig.RootCAs = pool
		return c
	}

	resp, err := do(context.Background(), client(), Request{URL: fmt.Sprintf("https://example.com:%d/echo", tlsSrv.port), Secret: "weather_key"})
	if err != nil || resp.Status != 200 {
		t.Fatalf("https to the certificate's name: %v", err)
	}
	if h := tlsSrv.seen(); h[0].Auth != "Bearer "+secretValue {
		t.Fatalf("server saw %q", h[0].Auth)
	}

	_, err = do(context.Background(), client(), Request{URL: fmt.Sprintf("https://other.test:%d/", tlsSrv.port)})
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("https to a name the certificate lacks: got %v, want a certificate error", err)
	}

	_, err = do(context.Background(), client(), Request{Secret: "weather_key",
		URL: fmt.Sprintf("https://example.com:%d/redirect?to=http://api.test:%d/echo", tlsSrv.port, plain.port)})
	if err != nil {
		t.Fatal(err)
	}
	if h := plain.seen(); len(h) != 1 || h[0].Auth != "" {
		t.Fatalf("after https, the http hop got %+v, want no secret", h)
	}
}

func TestConcurrentRequestsShareTheCount(t *testing.T) {
	s := newServer(t, false)
	c := NewClient(Grant{Rules: []Rule{lan("api.test", s.port)}}, Limits{MaxRequests: 5}, names)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, limited := 0, 0
	for range 12 {
		wg.Go(func() {
			_, err := do(context.Background(), c, Request{URL: fmt.Sprintf("http://api.test:%d/", s.port)})
			var le *LimitError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.As(err, &le):
				limited++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok != 5 || limited != 7 {
		t.Fatalf("%d succeeded and %d were limited, want 5 and 7", ok, limited)
	}
}

func TestIsPrivate(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		private bool
	}{
		{"8.8.8.8", false},
		{"1.1.1.1", false},
		{"93.184.216.34", false},
		{"2606:4700:4700::1111", false},
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", false},  // 6to4 of 8.8.8.8
		{"::ffff:8.8.8.8", false},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"10.0.0.5", true},
		{"100.64.0.1", true},
		{"100.100.100.200", true},
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"169.254.169.254", true},
		{"168.63.129.16", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.0.0.192", true},
		{"192.168.1.1", true},
		{"198.18.0.1", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"255.255.255.255", true},
		{"::", true},
		{"::1", true},
		{"::127.0.0.1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b::a9fe:a9fe", true},
		{"2002:7f00:1::1", true},
		{"2002:a9fe:a9fe::", true},
		{"2001::1", true},
		{"2001:db8::1", true},
		{"fc00::1", true},
		{"fd00:ec2::254", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"100::1", true},
	} {
		if got := isPrivate(netip.MustParseAddr(tc.addr)); got != tc.private {
			t.Errorf("isPrivate(%s) = %v, want %v", tc.addr, got, tc.private)
		}
	}
	if !isPrivate(netip.Addr{}) {
		t.Error("the zero Addr must count as private")
	}
}

// TestDialerChecks drives the dialer's last lines of defence directly:
// Control on the socket's address, and the refusal to dial for a request
// that was not checked.
func TestDialerChecks(t *testing.T) {
	for _, tc := range []struct {
		addr         string
		allowPrivate bool
		denied       bool
	}{
		{"127.0.0.1:80", false, true},
		{"[fd00:ec2::254]:80", false, true},
		{"[::ffff:169.254.169.254]:80", false, true},
		{"8.8.8.8:443", false, false},
		{"127.0.0.1:80", true, false},
		{"not-an-address", true, true},
	} {
		err := controlFor("h.test", tc.allowPrivate)("tcp", tc.addr, nil)
		var d *Denied
		if errors.As(err, &d) != tc.denied {
			t.Errorf("Control(%s, allowPrivate=%v) = %v", tc.addr, tc.allowPrivate, err)
		}
	}

	c := NewClient(Grant{}, Limits{}, names)
	if _, err := c.dialContext(context.Background(), "tcp", "127.0.0.1:1"); err == nil {
		t.Error("dial without a checked request succeeded")
	}
	ctx := context.WithValue(context.Background(), hopKey{}, &hop{host: "api.test", allowPrivate: true})
	if _, err := c.dialContext(ctx, "tcp", "other.test:1"); err == nil || !strings.Contains(err.Error(), "for a request to") {
		t.Errorf("dial for another host: %v", err)
	}
	if _, err := c.dialContext(ctx, "udp", "api.test:1"); err == nil {
		t.Error("udp dial succeeded")
	}
}

// TestRuleAndSecretCheck: what Check refuses is what NewClient cannot use,
// because both go through parseRule and Secret.problem.
func TestRuleAndSecretCheck(t *testing.T) {
	for _, r := range []Rule{
		{Host: "api.example.com", Methods: []string{"GET", "POST"}},
		{Host: "*.example.com", Ports: []int{8443}, Schemes: []string{"http", "https"}},
		{Host: "10.0.0.5", AllowPrivate: true},
		{Host: "::1"},
	} {
		if err := r.Check(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	for want, r := range map[string]Rule{
		`host pattern "api.example.com:443"`:                    {Host: "api.example.com:443"},
		`host pattern "*"`:                                      {Host: "*"},
		`host pattern "https://api.example.com"`:                {Host: "https://api.example.com"},
		`host pattern "*.Wild.TEST": write it in lower case`:    {Host: "*.Wild.TEST"},
		`host ok.test: port 0 is not a port`:                    {Host: "ok.test", Ports: []int{0}},
		`host ok.test: method "GE T" is not an HTTP method`:     {Host: "ok.test", Methods: []string{"GE T"}},
		`host ok.test: method "get" must be written in upper`:   {Host: "ok.test", Methods: []string{"get"}},
		`host ok.test: method TRACE is not supported`:           {Host: "ok.test", Methods: []string{"TRACE"}},
		`host ok.test: scheme "ftp" is not supported`:           {Host: "ok.test", Schemes: []string{"ftp"}},
		`host ok.test: scheme "HTTPS" must be written in lower`: {Host: "ok.test", Schemes: []string{"HTTPS"}},
	} {
		err := r.Check()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: Check = %v; want %q", r, err, want)
		}
		// What Check refuses matches nothing.
		c := NewClient(Grant{Rules: []Rule{r}}, Limits{}, names)
		if len(c.rules) != 0 {
			t.Errorf("%+v: a rule Check refuses is in use", r)
		}
	}

	good := Secret{Value: secretValue, Header: "Authorization", Format: "Bearer {}", Hosts: []string{"api.example.com", "*.example.com"}}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for want, s := range map[string]Secret{
		"it names no header":                  {Header: "", Hosts: []string{"a.test"}},
		`header "X Key" is not a header name`: {Header: "X Key", Hosts: []string{"a.test"}},
		"header Host is set by the host":      {Header: "host", Hosts: []string{"a.test"}},
		`format "Bearer" has no {}`:           {Header: "X-Key", Format: "Bearer", Hosts: []string{"a.test"}},
		"its format holds control characters": {Header: "X-Key", Format: "{}\r\nX-Injected: 1", Hosts: []string{"a.test"}},
		"it names no hosts":                   {Header: "X-Key"},
		`host pattern "a.test:80"`:            {Header: "X-Key", Hosts: []string{"a.test", "a.test:80"}},
	} {
		// Check never looks at the value, which the policy does not hold
		// when it loads; its errors could not show it either.
		s.Value = secretValue
		err := s.Check()
		record(nil, err)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), secretValue) {
			t.Errorf("%+v: Check = %v; want %q", s, err, want)
		}
	}
	for want, value := range map[string]string{"its value is empty": "", "its value holds control characters": secretValue + "\n"} {
		s := good
		s.Value = value
		if err := s.Check(); err != nil {
			t.Errorf("Check looked at the value: %v", err)
		}
		err := s.problem()
		record(nil, err)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("problem = %v; want %q", err, want)
		}
	}
}

func TestDeniedError(t *testing.T) {
	d := &Denied{Permission: `http host "api.example.com" (method POST)`}
	if got, want := d.Error(), `egress: not permitted: http host "api.example.com" (method POST)`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
