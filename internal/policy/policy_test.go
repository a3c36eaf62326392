package policy

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"aead.dev/minisign"

	"github.com/wasmcp/wasmcp/abi"
)

const sha = "9f2c0000000000000000000000000000000000000000000000000000000000aa"

func load(t *testing.T, src string) *Policy {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var env = map[string]string{"HOST_REGION": "eu-west", "WEATHER_KEY": "s3cr3t-value"}

func lookup(k string) (string, bool) { v, ok := env[k]; return v, ok }

const full = `
modules:
  weather:
    sha256: ` + sha + `
    env:
      UNITS: metric
      REGION: {from: HOST_REGION}
      MISSING: {from: NOT_SET}
    dirs:
      /data: {host: /srv/data}
      /out: {host: /srv/out, write: true}
    http:
      - host: api.weather.test
        methods: [GET, POST]
      - host: "*.maps.test"
    secrets:
      key: {from: WEATHER_KEY, header: Authorization, format: "Bearer {}", hosts: [api.weather.test]}
    tools:
      forecast:
        env:
          EXTRA: "1"
`

func TestEffectiveIsTheIntersection(t *testing.T) {
	p := load(t, full)
	asked := &abi.Permissions{
		Env:     []string{"UNITS", "REGION", "MISSING", "EXTRA", "HOME"},
		Dirs:    []abi.DirRequest{{Guest: "/data", Write: true}, {Guest: "/out", Write: true}, {Guest: "/etc"}},
		HTTP:    []abi.HTTPRequest{{Host: "api.weather.test", Methods: []string{"POST", "DELETE"}}, {Host: "tiles.maps.test"}, {Host: "evil.test"}},
		Secrets: []string{"key", "other"},
	}
	eff := p.For("weather", sha, "current", asked, lookup)
	if eff.Env["UNITS"] != "metric" || eff.Env["REGION"] != "eu-west" || len(eff.Env) != 2 {
		t.Errorf("env = %v; want UNITS and REGION only (EXTRA is for another tool, HOME never granted)", eff.Env)
	}
	wantMounts := []Mount{{Host: "/srv/data", Guest: "/data"}, {Host: "/srv/out", Guest: "/out", Write: true}}
	if !slices.Equal(eff.Mounts, wantMounts) {
		t.Errorf("mounts = %+v; want %+v (/data read-only as granted)", eff.Mounts, wantMounts)
	}
	if len(eff.HTTP.Rules) != 2 || eff.HTTP.Rules[0].Host != "api.weather.test" || !slices.Equal(eff.HTTP.Rules[0].Methods, []string{"POST"}) ||
		eff.HTTP.Rules[1].Host != "tiles.maps.test" || !slices.Equal(eff.HTTP.Rules[1].Methods, []string{"GET", "HEAD"}) {
		t.Errorf("http rules = %+v", eff.HTTP.Rules)
	}
	if s, ok := eff.HTTP.Secrets["key"]; !ok || s.Value != "s3cr3t-value" || len(eff.HTTP.Secrets) != 1 {
		t.Errorf("secrets = %+v", eff.HTTP.Secrets)
	}
	missing := strings.Join(eff.Missing, "\n")
	for _, want := range []string{"MISSING", "NOT_SET", "EXTRA", "HOME", "write access to /data", "/etc", "evil.test", "secret other"} {
		if !strings.Contains(missing, want) {
			t.Errorf("missing does not mention %q:\n%s", want, missing)
		}
	}
	if strings.Contains(missing, "s3cr3t") {
		t.Error("a secret value appears in the missing list")
	}

	eff = p.For("weather", sha, "forecast", asked, lookup)
	if eff.Env["EXTRA"] != "1" {
		t.Errorf("a tool's own grant was not applied: %v", eff.Env)
	}
}

func TestGrantsArePinnedToTheModule(t *testing.T) {
	p := load(t, full)
	asked := &abi.Permissions{Env: []string{"UNITS"}, HTTP: []abi.HTTPRequest{{Host: "api.weather.test"}}}
	eff := p.For("weather", strings.Replace(sha, "9f", "00", 1), "current", asked, lookup)
	if len(eff.Env) != 0 || len(eff.HTTP.Rules) != 0 {
		t.Fatalf("a changed module kept its grants: %+v", eff)
	}
	if len(eff.Missing) != 2 || !strings.Contains(eff.Missing[0], "wasmcp policy approve") {
		t.Errorf("missing = %q; want each request, with how to approve", eff.Missing)
	}
	if eff := (*Policy)(nil).For("weather", sha, "t", asked, lookup); len(eff.Missing) != 2 || len(eff.Env) != 0 {
		t.Errorf("no policy: %+v", eff)
	}
}

func TestLoadRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"unknown key":        "modules:\n  m:\n    sha256: x\n    envs: {A: b}\n",
		"relative dir":       "modules:\n  m:\n    dirs:\n      /d: {host: relative}\n",
		"bad guest path":     "modules:\n  m:\n    dirs:\n      d: {host: /x}\n",
		"secret two sources": "modules:\n  m:\n    secrets:\n      k: {from: K, file: /f, header: A, hosts: [a.test]}\n",
		"not yaml":           "modules: [",
	} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(path, []byte(src), 0o600)
		if _, err := Load(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLoadRefusesWhatEgressCannotUse: an HTTP rule or a secret that egress
// could not use is refused when the policy loads, by egress's own checks,
// and the error names the rule; none is dropped when a call runs.
func TestLoadRefusesWhatEgressCannotUse(t *testing.T) {
	for want, src := range map[string]string{
		`module m: http rule 1: host pattern "http://x"`:                                         "http:\n      - host: \"http://x\"\n",
		`module m: http rule 2: host pattern "127.1": its last label "1" is a number`:            "http:\n      - host: a.test\n      - host: \"127.1\"\n",
		`module m: http rule 1: host pattern "API.test": write it in lower case`:                 "http:\n      - host: API.test\n",
		`module m: http rule 1: host a.test: method "get" must be written in upper case, as GET`: "http:\n      - {host: a.test, methods: [get]}\n",
		`module m: http rule 1: host a.test: method TRACE is not supported`:                      "http:\n      - {host: a.test, methods: [TRACE]}\n",
		`module m: http rule 1: host a.test: port 0 is not a port`:                               "http:\n      - {host: a.test, ports: [0]}\n",
		`module m: http rule 1: host a.test: scheme "ftp" is not supported`:                      "http:\n      - {host: a.test, schemes: [ftp]}\n",
		`module m: tools.t: http rule 1: host pattern "*.10.0.0.1"`:                              "tools:\n      t:\n        http:\n          - host: \"*.10.0.0.1\"\n",
		`module m: secrets k: it names no hosts`:                                                 "secrets:\n      k: {from: K, header: Authorization}\n",
		`module m: secrets k: it names no header`:                                                "secrets:\n      k: {from: K, hosts: [a.test]}\n",
		`module m: secrets k: header Content-Length is set by the host`:                          "secrets:\n      k: {from: K, header: content-length, hosts: [a.test]}\n",
		`module m: secrets k: format "Bearer" has no {}`:                                         "secrets:\n      k: {from: K, header: Authorization, format: Bearer, hosts: [a.test]}\n",
		`module m: secrets k: host pattern "a.test:443"`:                                         "secrets:\n      k: {from: K, header: Authorization, hosts: [a.test, \"a.test:443\"]}\n",
	} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		os.WriteFile(path, []byte("modules:\n  m:\n    "+src), 0o600)
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load = %v; want an error saying %q", err, want)
		}
	}
}

