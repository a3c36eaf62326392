package egress

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmcp/wasmcp/internal/netrule"
)

// target is a checked, normalised request URL.
type target struct {
	u      *url.URL
	scheme string       // "http" or "https"
	h      netrule.Host // what rules are matched against
	host   string       // h as a string: a lower-case name, or the IP in canonical form
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
	if err := netrule.CheckScheme(scheme); err != nil {
		return nil, invalidf("%v", err)
	}
	h, err := netrule.ParseHost(strings.ToLower(u.Hostname()))
	if err != nil {
		return nil, invalidf("host %q: %v", u.Hostname(), err)
	}
	t := &target{scheme: scheme, h: h, host: h.String(), port: defaultPort(scheme)}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err == nil {
			err = netrule.CheckPort(n)
		}
		if err != nil {
			return nil, invalidf("port %q is not a port (1 to 65535)", p)
		}
		t.port = n
	}
	nu := *u
	nu.Scheme, nu.User, nu.Fragment, nu.RawFragment = scheme, nil, "", ""
	nu.Host = t.host
	if h.IP().Is6() {
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

// checkMethod validates and upper-cases a method; empty means GET. The
// token is checked before upper-casing, which is ASCII-only for one, so
// that no other character turns into a letter of a method.
func checkMethod(m string) (string, error) {
	if m == "" {
		return http.MethodGet, nil
	}
	if !netrule.IsToken(m) {
		return "", invalidf("method %q is not an HTTP method", m)
	}
	m = strings.ToUpper(m)
	if err := netrule.CheckMethod(m); err != nil {
		return "", invalidf("%v", err)
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
		if !netrule.IsToken(name) {
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
			return nil, tooLongf("headers are longer than %d bytes", maxHeaderBytes)
		}
		out[canon] = []string{v}
	}
	return out, nil
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
