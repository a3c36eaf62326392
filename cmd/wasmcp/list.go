package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/wasmcp/wasmcp/host"
)

func runList(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	hf.logLevel = "error"
	asJSON := fs.Bool("json", false, "print JSON")
	compile := fs.Bool("compile", true, "also compile each module, reporting modules that do not compile")
	if code, ok := parse(ctx, fs, args, stderr, "[flags]"); !ok {
		return code
	}
	hf.prewarm = 0 // one-shot commands make no later calls to prepare for
	srv, log, err := hf.open(ctx, stderr, nil)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp list:", err)
		return exitFailure
	}
	defer closeServer(srv, log)
	out := srv.Status()
	if *compile {
		out = srv.CompileAll(ctx)
	}

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
		listServed(stdout, out)
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

// listServed prints the resources and prompts of each module, when any
// module has some.
func listServed(w io.Writer, out host.Status) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := false
	for _, m := range out.Modules {
		for _, item := range [...]struct {
			kind  string
			names []string
		}{{"resource", m.Resources}, {"prompt", m.Prompts}} {
			for _, name := range item.names {
				if !head {
					fmt.Fprintln(tw, "\nRESOURCE OR PROMPT\tKIND\tMODULE")
					head = true
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", name, item.kind, m.File)
			}
		}
	}
	tw.Flush()
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
