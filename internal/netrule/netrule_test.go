package netrule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/netrule"
	"github.com/wasmcp/wasmcp/internal/policy"
)

// patterns are host patterns with the one verdict every caller gives: ""
// for a pattern that is accepted, or what the refusal says.
var patterns = []struct{ pattern, refusal string }{
	{"api.example.com", ""},
	{"*.example.com", ""},
	{"*.com", ""},
	{"localhost", ""},
	{"_acme-challenge.example.com", ""},
	{"a_b.example", ""},
	{"xn--bcher-kva.example", ""},
	{"a-b.c-d.example", ""},
	{"1a", ""},
	{"0x7g", ""},
	{strings.Repeat("a", 63) + ".example", ""},
	{"127.0.0.1", ""},
	{"10.0.0.5", ""},
	{"::1", ""},
	{"fd00:ec2::254", ""},
	{"::ffff:127.0.0.1", ""},

	{"", "it is empty"},
	{"API.example.com", "write it in lower case"},
	{"FE80::1", "write it in lower case"},
	{"example.com.", "it ends with a dot"},
	{"a..example", "empty label"},
	{".example.com", "empty label"},
	{"127.1", `last label "1" is a number`},
	{"2130706433", "is a number"},
	{"0x7f.1", "is a number"},
	{"0x7f000001", "is a number"},
	{"example.123", "is a number"},
	{"127.000.0.1", "is a number"},
	{"-a.example", "begins or ends with '-'"},
	{"a-.example", "begins or ends with '-'"},
	{"a b.example", `holds " "`},
	{"exa$mple.com", `holds "$"`},
	{"é.example", `holds "\xc3"`},
	{" api.example.com", `holds " "`},
	{"api.example.com:443", "without a scheme, brackets, a port or a path"},
	{"https://api.example.com", "without a scheme"},
	{"api.example.com/v1", "without a scheme"},
	{"[::1]", "without a scheme, brackets"},
	{"fe80::1%eth0", "with a zone"},
	{strings.Repeat("a", 64) + ".example", "is over 63 bytes"},
	{strings.Repeat("abcdefg.", 32) + "example", "at most 253 bytes"},
	{"*", `holds "*"`},
	{"*.", "it is empty"},
	{"*.*.example.com", `holds "*"`},
	{"a.*.example.com", `holds "*"`},
	{"*.10.0.0.1", "a wildcard covers names, not addresses"},
	{"*.::1", "a wildcard covers names, not addresses"},
}

// TestEveryCallerGivesTheSameVerdict checks each pattern where a manifest
// asks for it, where a policy grants it (as a rule and as a secret's
// host), and where egress is handed it: all accept it, or all refuse it
// saying the same thing.
func TestEveryCallerGivesTheSameVerdict(t *testing.T) {
	for _, tc := range patterns {
		verdicts := map[string]error{}
		_, verdicts["netrule"] = netrule.ParsePattern(tc.pattern)
		verdicts["manifest"] = (&abi.Permissions{HTTP: []abi.HTTPRequest{{Host: tc.pattern}}}).Check()
		verdicts["egress rule"] = egress.Rule{Host: tc.pattern}.Check()
		verdicts["egress secret"] = egress.Secret{Header: "X-Key", Hosts: []string{tc.pattern}}.Check()
		q, _ := json.Marshal(tc.pattern)
		verdicts["policy rule"] = loadPolicy(t, fmt.Sprintf("modules:\n  m:\n    http:\n      - host: api.test\n      - host: %s\n", q))
		verdicts["policy secret"] = loadPolicy(t, fmt.Sprintf("modules:\n  m:\n    secrets:\n      k: {from: K, header: X-Key, hosts: [%s]}\n", q))
		for caller, err := range verdicts {
			switch {
			case tc.refusal == "" && err != nil:
				t.Errorf("%s refuses %q: %v", caller, tc.pattern, err)
			case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
				t.Errorf("%s on %q: %v; want a refusal saying %q", caller, tc.pattern, err, tc.refusal)
			}
		}
		if err := verdicts["policy rule"]; tc.refusal != "" && err != nil && !strings.Contains(err.Error(), "module m: http rule 2: host pattern "+string(q)) {
			t.Errorf("the policy's refusal does not name the rule: %v", err)
		}
		if err := verdicts["policy secret"]; tc.refusal != "" && err != nil && !strings.Contains(err.Error(), "module m: secrets k: host pattern "+string(q)) {
			t.Errorf("the policy's refusal does not name the secret: %v", err)
		}
	}
}

