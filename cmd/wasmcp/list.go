package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// listing is `wasmcp list --json`'s output and the server's /status.
type listing struct {
	Tools   []listedTool   `json:"tools"`
	Modules []listedModule `json:"modules"`
	Errors  []listedError  `json:"errors"`
}

type listedTool struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Module      string     `json:"module"`
	Manifest    string     `json:"manifest"`
	Output      string     `json:"output"`
	Limits      abi.Limits `json:"limits"`
	Compiled    *bool      `json:"compiled,omitempty"`
}

type listedModule struct {
	File     string   `json:"file"`
	SHA256   string   `json:"sha256"`
	Manifest string   `json:"manifest"`
	Tools    []string `json:"tools"`
}

type listedError struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// newListing describes a catalog. compileErr, when not nil, holds each
// compiled module's result, keyed by path.
func newListing(cat *registry.Catalog, compileErr map[string]error) listing {
	out := listing{Tools: []listedTool{}, Modules: []listedModule{}, Errors: []listedError{}}
	for _, m := range cat.Modules {
		lm := listedModule{File: m.Path, SHA256: m.SHA256, Manifest: m.ManifestFrom, Tools: []string{}}
		for _, t := range m.Manifest.Tools {
			lm.Tools = append(lm.Tools, t.Name)
		}
		out.Modules = append(out.Modules, lm)
		if err := compileErr[m.Path]; err != nil {
			out.Errors = append(out.Errors, listedError{File: m.Path, Error: "does not compile: " + err.Error()})
		}
	}
	for _, t := range cat.Tools {
		lt := listedTool{
			Name:        t.Spec.Name,
			Description: t.Spec.Description,
			Module:      t.Module.Path,
			Manifest:    t.Module.ManifestFrom,
			Output:      string(t.Spec.Mode()),
			Limits: abi.Limits{
				Timeout: abi.Duration(t.Module.Limits.Timeout),
				Memory:  abi.Size(t.Module.Limits.Memory),
				Output:  abi.Size(t.Module.Limits.Output),
			},
		}
		if compileErr != nil {
			ok := compileErr[t.Module.Path] == nil
			lt.Compiled = &ok
		}
		out.Tools = append(out.Tools, lt)
	}
	for _, e := range cat.Errors {
		out.Errors = append(out.Errors, listedError{File: e.Path, Error: e.Err.Error()})
	}
	return out
}

func runList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	hf.logLevel = "error"
	asJSON := fs.Bool("json", false, "print JSON")
	compile := fs.Bool("compile", true, "also compile each module, reporting modules that do not compile")
	if code, ok := parse(fs, args, stderr, "[flags]"); !ok {
		return code
	}
	hf.prewarm = 0 // one-shot commands make no later calls to prepare for
	l, err := hf.load(ctx, stderr, nil)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp list:", err)
		return exitFailure
	}
	defer l.close()
	cat := l.host.Catalog()
	var compileErr map[string]error
	if *compile {
		compileErr = map[string]error{}
		for _, m := range cat.Modules {
			if _, err := m.Compiled(ctx); err != nil {
				compileErr[m.Path] = err
			}
		}
	}
	out := newListing(cat, compileErr)

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tMODULE\tOUTPUT\tTIMEOUT\tMEMORY\tDESCRIPTION")
		for _, t := range out.Tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Module, t.Output, t.Limits.Timeout.String(), t.Limits.Memory, firstLine(t.Description))
		}
		tw.Flush()
		if len(out.Errors) > 0 {
			fmt.Fprintln(stdout, "\nNOT LOADED")
			for _, e := range out.Errors {
				fmt.Fprintf(stdout, "%s: %s\n", e.File, e.Error)
			}
		}
	}
	if len(out.Errors) > 0 {
		return exitFailure
	}
	return exitOK
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
