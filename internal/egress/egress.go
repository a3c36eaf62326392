package egress

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/netrule"
)

// Rule grants requests to hosts matching Host. Its fields are written as
// internal/netrule says; Check reports one that is not.
type Rule struct {
	// Host is a host pattern: "api.example.com", "*.example.com" (any
	// subdomain, not the apex) or an IP address, in lower case and without
	// a port. A request's host is lower-cased before it is matched.
	Host string
	// Ports are allowed besides the scheme's default port (80 for http,
	// 443 for https), which is always allowed.
	Ports []int
	// Methods are the allowed methods, upper case; none means GET and HEAD.
	Methods []string
	// Schemes are "http" and "https"; none means https only.
	Schemes []string
	// AllowPrivate lets requests reach private, loopback, link-local,
	// CGNAT, unique-local, multicast, unspecified, reserved and cloud
	// metadata addresses (169.254.169.254, fd00:ec2::254, …). Without it
	// they are refused when a connection is made, even though the host
	// matches.
	AllowPrivate bool
}

// Secret is a value the host adds to requests; the guest only names it.
type Secret struct {
	Value string
	// Header is the header the secret is sent in, e.g. "Authorization".
	Header string
	// Format is the header's value, with {} replaced by Value, e.g.
	// "Bearer {}"; empty means "{}".
	Format string
	// Hosts are the host patterns (the syntax of Rule.Host) the secret may
	// be sent to. It is added to each request, redirects included, whose
	// host matches, and to no other.
	Hosts []string
}

// Grant is everything one call may reach.
type Grant struct {
	Rules   []Rule
	Secrets map[string]Secret
}

// Limits bound one Client, that is one tool call. A zero field takes its
// value from DefaultLimits.
type Limits struct {
	// MaxRequests counts requests sent, each redirect hop included.
	MaxRequests int
	// MaxRequestBody bounds one request's body.
	MaxRequestBody int64
	// MaxResponseBody bounds one response's body as the guest gets it,
	// that is decoded when the host undid a content coding; each step of
	// decoding is bounded by it too. A longer body is an error, never
	// silently cut short.
	MaxResponseBody int64
	// MaxTotalBytes bounds request and response bodies together, over the
	// whole call, responses counted as the guest gets them. A body re-sent
	// on a 307 or 308 redirect counts again.
	MaxTotalBytes int64
	// RequestTimeout bounds one Do, its redirects and the reading of its
	// body included. The caller's context may end it sooner.
	RequestTimeout time.Duration
	// MaxRedirects is how many redirects one Do follows; past it Do fails.
	// A negative value follows none: the 3xx response is returned as it is.
	MaxRedirects int
}