func loadPolicy(t *testing.T, src string) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := policy.Load(path)
	return err
}

// matches are patterns and hosts, with whether the one names the other.
var matches = []struct {
	pattern, host string
	match         bool
}{
	{"api.example.com", "api.example.com", true},
	{"api.example.com", "www.api.example.com", false},
	{"api.example.com", "example.com", false},
	{"*.example.com", "a.example.com", true},
	{"*.example.com", "a.b.example.com", true},
	{"*.example.com", "example.com", false},
	{"*.example.com", "badexample.com", false},
	{"*.example.com", "example.com.evil.test", false},
	{"*.com", "example.com", true},
	{"_dmarc.example.com", "_dmarc.example.com", true},
	{"127.0.0.1", "127.0.0.1", true},
	{"127.0.0.1", "::ffff:127.0.0.1", true},
	{"::ffff:127.0.0.1", "127.0.0.1", true},
	{"127.0.0.1", "127.0.0.2", false},
	{"127.0.0.1", "localhost", false},
	{"localhost", "127.0.0.1", false},
	{"::1", "::1", true},
	{"::1", "0:0::1", true},
	{"*.example.com", "10.0.0.1", false},
}

// TestMatchingAgrees matches each host against each pattern as egress
// does for a request, and as the policy does when it grants a manifest's
// ask for that one host.
func TestMatchingAgrees(t *testing.T) {
	for _, tc := range matches {
		p, err := netrule.ParsePattern(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		h, err := netrule.ParseHost(tc.host)
		if err != nil {
			t.Fatal(err)
		}
		verdicts := map[string]bool{
			"netrule": p.Matches(h),
			"egress":  egressMatches(t, tc.pattern, tc.host),
			"policy":  len(grantFor(t, tc.host, tc.pattern)) > 0,
		}
		for caller, got := range verdicts {
			if got != tc.match {
				t.Errorf("%s: %q matches %q: %v, want %v", caller, tc.pattern, tc.host, got, tc.match)
			}
		}
	}
}

// egressMatches makes a request to host under a rule for pattern. Nothing
// is sent: a name that matches fails to resolve, and an address that
// matches is refused as private; one that does not match is denied as a
// host.
func egressMatches(t *testing.T, pattern, host string) bool {
	t.Helper()
	c := egress.NewClient(egress.Grant{Rules: []egress.Rule{{Host: pattern, Schemes: []string{"http"}}}}, egress.Limits{}, noLookups{})
	u := url.URL{Scheme: "http", Host: host, Path: "/"}
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	_, err := c.Do(context.Background(), egress.Request{URL: u.String()})
	var d *egress.Denied
	switch {
	case errors.As(err, &d) && strings.HasPrefix(d.Permission, "http host"):
		return false
	case errors.Is(err, errNoLookups), errors.As(err, &d) && strings.HasPrefix(d.Permission, "private address"):
		return true
	}
	t.Fatalf("request to %s under %s: %v", host, pattern, err)
	return false
}

var errNoLookups = errors.New("no lookups in this test")

type noLookups struct{}

func (noLookups) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return nil, errNoLookups
}

// grantFor is the HTTP rules a call gets when its manifest asks for asked
// and the policy grants granted.
func grantFor(t *testing.T, asked, granted string) []egress.Rule {
	t.Helper()
	const sha = "aa"
	q, _ := json.Marshal(granted)
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("modules:\n  m:\n    sha256: %s\n    http:\n      - host: %s\n", sha, q)), 0o600); err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ask := &abi.Permissions{HTTP: []abi.HTTPRequest{{Host: asked}}}
	if err := ask.Check(); err != nil {
		t.Fatal(err)
	}
	return pol.For("m", sha, "t", ask, func(string) (string, bool) { return "", false }).HTTP.Rules
}

