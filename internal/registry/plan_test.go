package registry

import (
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/policy"
)

// Each rule of plan, on its own. The modules are stand-ins: plan reads
// only their paths, keys and tools.

func fake(path, key string, tools ...string) *Module {
	m := &Module{Path: path, SHA256: strings.Repeat(key[:1], 64), key: key, done: make(chan struct{})}
	for _, name := range tools {
		m.tools = append(m.tools, &Tool{Module: m, Spec: abi.Tool{Name: name}})
	}
	return m
}

func catalogOf(t *testing.T, pol policyRead, modules ...*Module) *Catalog {
	t.Helper()
	files := make([]loaded, len(modules))
	for i, m := range modules {
		files[i] = loaded{path: m.Path, m: m}
	}
	cat, _ := plan(nil, files, pol, slog.New(slog.DiscardHandler))
	return cat
}

func ok(m *Module) loaded { return loaded{path: m.Path, m: m} }

func broken(path string) loaded { return loaded{path: path, err: errors.New("bad magic")} }

func run(prev *Catalog, pol policyRead, files ...loaded) (*Catalog, []*Module) {
	return plan(prev, files, pol, slog.New(slog.DiscardHandler))
}

func served(c *Catalog, tool string) *Module {
	if t, ok := c.Lookup(tool); ok {
		return t.Module
	}
	return nil
}

func TestPlanKeepsAnUnchangedModule(t *testing.T) {
	a := fake("a.wasm", "k1", "x")
	prev := catalogOf(t, policyRead{}, a)
	next, unused := run(prev, policyRead{}, ok(fake("a.wasm", "k1", "x")))
	if served(next, "x") != a || len(unused) != 0 {
		t.Fatalf("an unchanged module was not kept as it was: %v, unused %v", served(next, "x"), unused)
	}
}

func TestPlanReplacesAModuleLoadedWithOtherInputs(t *testing.T) {
	a := fake("a.wasm", "k1", "x")
	prev := catalogOf(t, policyRead{}, a)
	a2 := fake("a.wasm", "k1", "x")
	a2.inputs.ceilings.Timeout = 1
	next, unused := run(prev, policyRead{}, ok(a2))
	if served(next, "x") != a2 || len(unused) != 1 || unused[0] != a {
		t.Fatalf("a module loaded with lower ceilings was not taken: %v, unused %v", served(next, "x") == a2, unused)
	}
}

func TestPlanReplacesAChangedModule(t *testing.T) {
	a := fake("a.wasm", "k1", "x")
	prev := catalogOf(t, policyRead{}, a)
	b := fake("a.wasm", "k2", "x")
	next, unused := run(prev, policyRead{}, ok(b))
	if served(next, "x") != b || !slices.Equal(unused, []*Module{a}) {
		t.Fatalf("a changed module: serving %v, unused %v", served(next, "x"), unused)
	}
}

func TestPlanKeepsThePreviousVersionOfABrokenUpdate(t *testing.T) {
	a := fake("a.wasm", "k1", "x")
	prev := catalogOf(t, policyRead{}, a)
	next, unused := run(prev, policyRead{}, broken("a.wasm"))
	if served(next, "x") != a || len(unused) != 0 {
		t.Fatalf("a broken update: serving %v, unused %v; want the previous version", served(next, "x"), unused)
	}
	if len(next.Errors) != 1 || !strings.Contains(next.Errors[0].Error(), "previous one (sha256 kkkkkkkkkkkk) keeps serving: bad magic") {
		t.Fatalf("errors %v", next.Errors)
	}
}

func TestPlanSkipsANewFileThatDoesNotLoad(t *testing.T) {
	next, _ := run(nil, policyRead{}, broken("a.wasm"), ok(fake("b.wasm", "k", "y")))
	if len(next.Modules) != 1 || len(next.Errors) != 1 || next.Errors[0].Path != "a.wasm" {
		t.Fatalf("modules %v, errors %v", next.Modules, next.Errors)
	}
}

