package abi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// codeName is how Go names a result code.
var codeName = regexp.MustCompile(`^(Ok|Err[A-Z][A-Za-z]*)$`)

// goCodes returns the constants named Ok or Err… of Go files, with their
// values, which must be integer literals: they are the contract.
func goCodes(t *testing.T, files ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !codeName.MatchString(name.Name) {
						continue
					}
					var lit *ast.BasicLit
					if i < len(vs.Values) {
						lit, _ = vs.Values[i].(*ast.BasicLit)
					}
					if lit == nil || lit.Kind != token.INT {
						t.Fatalf("%s: %s is not given as an integer literal", file, name.Name)
					}
					v, err := strconv.ParseInt(lit.Value, 0, 32)
					if err != nil {
						t.Fatal(err)
					}
					out[name.Name] = v
				}
			}
		}
	}
	return out
}

// words splits a name of package abi into its words, in lower case: Ok is
// "ok", ErrTooLong is "too long".
func words(name string) []string {
	var out []string
	for i, r := range strings.TrimPrefix(name, "Err") {
		if unicode.IsUpper(r) || i == 0 {
			out = append(out, "")
		}
		out[len(out)-1] += string(unicode.ToLower(r))
	}
	return out
}

// section returns the text of a file from the match of start to the next
// occurrence of end: the enum, module or table where the codes are.
func section(t *testing.T, path, start, end string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	loc := regexp.MustCompile(start).FindStringIndex(src)
	if loc == nil {
		t.Fatalf("%s has no %s", path, start)
	}
	src = src[loc[0]:]
	if i := strings.Index(src, end); i >= 0 {
		src = src[:i]
	}
	return src
}

// find returns the name and value of each match of re, whose groups are
// called name and value.
func find(t *testing.T, text, re string) map[string]int64 {
	t.Helper()
	r := regexp.MustCompile(re)
	out := map[string]int64{}
	for _, m := range r.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseInt(m[r.SubexpIndex("value")], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		out[m[r.SubexpIndex("name")]] = v
	}
	return out
}

// TestEverySDKNamesEveryCode reads docs/abi.md and each guest SDK's source
// and checks that each names every result code of hostfuncs.go, with the
// same value, under the name its language's conventions give it, and names
// no code that abi does not have. The codes come from hostfuncs.go's
// source, so that a code added there is looked for everywhere.
func TestEverySDKNamesEveryCode(t *testing.T) {
	codes := goCodes(t, "hostfuncs.go")
	if len(codes) < 2 || codes["Ok"] != 0 {
		t.Fatalf("found no result codes in hostfuncs.go: %v", codes)
	}
	sdk := filepath.Join("..", "sdk-guest")
	goFiles, err := filepath.Glob(filepath.Join(sdk, "go", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	goFiles = slices.DeleteFunc(goFiles, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	snake := func(n string) string { return strings.ToUpper(strings.Join(words(n), "_")) }

	for _, tc := range []struct {
		where string
		name  func(abiName string) string
		got   map[string]int64
	}{
		{"docs/abi.md (Result codes)", func(n string) string { return strings.Join(words(n), " ") },
			find(t, section(t, filepath.Join("..", "docs", "abi.md"), `(?m)^## Result codes$`, "\n## "),
				`(?m)^\| (?P<value>\d+) \| (?P<name>[a-z ]+) \|`)},
		{"the Go SDK", func(n string) string { return n }, goCodes(t, goFiles...)},
		{"the C SDK (wasmcp.h)", func(n string) string { return "WASMCP_" + snake(n) },
			find(t, section(t, filepath.Join(sdk, "c", "wasmcp.h"), `enum \{\s+WASMCP_OK\b`, "}"),
				`\b(?P<name>WASMCP_[A-Z_]+) = (?P<value>\d+)`)},
		{"the Rust SDK (mod code)", snake,
			find(t, section(t, filepath.Join(sdk, "rust", "src", "lib.rs"), `pub mod code \{`, "}"),
				`pub const (?P<name>[A-Z_]+): i32 = (?P<value>\d+);`)},
		{"the AssemblyScript SDK (enum Code)", func(n string) string {
			var s string
			for _, w := range words(n) {
				s += strings.ToUpper(w[:1]) + w[1:]
			}
			return s
		}, find(t, section(t, filepath.Join(sdk, "assemblyscript", "assembly", "wasmcp.ts"), `export enum Code \{`, "}"),
			`(?m)^\s*(?P<name>[A-Za-z]+) = (?P<value>\d+),`)},
	} {
		want := map[string]int64{}
		for n, v := range codes {
			want[tc.name(n)] = v
		}
		for n, v := range want {
			switch got, ok := tc.got[n]; {
			case !ok:
				t.Errorf("%s lacks %s (%d)", tc.where, n, v)
			case got != v:
				t.Errorf("%s gives %s the value %d; abi gives it %d", tc.where, n, got, v)
			}
		}
		for n, v := range tc.got {
			if _, ok := want[n]; !ok {
				t.Errorf("%s has a code %s (%d) that abi does not have", tc.where, n, v)
			}
		}
	}
}
