package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/atomicfile"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/schema"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

func runPack(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	manifestPath := fs.String("manifest", "", "`file` holding the manifest to embed")
	initPath := fs.String("init", "", "`file` whose bytes a reactor's wasmcp_init reads on stdin (a script's bytecode, a package)")
	outPath := fs.String("o", "", "write the packed module to `file` (default: rewrite MODULE.wasm in place)")
	if code, ok := parse(ctx, fs, args, stderr, "[--manifest FILE] [--init FILE] [-o OUT.wasm] MODULE.wasm\n\nChecks the manifest as the server would and embeds it in the module's\n\""+abi.CustomSection+"\" custom section, and embeds the init file in its\n\""+abi.InitSection+"\" section, each replacing any it had. At least one of\n--manifest and --init is needed."); !ok {
		return code
	}
	if fs.NArg() != 1 || (*manifestPath == "" && *initPath == "") {
		fs.Usage()
		return exitUsage
	}
	in := fs.Arg(0)
	if *outPath == "" {
		*outPath = in
	}
	if err := pack(in, *manifestPath, *initPath, *outPath); err != nil {
		fmt.Fprintln(stderr, "wasmcp pack:", err)
		return exitFailure
	}
	for _, f := range []string{*manifestPath, *initPath} {
		if f != "" {
			fmt.Fprintf(stdout, "packed %s into %s\n", f, *outPath)
		}
	}
	return exitOK
}

// pack writes the module in to out with the manifest and the init file
// embedded, each if given.
func pack(in, manifestPath, initPath, out string) error {
	wasm, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	if manifestPath != "" {
		manifest, err := checkedManifest(manifestPath)
		if err != nil {
			return err
		}
		if wasm, err = wasmbin.SetCustomSection(wasm, abi.CustomSection, manifest); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
	}
	if initPath != "" {
		init, err := os.ReadFile(initPath)
		if err != nil {
			return err
		}
		if wasm, err = wasmbin.SetCustomSection(wasm, abi.InitSection, init); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
	}
	if len(wasm) > registry.MaxModuleSize {
		return fmt.Errorf("the packed module would be %d bytes; the server loads modules of at most %d", len(wasm), registry.MaxModuleSize)
	}
	// A server watching the directory never reads a half-written module.
	return atomicfile.Write(out, wasm, 0o644)
}

// checkedManifest reads a manifest, checks it as the server would, and
// returns it compacted.
func checkedManifest(manifestPath string) ([]byte, error) {
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		return nil, err
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", manifestPath, err)
	}
	for _, t := range m.Tools {
		if _, err := schema.Compile(t.InputSchema); err != nil {
			return nil, fmt.Errorf("%s: tool %q: inputSchema: %w", manifestPath, t.Name, err)
		}
		if len(t.OutputSchema) > 0 {
			if _, err := schema.Compile(t.OutputSchema); err != nil {
				return nil, fmt.Errorf("%s: tool %q: outputSchema: %w", manifestPath, t.Name, err)
			}
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}