// DefaultLimits are the limits a zero Limits field stands for: those
// docs/abi.md promises a tool.
func DefaultLimits() Limits {
	return Limits{
		MaxRequests:     16,
		MaxRequestBody:  1 << 20,
		MaxResponseBody: 4 << 20,
		MaxTotalBytes:   8 << 20,
		RequestTimeout:  30 * time.Second,
		MaxRedirects:    5,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxRequests <= 0 {
		l.MaxRequests = d.MaxRequests
	}
	if l.MaxRequestBody <= 0 {
		l.MaxRequestBody = d.MaxRequestBody
	}
	if l.MaxResponseBody <= 0 {
		l.MaxResponseBody = d.MaxResponseBody
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.RequestTimeout <= 0 {
		l.RequestTimeout = d.RequestTimeout
	}
	if l.MaxRedirects == 0 {
		l.MaxRedirects = d.MaxRedirects
	}
	return l
}

// Request is what a guest asks for.
type Request struct {
	// Method defaults to GET; it is upper-cased.
	Method string
	// URL is absolute, http or https, without user information.
	URL string
	// Header holds the guest's headers. Host, Content-Length,
	// Transfer-Encoding, Connection, Keep-Alive, Upgrade, TE, Trailer,
	// Proxy-* and the header of the named secret are refused; so are, on a
	// request that names a secret, the headers that choose the form or
	// the part of the response (Accept-Encoding, Accept-Charset, Range,
	// If-Range, A-IM).
	Header map[string]string
	Body   []byte
	// Secret optionally names a secret of the grant to attach.
	Secret string
}

// Response is what the guest gets back.
type Response struct {
	Status int
	// Header holds the first value of each header, by canonical name.
	// When the host undid a content coding, Content-Encoding and
	// Content-Length are left out, as Go's client does.
	Header map[string]string
	Body   []byte
}

// Denied is returned when a grant does not cover a request. Permission
// names what is missing in words an operator can act on, e.g.
// `http host "api.example.com" (method POST)`, `private address 10.0.0.5
// for host "internal.test"`, `secret "weather_key" for host "evil.test"`.
type Denied struct{ Permission string }

func (d *Denied) Error() string { return "egress: not permitted: " + d.Permission }

// LimitError is returned when the call has used up an allowance of the
// Limits: MaxRequests, or MaxTotalBytes. Every later request of the call
// would fail the same way. Limit says which, e.g. "request count limit
// (16) reached for this call". A limit on one request is not a LimitError:
// a request over one is ErrTooLong, and a response over one (a body over
// MaxResponseBody, more than MaxRedirects redirects) is the request
// failing, as a timeout is.
type LimitError struct{ Limit string }

func (e *LimitError) Error() string { return "egress: " + e.Limit }

// ErrInvalid is wrapped by the errors for requests that are malformed
// whatever the grant: a relative URL, a reserved header, a bad method.
var ErrInvalid = errors.New("invalid request")

// ErrTooLong is wrapped by the errors for requests over a size limit: a
// body over MaxRequestBody, a URL over 8 KiB, headers over 64 KiB.
var ErrTooLong = errors.New("request too long")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("egress: %w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func tooLongf(format string, args ...any) error {
	return fmt.Errorf("egress: %w: %s", ErrTooLong, fmt.Sprintf(format, args...))
}

// Resolver looks up addresses; tests substitute one. net.DefaultResolver
// satisfies it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Client makes one tool call's requests. It is safe for concurrent use.
// It keeps no connection open between requests, so it needs no closing.
type Client struct {
	rules     []rule
	secrets   map[string]*secret
	redactAll func() *redactor // every secret value, for errors
	lim       Limits
	resolver  Resolver
	transport *http.Transport

	mu       sync.Mutex
	requests int
	bytes    int64
}

type rule struct {
	pat          netrule.Pattern
	ports        []int
	methods      []string
	schemes      []string
	allowPrivate bool
}

// parseRule is Rule.Check, keeping what it parsed.
func parseRule(r Rule) (rule, error) {
	p, err := netrule.ParsePattern(r.Host)
	if err != nil {
		return rule{}, err
	}
	for _, m := range r.Methods {
		err = cmp.Or(err, netrule.CheckMethod(m))
	}
	for _, port := range r.Ports {
		err = cmp.Or(err, netrule.CheckPort(port))
	}
	for _, s := range r.Schemes {
		err = cmp.Or(err, netrule.CheckScheme(s))
	}
	if err != nil {
		return rule{}, fmt.Errorf("host %s: %w", r.Host, err)
	}
	schemes := r.Schemes
	if len(schemes) == 0 {
		schemes = []string{"https"}
	}
	return rule{pat: p, ports: r.Ports, methods: netrule.MethodsOrDefault(r.Methods), schemes: schemes, allowPrivate: r.AllowPrivate}, nil
}

// Check reports why a Client could not use the rule: a host, method, port
// or scheme that internal/netrule refuses.
func (r Rule) Check() error {
	_, err := parseRule(r)
	return err
}

// Check reports why the secret could not be sent whatever its value: its
// header, its format or its hosts. Its errors never hold the value.
func (s Secret) Check() error {
	canon := http.CanonicalHeaderKey(s.Header)
	switch {
	case s.Header == "":
		return errors.New("it names no header: a secret is only ever sent in a header")
	case !netrule.IsToken(s.Header):
		return fmt.Errorf("header %q is not a header name", s.Header)
	case reservedHeader(canon):
		return fmt.Errorf("header %s is set by the host, so a secret cannot be sent in it", canon)
	case s.Format != "" && !strings.Contains(s.Format, "{}"):
		return fmt.Errorf("format %q has no {} where the value goes", s.Format)
	case !validHeaderValue(s.Format):
		return errors.New("its format holds control characters (a line break?)")
	case len(s.Hosts) == 0:
		return errors.New("it names no hosts: a secret is only ever sent to the hosts it is bound to")
	}
	for _, h := range s.Hosts {
		if _, err := netrule.ParsePattern(h); err != nil {
			return err
		}
	}
	return nil
}

// problem says why the secret cannot be sent, its value included, or nil.
// It never quotes the value.
func (s Secret) problem() error {
	if err := s.Check(); err != nil {
		return err
	}
	if s.Value == "" {
		return errors.New("its value is empty")
	}
	if !validHeaderValue(s.Value) {
		return errors.New("its value holds control characters (a line break?)")
	}
	return nil
}

type secret struct {
	name     string
	header   string // canonical
	value    string // the header's value: Format with Value in it
	hosts    []netrule.Pattern
	problem  error            // why it cannot be sent, if it cannot
	redactor func() *redactor // built when the secret is first sent
}

func (s *secret) matches(t *target) bool {
	return slices.ContainsFunc(s.hosts, func(p netrule.Pattern) bool { return p.Matches(t.h) })
}

// NewClient returns a client for one call. A rule that Rule.Check refuses
// matches nothing, and a secret that Secret.Check refuses is never sent;
// policy.Load refuses a policy that holds either, so that none is lost
// unnoticed. A nil Resolver means net.DefaultResolver.
func NewClient(g Grant, lim Limits, r Resolver) *Client {
	if r == nil {
		r = net.DefaultResolver
	}
	c := &Client{lim: lim.withDefaults(), resolver: r, secrets: map[string]*secret{}}
	for _, gr := range g.Rules {
		if ru, err := parseRule(gr); err == nil {
			c.rules = append(c.rules, ru)
		}
	}
	var values []string
	for name, s := range g.Secrets {
		// The value, not the formatted header, is what is looked for: it
		// is inside the header, and each encoding looked for finds it
		// inside a longer encoded text as well (see redactor).
		sc := &secret{
			name:     name,
			header:   http.CanonicalHeaderKey(s.Header),
			value:    strings.ReplaceAll(cmp.Or(s.Format, "{}"), "{}", s.Value),
			problem:  s.problem(),
			redactor: sync.OnceValue(func() *redactor { return newRedactor(s.Value) }),
		}
		for _, h := range s.Hosts {
			if p, err := netrule.ParsePattern(h); err == nil {
				sc.hosts = append(sc.hosts, p)
			}
		}
		c.secrets[name] = sc
		values = append(values, s.Value)
	}
	c.redactAll = sync.OnceValue(func() *redactor { return newRedactor(values...) })
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	c.transport = &http.Transport{
		Proxy:                  nil, // never a proxy, from the environment or otherwise
		DialContext:            c.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
		ExpectContinueTimeout:  time.Second,
		Protocols:              protocols,
		DisableCompression:     true, // the host asks for gzip and decodes it itself: see acceptEncoding
	}
	return c
}

// allow checks a request against the rules, before any connection, and
// says whether the address check may let private addresses through.
func (c *Client) allow(method string, t *target) (allowPrivate bool, err error) {
	var host, scheme, port, ok bool
	for _, r := range c.rules {
		if !r.pat.Matches(t.h) {
			continue
		}
		host = true
		if !slices.Contains(r.schemes, t.scheme) {
			continue
		}
		scheme = true
		if t.port != defaultPort(t.scheme) && !slices.Contains(r.ports, t.port) {
			continue
		}
		port = true
		if !slices.Contains(r.methods, method) {
			continue
		}
		ok = true
		allowPrivate = allowPrivate || r.allowPrivate
	}
	perm := "http host " + quote(t.host)
	switch {
	case ok:
		return allowPrivate, nil
	case !host:
		return false, &Denied{Permission: perm}
	case !scheme:
		return false, &Denied{Permission: perm + " (scheme " + t.scheme + ")"}
	case !port:
		return false, &Denied{Permission: fmt.Sprintf("%s (port %d)", perm, t.port)}
	default:
		return false, &Denied{Permission: perm + " (method " + method + ")"}
	}
}

// maxURLLen caps a request URL.
const maxURLLen = 8 << 10

// redactedText replaces a secret's value wherever one would show.
const redactedText = "[redacted]"

// Do makes a request and follows its redirects, each checked as the first
// one is. Policy refusals are *Denied, allowances of the call used up
// *LimitError, malformed requests wrap ErrInvalid and requests over a size
// limit ErrTooLong. Other errors are the request failing (no answer, a
// timeout, an answer over the response limit, too many redirects), wrapped
// with the method and URL (without its query). No error, and no response,
// contains a secret's value.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	resp, err := c.do(ctx, req)
	if err != nil {
		return nil, c.scrubError(err)
	}
	return resp, nil
}

func (c *Client) do(parent context.Context, req Request) (*Response, error) {
	method, err := checkMethod(req.Method)
	if err != nil {
		return nil, err
	}
	if len(req.URL) > maxURLLen {
		return nil, tooLongf("URL is longer than %d bytes", maxURLLen)
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, invalidf("URL %q: %v", req.URL, err)
	}
	t, err := checkURL(u)
	if err != nil {
		return nil, err
	}
	var sec *secret
	if req.Secret != "" {
		if sec = c.secrets[req.Secret]; sec == nil {
			return nil, &Denied{Permission: "secret " + quote(req.Secret)}
		}
	}
	var secretHeader string
	if sec != nil {
		secretHeader = sec.header
	}
	hdr, err := guestHeaders(req.Header, req.Secret, secretHeader, sec != nil)
	if err != nil {
		return nil, err
	}
	if int64(len(req.Body)) > c.lim.MaxRequestBody {
		return nil, tooLongf("request body of %d bytes is over the limit (%d bytes)", len(req.Body), c.lim.MaxRequestBody)
	}
	allowPrivate, err := c.allow(method, t)
	if err != nil {
		return nil, err
	}
	if sec != nil {
		if !sec.matches(t) {
			return nil, &Denied{Permission: "secret " + quote(sec.name) + " for host " + quote(t.host)}
		}
		if sec.problem != nil {
			return nil, fmt.Errorf("egress: secret %q cannot be sent: %w", sec.name, sec.problem)
		}
	}

	ctx, cancel := context.WithTimeout(parent, c.lim.RequestTimeout)
	defer cancel()
	body := req.Body
	sentSecret, sawHTTPS := false, false
	for redirects := 0; ; redirects++ {
		if err := c.reserve(int64(len(body))); err != nil {
			return nil, err
		}
		hopCtx := context.WithValue(ctx, hopKey{}, &hop{host: t.host, allowPrivate: allowPrivate})
		hreq, err := http.NewRequestWithContext(hopCtx, method, t.u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("egress: %s %s: %w", method, t, err)
		}
		// Headers are built afresh on every hop: the secret is added only
		// where this hop's host matches it, and never over http once the
		// chain has used https.
		hreq.Header = hdr.Clone()
		if hreq.Header.Get("User-Agent") == "" {
			hreq.Header.Set("User-Agent", "wasmcp")
		}
		hostAsked := hreq.Header.Get("Accept-Encoding") == "" && hreq.Header.Get("Range") == "" && method != http.MethodHead
		if hostAsked {
			hreq.Header.Set("Accept-Encoding", acceptEncoding)
		}
		sawHTTPS = sawHTTPS || t.scheme == "https"
		if sec != nil && sec.matches(t) && !(sawHTTPS && t.scheme == "http") {
			hreq.Header.Set(sec.header, sec.value)
			sentSecret = true
		}
		res, err := c.transport.RoundTrip(hreq)
		if err != nil {
			return nil, c.requestError(parent, ctx, method, t, err)
		}
		var scrub *redactor
		if sentSecret {
			scrub = sec.redactor()
		}
		loc := res.Header.Get("Location")
		if c.lim.MaxRedirects < 0 || loc == "" || !isRedirect(res.StatusCode) {
			return c.readResponse(parent, ctx, res, method, t, scrub, hostAsked)
		}
		res.Body.Close()
		if redirects >= c.lim.MaxRedirects {
			return nil, fmt.Errorf("egress: %s %s: redirect limit (%d) reached: the server redirected once more", method, t, c.lim.MaxRedirects)
		}
		if scrub != nil && scrub.contains(loc) {
			// Followed, the redirect would hand the secret, in the URL, to
			// whatever host it names, over whatever scheme.
			return nil, fmt.Errorf("egress: %s %s: redirect not followed: its Location holds the value of secret %q", method, t, sec.name)
		}
		next, err := t.u.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("egress: %s %s: redirected to a Location that is not a URL", method, t)
		}
		nt, err := checkURL(next)
		if err != nil {
			// The server's doing, not the guest's: not ErrInvalid.
			return nil, fmt.Errorf("egress: %s %s: redirect cannot be followed: %v", method, t, err)
		}
		if res.StatusCode <= 303 && method != http.MethodGet && method != http.MethodHead {
			method, body = http.MethodGet, nil
			hdr.Del("Content-Type")
			hdr.Del("Content-Encoding")
		}
		if nt.origin() != t.origin() {
			// As Go's client does: the guest's own credentials stay with
			// the origin they were meant for.
			hdr.Del("Authorization")
			hdr.Del("Cookie")
		}
		if allowPrivate, err = c.allow(method, nt); err != nil {
			return nil, err
		}
		t = nt
	}
}

