// Package policy reads the operator's grants and works out what a tool
// call may touch: the intersection of what the tool's manifest asks for and
// what the policy grants its module, or the tool itself. A module's grants
// are pinned to its content hash, so a changed module has none until the
// operator approves it again.
//
// Nothing reachable through MCP writes a policy: it is a file the server
// reads, and only the `wasmcp policy approve` command changes it.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"aead.dev/minisign"
	"go.yaml.in/yaml/v3"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/netrule"
)

// Policy is a parsed policy file.
type Policy struct {
	// Path is the file it was read from, for messages.
	Path    string
	Modules map[string]*Module `yaml:"modules"`
	// Signatures names the keys modules may be signed by, and which
	// modules must be.
	Signatures Signatures `yaml:"signatures"`
}

// Signatures are the policy's public keys and its requirement.
type Signatures struct {
	// Keys are minisign public keys by the names the policy gives them.
	Keys map[string]*PublicKey `yaml:"keys"`
	// Require names the keys one of which must sign every module, unless
	// the module's own signedBy names others.
	Require []string `yaml:"require"`
}

// PublicKey is a minisign public key: written in the policy as the
// key's base64 line ("RWQ…"), or {file: PATH} for a public key file as
// `wasmcp keygen` and `minisign -G` write it, relative to the policy
// file's directory.
type PublicKey struct {
	// Text is the key written inline; File, the file it is read from
	// instead.
	Text string `yaml:"-"`
	File string `yaml:"file"`
	// Key is the key parsed, once Load has read it.
	Key minisign.PublicKey `yaml:"-"`
}

// UnmarshalYAML accepts the scalar shorthand for a key written inline.
func (k *PublicKey) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		k.Text = n.Value
		return nil
	}
	type plain PublicKey
	var p plain
	if err := decodeStrict(n, &p); err != nil {
		return err
	}
	if p.File == "" {
		return errors.New("give the key's line (RWQ…) or {file: PATH}")
	}
	*k = PublicKey(p)
	return nil
}

// MaxKeyFileSize bounds a public key file: minisign writes about 100
// bytes.
const MaxKeyFileSize = 4 << 10

// read parses the key, reading its file if it has one; dir is the policy
// file's directory.
func (k *PublicKey) read(dir string) error {
	text := []byte(k.Text)
	if k.File != "" {
		if !filepath.IsAbs(k.File) {
			k.File = filepath.Join(dir, k.File)
		}
		f, err := os.Open(k.File)
		if err != nil {
			return err
		}
		defer f.Close()
		if text, err = io.ReadAll(io.LimitReader(f, MaxKeyFileSize+1)); err != nil {
			return err
		}
		if len(text) > MaxKeyFileSize {
			return fmt.Errorf("%s is over %d bytes: it is not a minisign public key file", k.File, MaxKeyFileSize)
		}
	}
	if err := k.Key.UnmarshalText(bytes.TrimSpace(text)); err != nil {
		return fmt.Errorf("not a minisign public key (%w): give the key's second line as `wasmcp keygen` or `minisign -G` wrote it, or {file: PATH} for its file", err)
	}
	return nil
}

// NamedKey is a public key with its name in the policy.
type NamedKey struct {
	Name string
	Key  minisign.PublicKey
}

// KeyNames names keys for a message: key "release", or keys "release"
// or "ci".
func KeyNames(keys []NamedKey) string {
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = strconv.Quote(k.Name)
	}
	if len(keys) == 1 {
		return "key " + quoted[0]
	}
	return "keys " + strings.Join(quoted, " or ")
}

// Keys are the policy's public keys, sorted by name.
func (p *Policy) Keys() []NamedKey {
	if p == nil {
		return nil
	}
	var out []NamedKey
	for _, name := range slices.Sorted(maps.Keys(p.Signatures.Keys)) {
		out = append(out, NamedKey{Name: name, Key: p.Signatures.Keys[name].Key})
	}
	return out
}

// Signers are the keys one of which must sign the module with the given
// file stem, in the order the policy names them: the module's signedBy if
// it has one, else signatures.require. None means no signature is needed.
func (p *Policy) Signers(stem string) []NamedKey {
	if p == nil {
		return nil
	}
	names := p.Signatures.Require
	if m := p.Modules[stem]; m != nil && m.SignedBy != nil {
		names = m.SignedBy
	}
	out := make([]NamedKey, 0, len(names))
	for _, name := range names {
		out = append(out, NamedKey{Name: name, Key: p.Signatures.Keys[name].Key})
	}
	return out
}