func TestApprovePinsAndKeepsComments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	src := "# grants for the weather tools\nmodules:\n  weather:\n    sha256: old\n    env:\n      UNITS: metric # always metric\n"
	os.WriteFile(path, []byte(src), 0o600)
	if err := Approve(path, "weather", sha); err != nil {
		t.Fatal(err)
	}
	if err := Approve(path, "newcomer", sha); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	out := string(b)
	for _, want := range []string{"# grants for the weather tools", "# always metric", "sha256: " + sha, "newcomer:"} {
		if !strings.Contains(out, want) {
			t.Errorf("approved policy lacks %q:\n%s", want, out)
		}
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Modules["weather"].SHA256 != sha || p.Modules["weather"].Env["UNITS"].Value != "metric" {
		t.Errorf("after approval: %+v", p.Modules["weather"])
	}
	// Approving where there is no policy yet creates one.
	fresh := filepath.Join(t.TempDir(), "new.yaml")
	if err := Approve(fresh, "m", sha); err != nil {
		t.Fatal(err)
	}
	if p, err := Load(fresh); err != nil || p.Modules["m"].SHA256 != sha {
		t.Errorf("a new policy: %v %+v", err, p)
	}
}

// publicKey is a fresh minisign public key.
func publicKey(t *testing.T) minisign.PublicKey {
	t.Helper()
	pub, _, err := minisign.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// The signatures section: keys inline or from a file beside the policy,
// a requirement for every module, and one module's own in its place.
func TestSignatures(t *testing.T) {
	release, ci := publicKey(t), publicKey(t)
	dir := t.TempDir()
	text, _ := ci.MarshalText()
	if err := os.WriteFile(filepath.Join(dir, "ci.pub"), text, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "policy.yaml")
	src := "signatures:\n  keys:\n    release: " + release.String() + "\n    ci: {file: ci.pub}\n  require: [release]\n" +
		"modules:\n  calc: {signedBy: [ci, release]}\n  other: {sha256: " + sha + "}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	names := func(keys []NamedKey) (out []string) {
		for _, k := range keys {
			out = append(out, k.Name)
		}
		return out
	}
	if got := names(p.Keys()); !slices.Equal(got, []string{"ci", "release"}) {
		t.Fatalf("keys %v", got)
	}
	if k := p.Keys()[0]; !k.Key.Equal(ci) {
		t.Fatal("the key read from ci.pub, beside the policy, is not the one written there")
	}
	for stem, want := range map[string][]string{"calc": {"ci", "release"}, "other": {"release"}, "unlisted": {"release"}} {
		if got := names(p.Signers(stem)); !slices.Equal(got, want) {
			t.Errorf("%s must be signed by %v; want %v", stem, got, want)
		}
	}
	if !p.Signers("other")[0].Key.Equal(release) {
		t.Fatal("the inline key is not the one written")
	}
	var none *Policy
	if len(load(t, "modules: {calc: {}}\n").Signers("calc")) != 0 || len(none.Signers("calc")) != 0 {
		t.Fatal("a policy without signatures requires one")
	}
}

