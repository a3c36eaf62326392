// Command wasmcp serves tools compiled to WebAssembly over the Model Context
// Protocol, and helps authors build, inspect and try them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// Exit codes.
const (
	exitOK        = 0
	exitFailure   = 1 // the command ran and failed (or the tool returned isError)
	exitUsage     = 2 // bad flags or arguments
	exitUnhandled = 3 // an internal error
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// commands are the CLI's commands, in the order the usage lists them. They
// are set in init, as completion reads the list it is in.
var commands []command

func init() {
	commands = []command{
		{"serve", "serve a directory of tools over MCP (stdio, or HTTP with --http)", runServe},
		{"list", "list the tools of a directory and the files that failed to load", runList},
		{"call", "run one tool once with JSON arguments and print its result", runCall},
		{"test", "run the examples tools' manifests declare, in the sandbox, and report each", runTest},
		{"push", "push a tool (module, sidecar manifest, signatures) to an OCI registry", runPush},
		{"pull", "pull a tool from an OCI registry into a directory", runPull},
		{"inspect", "show a module's manifest, imports, exports and memory", runInspect},
		{"pack", "embed a manifest into a module as a custom section", runPack},
		{"new", "create a folder for a new tool, ready to build, in Go, C, Rust, AssemblyScript or Python", runNew},
		{"policy", "show what tools ask for and are granted, or approve a module's new version", runPolicy},
		{"keygen", "write a minisign key pair to sign modules with", runKeygen},
		{"sign", "sign a module and its sidecar manifest with a minisign secret key", runSign},
		{"client-config", "print, or merge into its file, the configuration that makes Claude Desktop, VS Code or Cursor start wasmcp", runClientConfig},
		{"version", "print the version, the revision it was built from, and its Go version (also --version)", runVersion},
		{"completion", "print a shell completion script for bash, zsh or fish", runCompletion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// workerCommand runs a compile worker (sandbox.RunWorker). It is the
// server's own, not the user's, and so is left out of the usage.
const workerCommand = "compile-worker"

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == workerCommand {
		return sandbox.RunWorker(args[1:], stdin, stderr)
	}
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		return runVersion(ctx, args[1:], stdin, stdout, stderr)
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "wasmcp: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// flagsKey is the context key of withFlags.
type flagsKey struct{}

// withFlags is a context under which a command stops at parse, handing
// collect its flags.
func withFlags(ctx context.Context, collect func(*flag.FlagSet)) context.Context {
	return context.WithValue(ctx, flagsKey{}, collect)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: wasmcp <command> [flags] [arguments]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'wasmcp <command> --help' for a command's flags.")
}

// parse parses a command's flags, reporting errors in the usual way, then
// fills the flags the command line left unset from the environment and the
// --config file (config.go). It returns ok=false with the exit code to use
// when the command should stop. Given a context from withFlags, it only
// hands fs over and stops the command: that is how completion learns every
// command's flags from the commands themselves.
func parse(ctx context.Context, fs *flag.FlagSet, args []string, stderr io.Writer, synopsis string) (code int, ok bool) {
	if collect, ok := ctx.Value(flagsKey{}).(func(*flag.FlagSet)); ok {
		collect(fs)
		return exitOK, false
	}
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: wasmcp %s %s\n\nFlags:\n", fs.Name(), synopsis)
		fs.PrintDefaults()
		fmt.Fprint(stderr, configHelp(fs))
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if err := applyConfig(fs, os.LookupEnv); err != nil {
		fmt.Fprintf(stderr, "wasmcp %s: %v\n", fs.Name(), err)
		return exitUsage, false
	}
	return exitOK, true
}
