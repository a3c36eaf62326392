package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/schema"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

func runPack(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pack", flag.ContinueOnError)
	manifestPath := fs.String("manifest", "", "`file` holding the manifest to embed (required)")
	outPath := fs.String("o", "", "write the packed module to `file` (default: rewrite MODULE.wasm in place)")
	if code, ok := parse(fs, args, stderr, "--manifest FILE [-o OUT.wasm] MODULE.wasm\n\nChecks the manifest as the server would and embeds it in the module's\n\""+abi.CustomSection+"\" custom section, replacing any it had."); !ok {
		return code
	}
	if fs.NArg() != 1 || *manifestPath == "" {
		fs.Usage()
		return exitUsage
	}
	in := fs.Arg(0)
	if *outPath == "" {
		*outPath = in
	}
	if err := pack(in, *manifestPath, *outPath); err != nil {
		fmt.Fprintln(stderr, "wasmcp pack:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "packed %s into %s\n", *manifestPath, *outPath)
	return exitOK
}

func pack(in, manifestPath, out string) error {
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		return err
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	for _, t := range m.Tools {
		if _, err := schema.Compile(t.InputSchema); err != nil {
			return fmt.Errorf("%s: tool %q: inputSchema: %w", manifestPath, t.Name, err)
		}
		if len(t.OutputSchema) > 0 {
			if _, err := schema.Compile(t.OutputSchema); err != nil {
				return fmt.Errorf("%s: tool %q: outputSchema: %w", manifestPath, t.Name, err)
			}
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return err
	}
	wasm, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	packed, err := wasmbin.SetCustomSection(wasm, abi.CustomSection, compact.Bytes())
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	// Write beside the target and rename, so a server watching the
	// directory never reads a half-written module.
	tmp, err := os.CreateTemp(filepath.Dir(out), ".pack-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(packed); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
