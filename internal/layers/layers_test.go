// Package layers checks that the layer diagram of docs/design.md is true:
// every package imports only packages the diagram puts below it, every
// package of the server is in the diagram, and nothing outside internal/
// is importable but the entry point, the contract, the CLI and what only
// tests, benchmarks and guests use.
package layers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/wasmcp/wasmcp"

// unlayered are the packages outside the diagram: helpers of tests and
// benchmarks, and this one.
var unlayered = []string{"internal/wasmgen", "internal/wattest", "internal/tooltest", "internal/layers"}

// public are the packages that may live outside internal/, beside the
// trees of guests, examples, benchmarks and tests below.
var (
	public      = []string{"host", "abi", "cmd/wasmcp"}
	publicTrees = []string{"sdk-guest/", "tools/", "bench/", "e2e", "conformance/", "deploy/", "attack/"}
)

// diagram reads the package paths of the "Layers" block of docs/design.md,
// top to bottom.
func diagram(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("\n## Layers\n"))
	if !ok {
		t.Fatal(`docs/design.md has no "## Layers" section`)
	}
	_, rest, ok = bytes.Cut(rest, []byte("```\n"))
	block, _, ok2 := bytes.Cut(rest, []byte("```"))
	if !ok || !ok2 {
		t.Fatal("the Layers section has no diagram in a code block")
	}
	var pkgs []string
	sc := bufio.NewScanner(bytes.NewReader(block))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 0 {
			pkgs = append(pkgs, f[0])
		}
	}
	return pkgs
}

type pkg struct {
	ImportPath string
	Imports    []string
}

// packages lists the module's packages with the module packages each
// imports, as go list sees them (test files left out).
func packages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		var own []string
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, rel)
			}
		}
		p.Imports = own
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func inTree(path string, trees []string) bool {
	for _, tr := range trees {
		if strings.HasPrefix(path, tr) || path == strings.TrimSuffix(tr, "/") {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestImportsGoDown(t *testing.T) {
	order := diagram(t)
	rank := map[string]int{}
	for i, p := range order {
		rank[p] = i
	}
	for _, p := range packages(t) {
		if inTree(p.ImportPath, publicTrees) || contains(unlayered, p.ImportPath) {
			continue
		}
		r, ok := rank[p.ImportPath]
		if !ok {
			t.Errorf("%s is not in the layer diagram of docs/design.md: add it where it belongs", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if ri, ok := rank[imp]; !ok && !contains(unlayered, imp) {
				t.Errorf("%s imports %s, which is not in the layer diagram", p.ImportPath, imp)
			} else if ok && ri <= r {
				t.Errorf("%s imports %s, which the layer diagram puts above it", p.ImportPath, imp)
			}
		}
	}
}

func TestOnlyTheEntryPointAndTheContractArePublic(t *testing.T) {
	for _, p := range packages(t) {
		path := p.ImportPath
		if strings.HasPrefix(path, "internal/") || contains(public, path) || inTree(path, publicTrees) {
			continue
		}
		t.Errorf("%s is importable by other modules: move it under internal/, or make it part of the public API on purpose", path)
	}
}
