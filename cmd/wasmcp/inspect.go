package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// inspection is `wasmcp inspect`'s output.
type inspection struct {
	File     string          `json:"file"`
	SHA256   string          `json:"sha256"`
	Size     int             `json:"size"`
	Imports  []string        `json:"imports"`
	Exports  []string        `json:"exports"`
	Memory   *wasmbin.Memory `json:"memory,omitempty"`
	Custom   []string        `json:"customSections"`
	Manifest *abi.Manifest   `json:"manifest,omitempty"`
	From     string          `json:"manifestFrom,omitempty"`
	Problems []string        `json:"problems"`
}

var kindNames = map[byte]string{wasmbin.KindFunc: "func", wasmbin.KindTable: "table", wasmbin.KindMemory: "memory", wasmbin.KindGlobal: "global", wasmbin.KindTag: "tag"}

func runInspect(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if code, ok := parse(ctx, fs, args, stderr, "[flags] MODULE.wasm"); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	path := fs.Arg(0)
	wasm, err := registry.ReadModule(path)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp inspect:", err)
		return exitFailure
	}
	parsed, err := wasmbin.Parse(wasm)
	if err != nil {
		fmt.Fprintf(stderr, "wasmcp inspect: %s: %v\n", path, err)
		return exitFailure
	}
	sum := sha256.Sum256(wasm)
	in := inspection{File: path, SHA256: hex.EncodeToString(sum[:]), Size: len(wasm), Imports: []string{}, Exports: []string{}, Custom: []string{}, Problems: []string{}}
	for _, imp := range parsed.Imports {
		in.Imports = append(in.Imports, fmt.Sprintf("%s %s.%s", kindNames[imp.Kind], imp.Module, imp.Name))
	}
	for _, e := range parsed.Exports {
		in.Exports = append(in.Exports, fmt.Sprintf("%s %s", kindNames[e.Kind], e.Name))
	}
	if len(parsed.Memories) > 0 {
		in.Memory = &parsed.Memories[0]
	}
	for _, c := range parsed.Custom {
		in.Custom = append(in.Custom, fmt.Sprintf("%s (%d bytes)", c.Name, len(c.Payload)))
	}

	// Load the module as the server would, in a directory of its own view,
	// to report exactly the problems the server would log.
	engine, err := sandbox.NewEngine(ctx, sandbox.Config{})
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp inspect:", err)
		return exitUnhandled
	}
	defer engine.Close(ctx)
	m, _, err := registry.LoadFile(path, registry.LoadOptions{Engine: engine, Ceilings: sandbox.Limits{Timeout: 1 << 62, Memory: 1 << 62, Output: 1 << 62}})
	if err != nil {
		in.Problems = append(in.Problems, err.Error())
	} else {
		in.Manifest, in.From = m.Manifest, m.ManifestFrom
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(in)
	} else {
		fmt.Fprintf(stdout, "file:     %s (%d bytes)\nsha256:   %s\n", in.File, in.Size, in.SHA256)
		if in.Memory != nil {
			fmt.Fprintf(stdout, "memory:   %d pages minimum (%s)\n", in.Memory.MinPages, abi.Size(in.Memory.MinPages*65536))
		}
		printList(stdout, "imports", in.Imports)
		printList(stdout, "exports", in.Exports)
		printList(stdout, "custom sections", in.Custom)
		if in.Manifest != nil {
			fmt.Fprintf(stdout, "manifest (%s):\n", filepath.Base(in.From))
			b, _ := json.MarshalIndent(in.Manifest, "  ", "  ")
			fmt.Fprintf(stdout, "  %s\n", b)
		}
		printList(stdout, "problems", in.Problems)
	}
	if len(in.Problems) > 0 {
		return exitFailure
	}
	return exitOK
}

func printList(w io.Writer, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(w, "  %s\n", it)
	}
}