func TestPlanRemovesAModuleThatIsGone(t *testing.T) {
	a, b := fake("a.wasm", "k1", "x"), fake("b.wasm", "k2", "y")
	prev := catalogOf(t, policyRead{}, a, b)
	next, unused := run(prev, policyRead{}, ok(fake("a.wasm", "k1", "x")))
	if served(next, "y") != nil || !slices.Equal(unused, []*Module{b}) {
		t.Fatalf("a removed module: still serving %v, unused %v", served(next, "y"), unused)
	}
}

func TestPlanAddsANewModule(t *testing.T) {
	prev := catalogOf(t, policyRead{}, fake("a.wasm", "k1", "x"))
	b := fake("b.wasm", "k2", "y")
	next, unused := run(prev, policyRead{}, ok(fake("a.wasm", "k1", "x")), ok(b))
	if served(next, "y") != b || len(unused) != 0 {
		t.Fatalf("a new module: serving %v, unused %v", served(next, "y"), unused)
	}
}

func TestPlanGivesADuplicateNameToTheFirstFile(t *testing.T) {
	a, b := fake("a.wasm", "k1", "x"), fake("b.wasm", "k2", "x", "y")
	next, _ := run(nil, policyRead{}, ok(b), ok(a)) // in any order
	if served(next, "x") != a || served(next, "y") != b {
		t.Fatalf("x from %v, y from %v; want a and b", served(next, "x"), served(next, "y"))
	}
	if len(next.Errors) != 1 || next.Errors[0].Path != "b.wasm" || !strings.Contains(next.Errors[0].Error(), "already provided by a.wasm") {
		t.Fatalf("errors %v", next.Errors)
	}
	if names := []string{next.Tools[0].Spec.Name, next.Tools[1].Spec.Name}; !slices.Equal(names, []string{"x", "y"}) {
		t.Fatalf("tools %q; want them sorted by name", names)
	}
}

func TestPlanKeepsAnUnchangedPolicy(t *testing.T) {
	p := &policy.Policy{}
	prev := catalogOf(t, policyRead{path: "p.yaml", p: p, hash: "h1"})
	next, _ := run(prev, policyRead{path: "p.yaml", p: &policy.Policy{}, hash: "h1"})
	if next.Policy != p {
		t.Fatal("an unchanged policy was replaced: instances prepared under it would be thrown away")
	}
}

func TestPlanTakesAChangedPolicy(t *testing.T) {
	prev := catalogOf(t, policyRead{path: "p.yaml", p: &policy.Policy{}, hash: "h1"})
	q := &policy.Policy{}
	next, _ := run(prev, policyRead{path: "p.yaml", p: q, hash: "h2"})
	if next.Policy != q || !(Change{Old: prev, New: next}).PolicyChanged() {
		t.Fatal("a changed policy was not taken")
	}
}

func TestPlanKeepsThePreviousPolicyWhenTheNewOneIsBroken(t *testing.T) {
	p := &policy.Policy{}
	prev := catalogOf(t, policyRead{path: "p.yaml", p: p, hash: "h1"})
	next, _ := run(prev, policyRead{path: "p.yaml", err: errors.New("line 3: unknown key")})
	if next.Policy != p {
		t.Fatal("a broken policy replaced the one granting")
	}
	if len(next.Errors) != 1 || next.Errors[0].Path != "p.yaml" || !strings.Contains(next.Errors[0].Error(), "previous one keeps granting: line 3") {
		t.Fatalf("errors %v", next.Errors)
	}
	// Fixed again, with the content it had: the policy is the same one.
	again, _ := run(next, policyRead{path: "p.yaml", p: &policy.Policy{}, hash: "h1"})
	if again.Policy != p || len(again.Errors) != 0 {
		t.Fatalf("the policy back as it was: %v, errors %v", again.Policy == p, again.Errors)
	}
}

// signedAs is a loaded file of m whose only file, content, has a
// signature by k, or none when k is nil.
func signedAs(t testing.TB, m *Module, content string, k *key) loaded {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.Base(m.Path))
	writeFile(t, path, []byte(content))
	if k != nil {
		k.sign(t, path)
	}
	f, _ := readSignature(path, []byte(content))
	return loaded{path: m.Path, m: m, sigs: &signatures{files: []signedFile{f}}, stamp: stamp{ok: true}}
}

