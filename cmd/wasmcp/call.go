package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

func runCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	hf.logLevel = "warn"
	if code, ok := parse(ctx, fs, args, stderr, "[flags] TOOL [ARGUMENTS_JSON | -]\n\nRuns TOOL once, as tools/call would, and prints the MCP result as JSON.\nARGUMENTS_JSON defaults to {}; - reads it from stdin. Exits 1 when the result has isError."); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	var argsJSON []byte
	switch a := fs.Arg(1); a {
	case "":
	case "-":
		b, err := io.ReadAll(io.LimitReader(stdin, host.MaxMessageSize+1))
		if err != nil {
			fmt.Fprintln(stderr, "wasmcp call: reading arguments:", err)
			return exitFailure
		}
		if len(b) > host.MaxMessageSize {
			fmt.Fprintf(stderr, "wasmcp call: the arguments exceed %d bytes\n", host.MaxMessageSize)
			return exitUsage
		}
		argsJSON = b
	default:
		argsJSON = []byte(a)
	}
	if len(argsJSON) > 0 && !json.Valid(argsJSON) {
		fmt.Fprintln(stderr, "wasmcp call: the arguments are not valid JSON")
		return exitUsage
	}

	hf.prewarm = 0 // one-shot commands make no later calls to prepare for
	srv, log, err := hf.open(ctx, stderr, nil)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp call:", err)
		return exitFailure
	}
	defer closeServer(srv, log)
	res, err := srv.Call(ctx, name, argsJSON, stderrReporter{stderr})
	if errors.Is(err, host.ErrUnknownTool) {
		var names []string
		for _, t := range srv.Status().Tools {
			names = append(names, t.Name)
		}
		fmt.Fprintf(stderr, "wasmcp call: no tool %q in %s (tools: %s)\n", name, hf.tools, strings.Join(names, ", "))
		return exitFailure
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp call:", err)
		return exitFailure
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		fmt.Fprintln(stderr, "wasmcp call:", err)
		return exitUnhandled
	}
	if res.IsError {
		return exitFailure
	}
	return exitOK
}

// stderrReporter shows a tool's log and progress reports to the author
// running `wasmcp call`, on stderr so that stdout stays the result.
type stderrReporter struct{ w io.Writer }

func (r stderrReporter) Log(level int32, msg string) {
	fmt.Fprintf(r.w, "[%s] %s\n", abi.LevelNames[level], msg)
}

func (r stderrReporter) Progress(progress, total float64, msg string) {
	if math.IsNaN(total) {
		fmt.Fprintf(r.w, "[progress %g] %s\n", progress, msg)
		return
	}
	fmt.Fprintf(r.w, "[progress %g/%g] %s\n", progress, total, msg)
}