func TestLoadRefusesABadSignatureSection(t *testing.T) {
	key := publicKey(t).String()
	for name, c := range map[string]struct{ src, want string }{
		"unknown key in require":    {"signatures: {keys: {release: " + key + "}, require: [relase]}\n", `signatures.require: no key "relase" under signatures.keys`},
		"unknown key in signedBy":   {"signatures: {keys: {release: " + key + "}}\nmodules: {calc: {signedBy: [ci]}}\n", `modules.calc.signedBy: no key "ci"`},
		"empty signedBy":            {"signatures: {keys: {release: " + key + "}}\nmodules: {calc: {signedBy: []}}\n", "modules.calc.signedBy names no key"},
		"not a key":                 {"signatures: {keys: {release: RWQnotakey}}\n", "signatures.keys.release: not a minisign public key"},
		"a key file that is absent": {"signatures: {keys: {release: {file: /nonexistent/release.pub}}}\n", "signatures.keys.release: open /nonexistent/release.pub"},
		"no key":                    {"signatures: {keys: {release: ~}}\n", "signatures.keys.release: give the key's line"},
		"a misspelt field":          {"signatures: {keys: {release: " + key + "}, requires: [release]}\n", "requires"},
		"a key of no form":          {"signatures: {keys: {release: {path: /x}}}\n", "path"},
	} {
		path := filepath.Join(t.TempDir(), "p.yaml")
		if err := os.WriteFile(path, []byte(c.src), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v; want one saying %q", name, err, c.want)
		}
	}
}
