package egress

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// pattern is a parsed host pattern: a name, "*." and a name, or an IP.
type pattern struct {
	name     string // lower case; for a wildcard, the part after "*."
	wildcard bool
	ip       netip.Addr // set for an IP literal
}

// parsePattern parses Rule.Host and Secret.Hosts syntax.
func parsePattern(s string) (pattern, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		if a.Zone() != "" {
			return pattern{}, fmt.Errorf("host pattern %q: an address with a zone is not supported", s)
		}
		return pattern{ip: a.Unmap()}, nil
	}
	name, wildcard := strings.CutPrefix(s, "*.")
	if err := checkName(name); err != nil {
		return pattern{}, fmt.Errorf("host pattern %q: %v (give a host name, *. and a host name, or an IP address, without a port)", s, err)
	}
	return pattern{name: name, wildcard: wildcard}, nil
}

// match reports whether the pattern covers the target's host.
func (p pattern) match(t *target) bool {
	switch {
	case p.ip.IsValid():
		return t.ip.IsValid() && t.ip.Unmap() == p.ip
	case t.ip.IsValid() || p.name == "":
		return false
	case p.wildcard:
		return strings.HasSuffix(t.host, "."+p.name)
	default:
		return t.host == p.name
	}
}

// checkName accepts a lower-case DNS name: labels of letters, digits, '-'
// and '_', no trailing dot, and a last label that is not a number (which
// URL parsers and C resolvers read as an IPv4 address: "127.1",
// "2130706433", "0x7f.1").
func checkName(name string) error {
	if name == "" || len(name) > 253 {
		return errors.New("not a host name")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return errors.New("not a host name")
		}
		for _, r := range l {
			if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return errors.New("not a host name")
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") && strings.Trim(last[2:], "0123456789abcdef") == "" {
		return errors.New("neither a host name nor an IP address")
	}
	return nil
}

// target is a checked, normalised request URL.
type target struct {
	u      *url.URL
	scheme string     // "http" or "https"
	host   string     // lower-case name, or the IP in canonical form
	ip     netip.Addr // set when the host is an IP literal
	port   int
}

func (t *target) origin() string { return fmt.Sprintf("%s://%s:%d", t.scheme, t.host, t.port) }

// String is the URL without its query or fragment, for messages.
func (t *target) String() string {
	u := *t.u
	u.RawQuery, u.ForceQuery = "", false
	return u.String()
}

// checkURL validates a request URL and normalises its host and port.
func checkURL(u *url.URL) (*target, error) {
	switch {
	case u.Scheme == "" || u.Host == "" || u.Opaque != "":
		return nil, invalidf("URL must be absolute, like https://api.example.com/path")
	case u.User != nil:
		return nil, invalidf("URL must not carry a user name or password")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, invalidf("scheme %q is not supported: only http and https are", u.Scheme)
	}
	t := &target{scheme: scheme, host: strings.ToLower(u.Hostname())}
	if a, err := netip.ParseAddr(t.host); err == nil {
		if a.Zone() != "" {
			return nil, invalidf("host %q: an address with a zone is not supported", t.host)
		}
		t.ip, t.host = a, a.String()
	} else if err := checkName(t.host); err != nil {
		return nil, invalidf("host %q: %v", t.host, err)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, invalidf("port %q is not valid", p)
		}
		t.port = n
	} else {
		t.port = defaultPort(scheme)
	}
	nu := *u
	nu.Scheme, nu.User, nu.Fragment, nu.RawFragment = scheme, nil, "", ""
	nu.Host = t.host
	if t.ip.Is6() {
		nu.Host = "[" + t.host + "]"
	}
	if u.Port() != "" {
		nu.Host = net.JoinHostPort(t.host, strconv.Itoa(t.port))
	}
	t.u = &nu
	return t, nil
}

func defaultPort(scheme string) int {
	if scheme == "http" {
		return 80
	}
	return 443
}

// checkMethod validates and upper-cases a method; empty means GET.
func checkMethod(m string) (string, error) {
	if m == "" {
		return http.MethodGet, nil
	}
	if !validToken(m) || len(m) > 32 {
		return "", invalidf("method %q is not valid", m)
	}
	m = strings.ToUpper(m)
	if m == http.MethodConnect || m == http.MethodTrace {
		return "", invalidf("method %s is not supported", m)
	}
	return m, nil
}

// maxHeaderBytes caps the headers a guest may set on one request.
const maxHeaderBytes = 64 << 10

// reservedHeader reports whether only the host (or Go's transport) may set
// a header: framing, hop-by-hop and proxy headers.
func reservedHeader(canon string) bool {
	switch canon {
	case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Upgrade", "Te", "Trailer":
		return true
	}
	return strings.HasPrefix(canon, "Proxy-")
}

// shapingHeaders let a request choose the form or the part of the response
// it gets, with the reason each is refused on a request that carries a
// secret. The host takes the secret out of what comes back, in the forms
// it knows; a tool that could have a server echo it compressed, in another
// character set, or a few bytes at a time would get past that. They are
// refused rather than dropped: a tool that asked for a range or an
// encoding and silently got something else would misread the answer,
// where an error tells its author what to change.
var shapingHeaders = map[string]string{
	"Accept-Encoding": "the host asks for compression itself and decodes the answer before checking it for the secret; leave the header out",
	"Accept-Charset":  "an answer in another character set could hold the secret in a form the host does not check for; leave the header out",
	"Range":           "a part of the answer could hold a part of the secret, which no check can recognise; fetch the whole resource",
	"If-Range":        "a part of the answer could hold a part of the secret, which no check can recognise; fetch the whole resource",
	"A-Im":            "an instance manipulation (RFC 3229: a delta, a compression) could hold the secret in a form the host does not check for; leave the header out",
}

// guestHeaders checks the headers a guest set. secretHeader is the header
// a named secret sets, which the guest may not set too; carriesSecret
// says whether a secret is named, which rules out shapingHeaders.
func guestHeaders(h map[string]string, secretName, secretHeader string, carriesSecret bool) (http.Header, error) {
	out := make(http.Header, len(h))
	size := 0
	for _, name := range slices.Sorted(maps.Keys(h)) {
		v := h[name]
		if !validToken(name) {
			return nil, invalidf("header name %q is not valid", name)
		}
		canon := http.CanonicalHeaderKey(name)
		switch {
		case reservedHeader(canon):
			return nil, invalidf("header %s is set by the host, not by a tool", canon)
		case secretHeader != "" && canon == secretHeader:
			return nil, invalidf("header %s is set from secret %q; a tool may not set it as well", canon, secretName)
		case carriesSecret && shapingHeaders[canon] != "":
			return nil, invalidf("header %s may not be set on a request that carries secret %q: %s", canon, secretName, shapingHeaders[canon])
		case out[canon] != nil:
			return nil, invalidf("header %s is given twice", canon)
		case !validHeaderValue(v):
			return nil, invalidf("header %s has a value with control characters", canon)
		}
		size += len(name) + len(v) + 4
		if size > maxHeaderBytes {
			return nil, invalidf("headers are longer than %d bytes", maxHeaderBytes)
		}
		out[canon] = []string{v}
	}
	return out, nil
}

// validToken reports whether s is an RFC 9110 token (header names, methods).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue rejects control characters other than tab: CR and LF
// above all, which would end the header.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

func quote(s string) string { return strconv.Quote(s) }
