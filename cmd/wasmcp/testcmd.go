package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
)

func runTest(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	hf.logLevel = "warn"
	if code, ok := parse(ctx, fs, args, stderr, "[flags] [TOOL...]\n\nRuns the examples each tool's manifest declares (\"examples\": arguments and the\nanswer they must get) in the sandbox, exactly as tools/call would, and reports\neach. Exits 1 if one fails, or if the tools declare none."); !ok {
		return code
	}
	hf.prewarm = 0 // every call is run once, in turn
	srv, log, err := hf.open(ctx, stderr, nil)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp test:", err)
		return exitFailure
	}
	defer closeServer(srv, log)
	tools := fs.Args()
	if len(tools) == 0 {
		for _, t := range srv.Status().Tools {
			tools = append(tools, t.Name)
		}
	}
	passed, failed := 0, 0
	for _, tool := range tools {
		examples, ok := srv.Examples(tool)
		if !ok {
			fmt.Fprintf(stderr, "wasmcp test: no tool %q in %s\n", tool, hf.tools)
			return exitFailure
		}
		for i, ex := range examples {
			name := ex.Name
			if name == "" {
				name = fmt.Sprintf("example %d", i+1)
			}
			res, err := srv.Call(ctx, tool, ex.Arguments, nil)
			if err != nil {
				fmt.Fprintln(stderr, "wasmcp test:", err)
				return exitFailure
			}
			if why := checkExample(ex, res); why != "" {
				failed++
				fmt.Fprintf(stdout, "FAIL %s: %s: %s\n", tool, name, why)
				continue
			}
			passed++
			fmt.Fprintf(stdout, "ok   %s: %s\n", tool, name)
		}
	}
	if passed+failed == 0 {
		fmt.Fprintf(stderr, "wasmcp test: no examples to run in %s: add \"examples\" to a tool's manifest (docs/abi.md, Examples)\n", hf.tools)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return exitFailure
	}
	return exitOK
}

// checkExample says how res fails ex, or "" if it does not.
func checkExample(ex abi.Example, res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	text := strings.Join(parts, "\n")
	switch {
	case res.IsError && !ex.IsError:
		return fmt.Sprintf("the call failed: %s", text)
	case !res.IsError && ex.IsError:
		return fmt.Sprintf("the call succeeded with %q; the example wants a tool error", text)
	case ex.Result != nil && text != *ex.Result:
		return fmt.Sprintf("answered %q; the example wants %q", text, *ex.Result)
	case ex.Contains != "" && !strings.Contains(text, ex.Contains):
		return fmt.Sprintf("answered %q, without %q", text, ex.Contains)
	}
	return ""
}