func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// reserve counts a request and its body against the limits.
func (c *Client) reserve(body int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.requests >= c.lim.MaxRequests {
		return &LimitError{Limit: fmt.Sprintf("request count limit (%d) reached for this call", c.lim.MaxRequests)}
	}
	if c.bytes+body > c.lim.MaxTotalBytes {
		return c.totalLimit()
	}
	c.requests++
	c.bytes += body
	return nil
}

func (c *Client) totalLimit() error {
	return &LimitError{Limit: fmt.Sprintf("total bytes limit (%d) reached for this call", c.lim.MaxTotalBytes)}
}

// readResponse reads a response's body within the limits and makes the
// guest's answer of it. Content codings are undone when the host asked for
// one (asked) or a secret was sent (scrub is set): scrub takes the secret
// out of the answer, which must then be decoded first, or refused.
func (c *Client) readResponse(parent, ctx context.Context, res *http.Response, method string, t *target, scrub *redactor, asked bool) (*Response, error) {
	defer res.Body.Close()
	max := c.lim.MaxResponseBody
	tooLong := func(decodedFrom string) error {
		what := "response body"
		if decodedFrom != "" {
			what += ", decoded from " + decodedFrom + ","
		}
		return fmt.Errorf("egress: %s %s: %s is over the limit (%d bytes)", method, t, what, max)
	}
	if method != http.MethodHead && res.ContentLength > max { // HEAD's Content-Length describes a body never sent
		return nil, tooLong("")
	}
	c.mu.Lock()
	room := c.lim.MaxTotalBytes - c.bytes
	c.mu.Unlock()
	limit := min(max, room)
	data, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		c.count(int64(len(data)))
		return nil, c.requestError(parent, ctx, method, t, fmt.Errorf("reading the response body: %w", err))
	}
	if codings := contentCodings(res.Header); (asked || scrub != nil) && len(codings) > 0 && len(data) > 0 && int64(len(data)) <= limit {
		body, err := decodeBody(data, codings, limit)
		var unknown *unknownCodingError
		switch {
		case err == nil:
			// What counts against the limits is the decoded body, the
			// one the guest gets.
			data = body
			res.Header.Del("Content-Encoding")
			res.Header.Del("Content-Length")
		case errors.Is(err, errOverLimit):
			c.count(limit + 1)
			if limit < max {
				return nil, c.totalLimit()
			}
			return nil, tooLong(strings.Join(codings, ", "))
		case errors.As(err, &unknown) && scrub == nil:
			// Not the host's to undo: the guest gets the body as it
			// came, as it would from Go's client.
		case errors.As(err, &unknown):
			c.count(int64(len(data)))
			return nil, fmt.Errorf("egress: %s %s: %v; the answer to a request that carries a secret is checked for the secret before the tool gets it, and this one cannot be, so it is refused", method, t, err)
		default:
			c.count(int64(len(data)))
			return nil, fmt.Errorf("egress: %s %s: %w", method, t, err)
		}
	}
	over := c.count(int64(len(data)))
	switch {
	case int64(len(data)) > max:
		return nil, tooLong("")
	case over:
		return nil, c.totalLimit()
	}
	if scrub == nil {
		return &Response{Status: res.StatusCode, Header: firstValues(res.Header), Body: data}, nil
	}
	header, err := scrub.headers(res.Header)
	if err == nil {
		data, err = scrub.redact(data)
	}
	if err != nil {
		return nil, fmt.Errorf("egress: %s %s: the answer is refused: %w", method, t, err)
	}
	return &Response{Status: res.StatusCode, Header: header, Body: data}, nil
}