// The keep-previous rule under a policy that requires signatures: the
// previous version keeps serving only if its own signatures verify under
// the policy now in force.
func TestPlanKeepsAPreviousVersionOnlyIfThePolicyAllowsIt(t *testing.T) {
	release := newKey(t)
	requires := requiring(t, release)
	t.Run("signed, then a broken update", func(t *testing.T) {
		a := fake("a.wasm", "k1", "x")
		prev, _ := run(nil, requires, signedAs(t, a, "v1", &release))
		next, unused := run(prev, requires, broken("a.wasm"))
		if served(next, "x") != a || len(unused) != 0 {
			t.Fatalf("a signed version does not keep serving through a broken update: %s", errorsOf(next))
		}
	})
	t.Run("signed, then an unsigned update", func(t *testing.T) {
		a := fake("a.wasm", "k1", "x")
		prev, _ := run(nil, requires, signedAs(t, a, "v1", &release))
		next, _ := run(prev, requires, signedAs(t, fake("a.wasm", "k2", "x"), "v2", nil))
		if served(next, "x") != a || !strings.Contains(errorsOf(next), "previous one (sha256 kkkkkkkkkkkk) keeps serving: no signature by key \"release\" over a.wasm (a.wasm.minisig is missing)") {
			t.Fatalf("an unsigned update took the place of a signed version: serving %v, %s", served(next, "x"), errorsOf(next))
		}
	})
	t.Run("unsigned, then the policy requires a signature and the update is broken", func(t *testing.T) {
		a := fake("a.wasm", "k1", "x")
		prev, _ := run(nil, policyRead{}, signedAs(t, a, "v1", nil))
		next, unused := run(prev, requires, broken("a.wasm"))
		if served(next, "x") != nil || !slices.Equal(unused, []*Module{a}) {
			t.Fatalf("an unsigned version keeps serving under a policy that requires a signature: %s", errorsOf(next))
		}
		if want := "bad magic; and the previous version (sha256 kkkkkkkkkkkk) may not serve either: no signature by key \"release\" over a.wasm"; !strings.Contains(errorsOf(next), want) {
			t.Fatalf("errors %s; want %q", errorsOf(next), want)
		}
	})
	t.Run("unsigned and unchanged, then the policy requires a signature", func(t *testing.T) {
		a := fake("a.wasm", "k1", "x")
		file := signedAs(t, a, "v1", nil)
		prev, _ := run(nil, policyRead{}, file)
		file.reused = true
		next, unused := run(prev, requires, file)
		if served(next, "x") != nil || !slices.Equal(unused, []*Module{a}) {
			t.Fatalf("an unsigned module keeps serving under a policy that requires a signature: %s", errorsOf(next))
		}
		if strings.Contains(errorsOf(next), "previous version") {
			t.Fatalf("errors %s speak of a previous version of a module that did not change", errorsOf(next))
		}
		// Signed, it serves again.
		again, _ := run(next, requires, signedAs(t, fake("a.wasm", "k1", "x"), "v1", &release))
		if served(again, "x") == nil {
			t.Fatalf("the module, signed, does not serve: %s", errorsOf(again))
		}
	})
	t.Run("signed, then its signature is replaced by another key's", func(t *testing.T) {
		a := fake("a.wasm", "k1", "x")
		prev, _ := run(nil, requires, signedAs(t, a, "v1", &release))
		other := newKey(t)
		next, _ := run(prev, requires, signedAs(t, fake("a.wasm", "k1", "x"), "v1", &other))
		if served(next, "x") != a {
			t.Fatalf("the version whose signature verified does not keep serving: %s", errorsOf(next))
		}
		// The policy then names the other key: the previous signature no
		// longer verifies, and the one beside the file now does.
		byOther := requiring(t, other)
		file := next.loads["a.wasm"]
		file.reused = true
		last, _ := run(next, byOther, file)
		if served(last, "x") != a || len(last.Errors) != 0 {
			t.Fatalf("the module signed by the key the policy names does not serve: %s", errorsOf(last))
		}
	})
}
