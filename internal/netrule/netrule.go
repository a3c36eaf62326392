// Package netrule holds the rules for what the network half of a
// permission names: hosts and host patterns, methods, ports and schemes.
// The manifest's check (abi), the policy's (internal/policy) and the check
// of each request (internal/egress) all parse and compare through it, so a
// pattern means one thing everywhere: what a manifest may ask for, a
// policy may grant and a request is matched against.
//
// A host is a DNS name or an IP address:
//
//   - A name is written in lower case, as labels of letters, digits, '-'
//     and '_', each 1 to 63 bytes and none beginning or ending with '-', at
//     most 253 bytes in all, with no trailing dot. These are the names Go's
//     resolver, which egress uses, looks up: it takes '_', which real names
//     hold (_acme-challenge, some storage buckets), and refuses a label at
//     a '-'. Lower case, because hosts are compared as written and a
//     request's host is lower-cased first (RFC 3986, 3.2.2): a pattern with
//     a capital could never match, so it is refused rather than ignored.
//     No trailing dot, because "example.com." is "example.com" spelt
//     another way, and one spelling per host is what lets a comparison of
//     names be a comparison of hosts.
//   - The last label of a name is not a number (only digits, or 0x and hex
//     digits): URL parsers and C resolvers read "127.1", "2130706433" and
//     "0x7f.1" as IPv4 addresses, so such a name could reach an address no
//     rule names.
//   - An address is IPv4 in dotted-decimal or IPv6, without brackets and
//     without a zone, as net/netip parses it (which refuses IPv4 octets
//     with leading zeros, read as octal elsewhere). A zone names one of the
//     server's interfaces, which no grant should depend on. An
//     IPv4-mapped IPv6 address is the same host as the IPv4 address.
//
// A pattern is a host, or "*." and a name: every name below that one, at
// any depth, but not the name itself, which is granted by a pattern of its
// own. A wildcard never covers an address.
//
// A method is an RFC 9110 token in upper case, at most 32 bytes, and not
// CONNECT, which would open a tunnel past every check on the request, or
// TRACE, which echoes the request back, headers and the host's secret
// included. Methods are case-sensitive and every registered one is upper
// case; a tool's method is upper-cased before it is checked. A rule that
// lists none allows GET and HEAD.
//
// A port is 1 to 65535; a scheme is "http" or "https".
package netrule

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Bounds on names and methods.
const (
	MaxNameLen   = 253
	MaxLabelLen  = 63
	MaxMethodLen = 32
)

// A Host is a name or an address, as a request or a pattern gives it. The
// zero Host is no host: no pattern matches it.
type Host struct {
	name string     // set for a name
	ip   netip.Addr // set for an address, as written (not unmapped)
}

// ParseHost checks a host: a lower-case name or an IP address. Its errors
// say what is wrong with it, without repeating it.
func ParseHost(s string) (Host, error) {
	if s == "" {
		return Host{}, errors.New("it is empty")
	}
	if strings.IndexFunc(s, func(r rune) bool { return 'A' <= r && r <= 'Z' }) >= 0 {
		return Host{}, errors.New("write it in lower case")
	}
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Zone() != "" {
			return Host{}, errors.New("an IPv6 address with a zone is not supported")
		}
		return Host{ip: a}, nil
	}
	if err := checkName(s); err != nil {
		return Host{}, err
	}
	return Host{name: s}, nil
}