// Module holds the grants of one module, by its file stem.
type Module struct {
	// SHA256 pins the grants to one exact module. A module with another
	// hash, or an entry without one, gets nothing.
	SHA256 string `yaml:"sha256"`
	Grants `yaml:",inline"`
	// Tools add grants for single tools of the module.
	Tools map[string]*Grants `yaml:"tools"`
	// SignedBy names the keys one of which must sign the module, in
	// place of signatures.require.
	SignedBy []string `yaml:"signedBy"`
}

// Grants are what an operator gives.
type Grants struct {
	Env     map[string]EnvValue    `yaml:"env"`
	Dirs    map[string]DirGrant    `yaml:"dirs"`
	HTTP    []HTTPGrant            `yaml:"http"`
	Secrets map[string]SecretGrant `yaml:"secrets"`
}

// EnvValue is a literal ("eu"), or {from: NAME} to pass on the server's
// own variable.
type EnvValue struct {
	Value string `yaml:"value"`
	From  string `yaml:"from"`
}

// UnmarshalYAML accepts the scalar shorthand for a literal value.
func (e *EnvValue) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		e.Value = n.Value
		return nil
	}
	type plain EnvValue
	var p plain
	if err := decodeStrict(n, &p); err != nil {
		return err
	}
	*e = EnvValue(p)
	return nil
}

// DirGrant mounts a host directory at the guest path that keys it.
type DirGrant struct {
	Host  string `yaml:"host"`
	Write bool   `yaml:"write"`
}

// HTTPGrant lets requests reach a host pattern.
type HTTPGrant struct {
	Host         string   `yaml:"host"`
	Methods      []string `yaml:"methods"`
	Ports        []int    `yaml:"ports"`
	Schemes      []string `yaml:"schemes"`
	AllowPrivate bool     `yaml:"allow_private"`
}

// SecretGrant says where a secret's value is and how it is sent.
type SecretGrant struct {
	From   string   `yaml:"from"` // a variable of the server's environment
	File   string   `yaml:"file"` // or a file, e.g. a mounted Kubernetes secret
	Header string   `yaml:"header"`
	Format string   `yaml:"format"`
	Hosts  []string `yaml:"hosts"`
}

