package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	sdkguest "github.com/wasmcp/wasmcp/sdk-guest"
)

//go:embed templates
var templates embed.FS

// sdkCopy names SDK files that a new tool folder gets a copy of.
type sdkCopy struct {
	glob string // in sdkguest.Files
	to   string // directory in the new folder
}

// languages maps each --lang to the SDK files its scaffold needs; the
// scaffold's own files are templates/<lang>/.
var languages = map[string][]sdkCopy{
	"go":             {{glob: "go/*.go", to: "guest"}},
	"c":              {{glob: "c/wasmcp.[ch]", to: "."}},
	"assemblyscript": {{glob: "assemblyscript/assembly/wasmcp.ts", to: "assembly"}},
	"python":         {{glob: "python/wasmcp*.py", to: "."}},
	"rust": {
		{glob: "rust/Cargo.toml", to: "wasmcp-guest"},
		{glob: "rust/debian-cargo", to: "wasmcp-guest"},
		{glob: "rust/src/*.rs", to: "wasmcp-guest/src"},
	},
	"js": jsRuntime,
	"ts": jsRuntime,
}

// jsRuntime is what JavaScript and TypeScript tools build on: the script
// that builds the QuickJS runtime, its sources and the SDK's types.
var jsRuntime = []sdkCopy{
	{glob: "js/build-runtime", to: "wasmcp-js"},
	{glob: "js/wasmcp.[jd]*", to: "wasmcp-js"},
	{glob: "js/runtime/*.c", to: "wasmcp-js/runtime"},
}

// newName is the rule for a new tool's name: a valid tool name that is also
// a valid Go module, Rust crate and file name.
var newName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func runNew(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	lang := fs.String("lang", "go", "the tool's language: "+strings.Join(languageNames(), ", "))
	dir := fs.String("dir", ".", "`directory` in which to create the tool's folder")
	if code, ok := parse(ctx, fs, args, stderr, "[--lang LANG] [--dir DIR] NAME\n\nWrites DIR/NAME/: a tool named NAME with its source, manifest, build script\nand a copy of the guest SDK. `cd NAME && ./build` builds it."); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	if !newName.MatchString(name) {
		fmt.Fprintf(stderr, "wasmcp new: %q is not a usable name: use lower-case letters, digits and _ (starting with a letter)\n", name)
		return exitUsage
	}
	if _, ok := languages[*lang]; !ok {
		fmt.Fprintf(stderr, "wasmcp new: no language %q (choose %s)\n", *lang, strings.Join(languageNames(), ", "))
		return exitUsage
	}
	target := filepath.Join(*dir, name)
	if err := scaffold(target, *lang, name); err != nil {
		fmt.Fprintln(stderr, "wasmcp new:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "created %s (%s); next: cd %s && ./build && wasmcp call --tools . %s '{\"name\":\"Ada\"}'\n", target, *lang, target, name)
	return exitOK
}

func languageNames() []string {
	names := make([]string, 0, len(languages))
	for l := range languages {
		names = append(names, l)
	}
	sort.Strings(names)
	return names
}

// scaffold writes the new folder. It refuses to touch an existing path, so
// it never overwrites an author's work.
func scaffold(target, lang, name string) error {
	if _, err := os.Lstat(target); err == nil {
		return fmt.Errorf("%s already exists", target)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	root := "templates/" + lang
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		if rel == "manifest.json" {
			// A sidecar manifest is named after its module.
			rel = name + ".manifest.json"
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		tmpl, err := template.New(rel).Delims("{{", "}}").Parse(string(src))
		if err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		var out strings.Builder
		if err := tmpl.Execute(&out, struct{ Name string }{name}); err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		return writeScaffoldFile(filepath.Join(target, filepath.FromSlash(rel)), []byte(out.String()))
	})
	if err != nil {
		return err
	}
	for _, c := range languages[lang] {
		matches, err := fs.Glob(sdkguest.Files, c.glob)
		if err != nil {
			return err
		}
		for _, m := range matches {
			if strings.HasSuffix(m, "_test.go") {
				continue
			}
			data, err := sdkguest.Files.ReadFile(m)
			if err != nil {
				return err
			}
			if err := writeScaffoldFile(filepath.Join(target, c.to, path.Base(m)), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeScaffoldFile writes one file of a new folder; its build scripts are
// executable.
func writeScaffoldFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if b := filepath.Base(p); b == "build" || b == "build-runtime" {
		mode = 0o755
	}
	return os.WriteFile(p, data, mode)
}