// TestIntersection is what a call gets of a manifest's ask and a policy's
// grant: the narrower pattern when one covers the other, else nothing.
func TestIntersection(t *testing.T) {
	for _, tc := range []struct{ asked, granted, want string }{
		{"api.example.com", "api.example.com", "api.example.com"},
		{"api.example.com", "*.example.com", "api.example.com"},
		{"*.example.com", "api.example.com", "api.example.com"},
		{"*.example.com", "*.example.com", "*.example.com"},
		{"*.api.example.com", "*.example.com", "*.api.example.com"},
		{"*.com", "*.example.com", "*.example.com"},
		{"*.example.com", "example.com", ""},
		{"example.com", "*.example.com", ""},
		{"api.example.com", "other.example.com", ""},
		{"*.a.example", "*.b.example", ""},
		{"127.0.0.1", "::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"*.example.com", "10.0.0.1", ""},
		{"10.0.0.1", "10.0.0.2", ""},
	} {
		a, err := netrule.ParsePattern(tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		g, err := netrule.ParsePattern(tc.granted)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if p, ok := netrule.Intersect(a, g); ok {
			got = p.String()
		}
		if got != tc.want {
			t.Errorf("Intersect(%s, %s) = %q, want %q", tc.asked, tc.granted, got, tc.want)
		}
		var rules []string
		for _, r := range grantFor(t, tc.asked, tc.granted) {
			rules = append(rules, r.Host)
		}
		if want := []string{tc.want}; tc.want == "" && len(rules) != 0 || tc.want != "" && (len(rules) != 1 || rules[0] != tc.want) {
			t.Errorf("the policy grants %v for %s asked and %s granted; want %v", rules, tc.asked, tc.granted, want)
		}
	}
}

// TestZeroValuesNameNothing: a pattern or host that failed to parse is the
// zero value, which must never match or cover anything.
func TestZeroValuesNameNothing(t *testing.T) {
	var zero netrule.Pattern
	any, _ := netrule.ParsePattern("*.com")
	name, _ := netrule.ParseHost("example.com")
	if zero.Matches(name) || zero.Matches(netrule.Host{}) || any.Matches(netrule.Host{}) || zero.Covers(zero) || any.Covers(zero) || zero.Covers(any) {
		t.Error("a zero Pattern or Host names something")
	}
	if _, ok := netrule.Intersect(zero, any); ok {
		t.Error("the zero Pattern intersects a wildcard")
	}
}

func TestMethodsPortsSchemes(t *testing.T) {
	for m, refusal := range map[string]string{
		"GET": "", "POST": "", "PROPFIND": "", "M-SEARCH": "",
		"get": "must be written in upper case, as GET", "": "is not an HTTP method", "GE T": "is not an HTTP method",
		strings.Repeat("A", netrule.MaxMethodLen+1): "is not an HTTP method",
		"CONNECT": "would open a tunnel", "TRACE": "would echo the request",
	} {
		err := netrule.CheckMethod(m)
		manifest := (&abi.Permissions{HTTP: []abi.HTTPRequest{{Host: "a.test", Methods: []string{m}}}}).Check()
		rule := egress.Rule{Host: "a.test", Methods: []string{m}}.Check()
		for caller, err := range map[string]error{"netrule": err, "manifest": manifest, "egress rule": rule} {
			if refusal == "" && err != nil || refusal != "" && (err == nil || !strings.Contains(err.Error(), refusal)) {
				t.Errorf("%s on method %q: %v; want %q", caller, m, err, refusal)
			}
		}
	}
	if got := netrule.MethodsOrDefault(nil); strings.Join(got, ",") != "GET,HEAD" {
		t.Errorf("no methods listed allows %v", got)
	}
	for p, ok := range map[int]bool{1: true, 443: true, 65535: true, 0: false, -1: false, 65536: false} {
		if (netrule.CheckPort(p) == nil) != ok {
			t.Errorf("CheckPort(%d) = %v", p, netrule.CheckPort(p))
		}
	}
	for s, ok := range map[string]bool{"http": true, "https": true, "HTTPS": false, "ftp": false, "": false} {
		if (netrule.CheckScheme(s) == nil) != ok {
			t.Errorf("CheckScheme(%q) = %v", s, netrule.CheckScheme(s))
		}
	}
}