// Load reads a policy file. Unknown keys are errors, so that a misspelt
// grant is reported rather than silently not given.
func Load(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	p := &Policy{Path: path, Modules: map[string]*Module{}}
	if len(root.Content) > 0 {
		if err := decodeStrict(root.Content[0], p); err != nil {
			return nil, fmt.Errorf("policy %s: %w", path, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(p.Signatures.Keys)) {
		k := p.Signatures.Keys[name]
		if k == nil {
			return nil, fmt.Errorf("policy %s: signatures.keys.%s: give the key's line (RWQ…) or {file: PATH}", path, name)
		}
		if err := k.read(filepath.Dir(path)); err != nil {
			return nil, fmt.Errorf("policy %s: signatures.keys.%s: %w", path, name, err)
		}
	}
	if err := p.checkNames("signatures.require", p.Signatures.Require); err != nil {
		return nil, err
	}
	for stem, m := range p.Modules {
		if m == nil {
			p.Modules[stem] = &Module{}
			continue
		}
		if err := m.check(); err != nil {
			return nil, fmt.Errorf("policy %s: module %s: %w", path, stem, err)
		}
		if m.SignedBy != nil {
			if err := p.checkNames("modules."+stem+".signedBy", m.SignedBy); err != nil {
				return nil, err
			}
			if len(m.SignedBy) == 0 {
				return nil, fmt.Errorf("policy %s: modules.%s.signedBy names no key: name one of signatures.keys, or remove it to use signatures.require", path, stem)
			}
		}
	}
	return p, nil
}

// checkNames refuses a requirement that names a key the policy lacks, so
// that a misspelt name never stands for a key no signature can match.
func (p *Policy) checkNames(where string, names []string) error {
	for _, name := range names {
		if _, ok := p.Signatures.Keys[name]; !ok {
			return fmt.Errorf("policy %s: %s: no key %q under signatures.keys", p.Path, where, name)
		}
	}
	return nil
}

func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

func (m *Module) check() error {
	if err := m.Grants.check(); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(m.Tools)) {
		if g := m.Tools[name]; g != nil {
			if err := g.check(); err != nil {
				return fmt.Errorf("tools.%s: %w", name, err)
			}
		}
	}
	return nil
}

// check refuses what a call could not be given: above all an HTTP rule or
// a secret that egress could not use, checked by egress itself, so that
// no grant is dropped unnoticed when a call runs.
func (g *Grants) check() error {
	for _, guest := range slices.Sorted(maps.Keys(g.Dirs)) {
		if err := abi.CheckGuestPath(guest); err != nil {
			return fmt.Errorf("dirs: %w", err)
		}
		if d := g.Dirs[guest]; !filepath.IsAbs(d.Host) {
			return fmt.Errorf("dirs %s: host path %q must be absolute", guest, d.Host)
		}
	}
	for i, h := range g.HTTP {
		if err := h.rule().Check(); err != nil {
			return fmt.Errorf("http rule %d: %w", i+1, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.Secrets)) {
		s := g.Secrets[name]
		if (s.From == "") == (s.File == "") {
			return fmt.Errorf("secrets %s: give exactly one of from (an environment variable) and file", name)
		}
		if err := s.secret("").Check(); err != nil {
			return fmt.Errorf("secrets %s: %w", name, err)
		}
	}
	return nil
}

// rule is the egress rule the grant stands for.
func (h HTTPGrant) rule() egress.Rule {
	return egress.Rule{Host: h.Host, Methods: h.Methods, Ports: h.Ports, Schemes: h.Schemes, AllowPrivate: h.AllowPrivate}
}

// secret is the egress secret the grant stands for, with its value.
func (s SecretGrant) secret(value string) egress.Secret {
	return egress.Secret{Value: value, Header: s.Header, Format: s.Format, Hosts: s.Hosts}
}

// Mount is a directory a call gets.
type Mount struct {
	Host, Guest string
	Write       bool
}

// Effective is what one call of a tool may touch.
type Effective struct {
	Env    map[string]string
	Mounts []Mount
	HTTP   egress.Grant
	// Missing lists what the manifest asks for and the call does not get,
	// each with how an operator would grant it.
	Missing []string
}

// For works out a call's permissions. lookupEnv reads the server's own
// environment, for grants that pass a variable on.
func (p *Policy) For(stem, sha256, tool string, asked *abi.Permissions, lookupEnv func(string) (string, bool)) Effective {
	eff := Effective{Env: map[string]string{}, HTTP: egress.Grant{Secrets: map[string]egress.Secret{}}}
	if asked == nil {
		return eff
	}
	var m *Module
	if p != nil {
		m = p.Modules[stem]
	}
	where := "modules." + stem
	if m == nil || m.SHA256 != sha256 {
		why := fmt.Sprintf("no grants for module %s in the policy", stem)
		if m != nil {
			why = fmt.Sprintf("the grants for module %s are for another version (sha256 %s); approve this one (sha256 %s) with `wasmcp policy approve`", stem, short(m.SHA256), short(sha256))
		}
		eff.Missing = append(eff.Missing, describeAll(asked, why)...)
		return eff
	}
	g := m.Grants
	if t := m.Tools[tool]; t != nil {
		g = merge(g, *t)
	}

	for _, name := range asked.Env {
		v, ok := g.Env[name]
		switch {
		case !ok:
			eff.Missing = append(eff.Missing, fmt.Sprintf("environment variable %s: grant it under %s.env", name, where))
		case v.From != "":
			val, ok := lookupEnv(v.From)
			if !ok {
				eff.Missing = append(eff.Missing, fmt.Sprintf("environment variable %s: the server's variable %s is not set", name, v.From))
				continue
			}
			eff.Env[name] = val
		default:
			eff.Env[name] = v.Value
		}
	}
	for _, d := range asked.Dirs {
		grant, ok := g.Dirs[d.Guest]
		if !ok {
			eff.Missing = append(eff.Missing, fmt.Sprintf("directory %s: grant it under %s.dirs", d.Guest, where))
			continue
		}
		write := d.Write && grant.Write
		if d.Write && !grant.Write {
			eff.Missing = append(eff.Missing, fmt.Sprintf("write access to %s: it is mounted read-only; add write: true under %s.dirs", d.Guest, where))
		}
		eff.Mounts = append(eff.Mounts, Mount{Host: grant.Host, Guest: d.Guest, Write: write})
	}
	for _, h := range asked.HTTP {
		// Both patterns were checked when they loaded; one that was not
		// parses to the zero Pattern, which intersects nothing.
		askedHost, _ := netrule.ParsePattern(h.Host)
		found := false
		for _, grant := range g.HTTP {
			grantedHost, _ := netrule.ParsePattern(grant.Host)
			host, ok := netrule.Intersect(askedHost, grantedHost)
			if !ok {
				continue
			}
			methods := intersectMethods(h.Methods, grant.Methods)
			if len(methods) == 0 {
				continue
			}
			found = true
			r := grant.rule()
			r.Host, r.Methods = host.String(), methods
			eff.HTTP.Rules = append(eff.HTTP.Rules, r)
		}
		if !found {
			eff.Missing = append(eff.Missing, fmt.Sprintf("http host %s (%s): grant it under %s.http", h.Host, strings.Join(netrule.MethodsOrDefault(h.Methods), ", "), where))
		}
	}
	for _, name := range asked.Secrets {
		s, ok := g.Secrets[name]
		if !ok {
			eff.Missing = append(eff.Missing, fmt.Sprintf("secret %s: grant it under %s.secrets", name, where))
			continue
		}
		value, err := s.value(lookupEnv)
		if err != nil {
			eff.Missing = append(eff.Missing, fmt.Sprintf("secret %s: %v", name, err))
			continue
		}
		eff.HTTP.Secrets[name] = s.secret(value)
	}
	return eff
}

// value reads a secret. Errors name where it was looked for, never what it
// holds.
func (s SecretGrant) value(lookupEnv func(string) (string, bool)) (string, error) {
	if s.From != "" {
		v, ok := lookupEnv(s.From)
		if !ok || v == "" {
			return "", fmt.Errorf("the server's variable %s is not set", s.From)
		}
		return v, nil
	}
	b, err := os.ReadFile(s.File)
	if err != nil {
		return "", fmt.Errorf("cannot read %s", s.File)
	}
	return strings.TrimSpace(string(b)), nil
}

func merge(a, b Grants) Grants {
	out := Grants{
		Env:     map[string]EnvValue{},
		Dirs:    map[string]DirGrant{},
		HTTP:    append(slices.Clone(a.HTTP), b.HTTP...),
		Secrets: map[string]SecretGrant{},
	}
	for _, g := range []Grants{a, b} {
		for k, v := range g.Env {
			out.Env[k] = v
		}
		for k, v := range g.Dirs {
			out.Dirs[k] = v
		}
		for k, v := range g.Secrets {
			out.Secrets[k] = v
		}
	}
	return out
}

func intersectMethods(asked, granted []string) []string {
	var out []string
	for _, m := range netrule.MethodsOrDefault(asked) {
		if slices.Contains(netrule.MethodsOrDefault(granted), m) {
			out = append(out, m)
		}
	}
	return out
}

func describeAll(asked *abi.Permissions, why string) []string {
	var out []string
	for _, e := range asked.Env {
		out = append(out, fmt.Sprintf("environment variable %s: %s", e, why))
	}
	for _, d := range asked.Dirs {
		out = append(out, fmt.Sprintf("directory %s: %s", d.Guest, why))
	}
	for _, h := range asked.HTTP {
		out = append(out, fmt.Sprintf("http host %s: %s", h.Host, why))
	}
	for _, s := range asked.Secrets {
		out = append(out, fmt.Sprintf("secret %s: %s", s, why))
	}
	return out
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "none"
	}
	return sha
}

// Approve pins a module's grants to a new hash in the policy file, keeping
// the file's comments and layout, and creates the module's entry if there
// is none.
func Approve(path, stem, sha256 string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("policy %s: %w", path, err)
		}
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	modules := child(doc.Content[0], "modules")
	entry := child(modules, stem)
	hash := child(entry, "sha256")
	hash.Kind, hash.Tag, hash.Value, hash.Style = yaml.ScalarNode, "!!str", sha256, 0
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// child returns the value of key in a mapping node, adding an empty
// mapping for it if absent.
func child(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		*m = yaml.Node{Kind: yaml.MappingNode}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, k, v)
	return v
}