// checkName applies the rules for a name of the package comment.
func checkName(name string) error {
	if strings.ContainsAny(name, ":/[]@") {
		return errors.New("give the host alone, a name or an IP address, without a scheme, brackets, a port or a path")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("a host name is at most %d bytes", MaxNameLen)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		switch {
		case l == "" && name[len(name)-1] == '.':
			return errors.New("it ends with a dot; leave the dot out")
		case l == "":
			return errors.New("it has an empty label")
		case len(l) > MaxLabelLen:
			return fmt.Errorf("label %q is over %d bytes", l[:16]+"…", MaxLabelLen)
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Errorf("label %q begins or ends with '-'", l)
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("label %q holds %q; a label has only letters, digits, '-' and '_'", l, l[i:i+1])
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") && strings.Trim(last[2:], "0123456789abcdef") == "" {
		return fmt.Errorf("its last label %q is a number, so it would be read as an IPv4 address; give the address in dotted-decimal instead", last)
	}
	return nil
}

// IP is the host's address, or the zero Addr for a name.
func (h Host) IP() netip.Addr { return h.ip }

// String is the host as it was given: a name, or the address in
// canonical form.
func (h Host) String() string {
	if h.ip.IsValid() {
		return h.ip.String()
	}
	return h.name
}

// same reports whether two hosts are one: equal names, or addresses equal
// once unmapped.
func (h Host) same(o Host) bool {
	if h.ip.IsValid() || o.ip.IsValid() {
		return h.ip.IsValid() && o.ip.IsValid() && h.ip.Unmap() == o.ip.Unmap()
	}
	return h.name != "" && h.name == o.name
}

// A Pattern names hosts: one host, or with a wildcard every name below
// one. The zero Pattern names none.
type Pattern struct {
	host     Host // for a wildcard, the name after "*."
	wildcard bool
}

// ParsePattern checks a host pattern: a host, or "*." and a name.
func ParsePattern(s string) (Pattern, error) {
	base, wildcard := strings.CutPrefix(s, "*.")
	h, err := ParseHost(base)
	if err == nil && wildcard && h.ip.IsValid() {
		err = errors.New("a wildcard covers names, not addresses")
	}
	if err != nil {
		return Pattern{}, fmt.Errorf("host pattern %q: %w", s, err)
	}
	return Pattern{host: h, wildcard: wildcard}, nil
}

// String is the pattern as ParsePattern reads it.
func (p Pattern) String() string {
	if p.wildcard {
		return "*." + p.host.name
	}
	return p.host.String()
}

// Matches reports whether the pattern names the host. It is Covers of the
// pattern of that one host, so that matching a request and comparing a
// grant with what a manifest asks for can never disagree.
func (p Pattern) Matches(h Host) bool { return p.Covers(Pattern{host: h}) }

// Covers reports whether p names every host that q names.
func (p Pattern) Covers(q Pattern) bool {
	switch {
	case !p.wildcard:
		return !q.wildcard && p.host.same(q.host)
	case q.host.name == "": // an address, or no host at all
		return false
	case q.wildcard && q.host.name == p.host.name:
		return true
	default:
		return strings.HasSuffix(q.host.name, "."+p.host.name)
	}
}

// Intersect returns the hosts both patterns name, when that is a pattern:
// the narrower one, when one covers the other.
func Intersect(a, b Pattern) (Pattern, bool) {
	switch {
	case a.Covers(b):
		return b, true
	case b.Covers(a):
		return a, true
	}
	return Pattern{}, false
}

// CheckMethod checks a method as a rule or a request names it, after a
// request's method was upper-cased.
func CheckMethod(m string) error {
	switch {
	case !IsToken(m) || len(m) > MaxMethodLen:
		return fmt.Errorf("method %q is not an HTTP method (a token of at most %d bytes)", m, MaxMethodLen)
	case m != strings.ToUpper(m):
		return fmt.Errorf("method %q must be written in upper case, as %s", m, strings.ToUpper(m))
	case m == http.MethodConnect || m == http.MethodTrace:
		return fmt.Errorf("method %s is not supported: %s", m, map[string]string{
			http.MethodConnect: "it would open a tunnel past the host's checks",
			http.MethodTrace:   "the answer would echo the request, headers and secrets included",
		}[m])
	}
	return nil
}

// MethodsOrDefault returns the methods a rule allows: those it lists, or
// GET and HEAD when it lists none.
func MethodsOrDefault(listed []string) []string {
	if len(listed) == 0 {
		return []string{http.MethodGet, http.MethodHead}
	}
	return listed
}

// CheckPort checks a port number.
func CheckPort(p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("port %d is not a port (1 to 65535)", p)
	}
	return nil
}

// CheckScheme checks a scheme, after a request's scheme was lower-cased.
func CheckScheme(s string) error {
	switch l := strings.ToLower(s); {
	case l != "http" && l != "https":
		return fmt.Errorf("scheme %q is not supported: only http and https are", s)
	case l != s:
		return fmt.Errorf("scheme %q must be written in lower case, as %s", s, l)
	}
	return nil
}

// IsToken reports whether s is an RFC 9110 token, the syntax of methods
// and header names.
func IsToken(s string) bool {
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
