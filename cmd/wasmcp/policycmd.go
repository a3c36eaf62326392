package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/wasmcp/wasmcp/internal/policy"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

func runPolicy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] != "show" && args[0] != "approve") {
		if len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help" {
			fmt.Fprintf(stderr, "wasmcp policy: flag %s comes after show or approve\n", args[0])
		}
		fmt.Fprintln(stderr, "Usage: wasmcp policy show|approve [flags]\n\n  show     what each tool asks for, what the policy grants it, and what it lacks\n  approve  pin a module's grants to its current content (sha256)")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK
		}
		return exitUsage
	}
	fs := flag.NewFlagSet("policy "+args[0], flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	hf.logLevel = "error"
	synopsis := "--policy FILE [--tools DIR] [TOOL...]"
	if args[0] == "approve" {
		synopsis = "--policy FILE [--tools DIR] MODULE...\n\nWrites each module's current sha256 into the policy, so its grants apply to\nthis version. Review what it asks for (wasmcp policy show) first."
	}
	if code, ok := parse(ctx, fs, args[1:], stderr, synopsis); !ok {
		return code
	}
	if hf.policyFile == "" {
		fmt.Fprintf(stderr, "wasmcp policy %s: --policy FILE is required\n", args[0])
		return exitUsage
	}
	if args[0] == "approve" {
		return approve(ctx, &hf, fs.Args(), stdout, stderr)
	}
	return show(ctx, &hf, fs.Args(), stdout, stderr)
}

func approve(ctx context.Context, hf *hostFlags, stems []string, stdout, stderr io.Writer) int {
	if len(stems) == 0 {
		fmt.Fprintln(stderr, "wasmcp policy approve: name at least one module")
		return exitUsage
	}
	// The policy may not exist or may pin other versions: load the tools
	// without it.
	file := hf.policyFile
	hf.policyFile = ""
	cat, done, err := hf.catalog(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp policy approve:", err)
		return exitFailure
	}
	defer done()
	for _, stem := range stems {
		found := false
		for _, m := range cat.Modules {
			if m.Stem != stem {
				continue
			}
			found = true
			if err := policy.Approve(file, stem, m.SHA256); err != nil {
				fmt.Fprintln(stderr, "wasmcp policy approve:", err)
				return exitFailure
			}
			fmt.Fprintf(stdout, "approved %s (sha256 %s) in %s\n", stem, m.SHA256, file)
		}
		if !found {
			fmt.Fprintf(stderr, "wasmcp policy approve: no module %q in %s\n", stem, hf.tools)
			return exitFailure
		}
	}
	return exitOK
}

func show(ctx context.Context, hf *hostFlags, tools []string, stdout, stderr io.Writer) int {
	pol, err := policy.Load(hf.policyFile)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp policy show:", err)
		return exitFailure
	}
	hf.policyFile = "" // read above; the tools load without it
	cat, done, err := hf.catalog(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp policy show:", err)
		return exitFailure
	}
	defer done()
	for _, t := range cat.Tools {
		if len(tools) > 0 && !slices.Contains(tools, t.Spec.Name) {
			continue
		}
		asked := t.Module.Manifest.Permissions
		eff := pol.For(t.Module.Stem, t.Module.SHA256, t.Spec.Name, asked, os.LookupEnv)
		fmt.Fprintf(stdout, "%s (module %s, sha256 %s)\n", t.Spec.Name, t.Module.Stem, t.Module.SHA256[:12])
		if keys := pol.Signers(t.Module.Stem); len(keys) > 0 {
			if err := cat.CheckSignatures(t.Module, pol); err != nil {
				fmt.Fprintf(stdout, "  NOT SIGNED   %v\n", err)
			} else {
				fmt.Fprintf(stdout, "  %-12s verified (it needs one by %s)\n", "signature", policy.KeyNames(keys))
			}
		}
		if asked == nil {
			fmt.Fprintln(stdout, "  asks for nothing: no files, environment, network or secrets")
			continue
		}
		var env []string
		for k := range eff.Env {
			env = append(env, k)
		}
		sort.Strings(env)
		line(stdout, "environment", env)
		var dirs []string
		for _, m := range eff.Mounts {
			mode := "read-only"
			if m.Write {
				mode = "read-write"
			}
			dirs = append(dirs, fmt.Sprintf("%s = %s (%s)", m.Guest, m.Host, mode))
		}
		line(stdout, "directories", dirs)
		var hosts []string
		for _, r := range eff.HTTP.Rules {
			h := r.Host + " " + strings.Join(r.Methods, ",")
			if r.AllowPrivate {
				h += " (private addresses allowed)"
			}
			hosts = append(hosts, h)
		}
		line(stdout, "http", hosts)
		var secrets []string
		for name, s := range eff.HTTP.Secrets {
			// The value is never printed, only where it goes.
			secrets = append(secrets, fmt.Sprintf("%s as %s to %s", name, s.Header, strings.Join(s.Hosts, ", ")))
		}
		sort.Strings(secrets)
		line(stdout, "secrets", secrets)
		for _, m := range eff.Missing {
			fmt.Fprintf(stdout, "  NOT GRANTED  %s\n", m)
		}
	}
	return exitOK
}

func line(w io.Writer, what string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "  %-12s %s\n", what, strings.Join(items, "; "))
}

// catalog loads the tool directory as the server would, to read what its
// tools ask for, without serving them.
func (f *hostFlags) catalog(ctx context.Context) (*registry.Catalog, func(), error) {
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	engine, err := sandbox.NewEngine(ctx, sandbox.Config{Engine: f.engine})
	if err != nil {
		return nil, nil, err
	}
	reg, err := registry.Open(registry.Options{Dir: f.tools, PolicyFile: f.policyFile, LoadOptions: registry.LoadOptions{
		Engine:   engine,
		Ceilings: sandbox.Limits{Timeout: f.timeout, Memory: int64(f.memory), Output: int64(f.output)},
	}})
	if err != nil {
		engine.Close(ctx)
		return nil, nil, err
	}
	return reg.Current(), func() { engine.Close(context.Background()) }, nil
}