// count adds n bytes received to the call's total, and says whether the
// total is now over its limit.
func (c *Client) count(n int64) (over bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += n
	return c.bytes > c.lim.MaxTotalBytes
}

// requestError explains a failed round trip. parent is the caller's
// context, ctx the one with the request timeout.
func (c *Client) requestError(parent, ctx context.Context, method string, t *target, err error) error {
	var d *Denied
	switch {
	case errors.As(err, &d):
		return d
	case parent.Err() != nil:
		return fmt.Errorf("egress: %s %s: the call ended: %w", method, t, context.Cause(parent))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("egress: %s %s: no complete answer within %s: %w", method, t, c.lim.RequestTimeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("egress: %s %s: %w", method, t, err)
}

// scrubError makes sure no secret value leaves in an error. Such a value
// could only come from a server (in a redirect's Location, say, where a
// secret this request did not carry is not looked for), but an error is
// shown to the guest and logged, so it is checked anyway.
func (c *Client) scrubError(err error) error {
	if len(c.secrets) == 0 {
		return err
	}
	r := c.redactAll()
	msg, found := r.redactString(err.Error())
	if !found {
		return err
	}
	var d *Denied
	if errors.As(err, &d) {
		perm, _ := r.redactString(d.Permission)
		return &Denied{Permission: perm}
	}
	var le *LimitError
	if errors.As(err, &le) {
		return &LimitError{Limit: strings.TrimPrefix(msg, "egress: ")}
	}
	s := &scrubbed{msg: msg}
	for _, kind := range []error{ErrInvalid, ErrTooLong, context.DeadlineExceeded, context.Canceled} {
		if errors.Is(err, kind) {
			s.kind = kind
			break
		}
	}
	return s
}

// scrubbed is an error whose text had a secret taken out. It unwraps only
// to its kind, never to the original error, which still holds the secret.
type scrubbed struct {
	msg  string
	kind error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.kind }

// hop is what the dialer needs to know about the request it connects for.
type hop struct {
	host         string
	allowPrivate bool
}

type hopKey struct{}

// dialContext resolves the host with the Resolver, refuses the connection
// if any address is not allowed, and dials the checked addresses
// themselves, so the name is never resolved again between check and
// connect. The dialer's Control checks the socket's address once more.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	h, _ := ctx.Value(hopKey{}).(*hop)
	if h == nil {
		return nil, errors.New("egress: a connection without a checked request")
	}
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("egress: network %q is not supported", network)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(host, h.host) {
		return nil, fmt.Errorf("egress: connection to %q for a request to %q", host, h.host)
	}
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if !h.allowPrivate {
		for _, a := range addrs {
			if isPrivate(a) {
				return nil, privateDenied(a, host)
			}
		}
	}
	d := net.Dialer{Timeout: c.lim.RequestTimeout, Control: controlFor(host, h.allowPrivate)}
	var first error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		first = cmp.Or(first, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	ips, err := c.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip.IP)
		if !ok {
			return nil, fmt.Errorf("lookup %s: an address that is not an IP address", host)
		}
		a = a.Unmap()
		if ip.Zone != "" && a.Is6() {
			a = a.WithZone(ip.Zone)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lookup %s: no addresses", host)
	}
	return out, nil
}
