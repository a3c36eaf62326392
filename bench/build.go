package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// artifacts are the paths of what the bench builds, all under build/bench.
type artifacts struct {
	root     string // the repository
	out      string // build/bench
	wasmcp   string
	nativeGo string
	cacheDir string // wasmcp's compilation cache, filled before any server starts
}

func newArtifacts(root string) *artifacts {
	out := filepath.Join(root, "build", "bench")
	return &artifacts{
		root:     root,
		out:      out,
		wasmcp:   filepath.Join(out, "bin", "wasmcp"),
		nativeGo: filepath.Join(out, "bin", "native-go"),
		cacheDir: filepath.Join(out, "cache"),
	}
}

// toolDir is the directory a wasmcp server serves: its one module.
func (a *artifacts) toolDir(s *server) string { return filepath.Join(a.out, "tools", s.Name) }

func (a *artifacts) run(dir string, argv ...string) error {
	fmt.Fprintf(os.Stderr, "bench: $ %s\n", strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	return nil
}

// build makes what the selected servers need: wasmcp and the modules it
// serves (with scripts/build-tools, and bench/c-guests/build for the C
// guests), the native Go server, and the native TypeScript server's npm
// packages. wasmcp is built with the wasmtime engine when a server uses
// it.
func (a *artifacts) build(sel []*server) error {
	var needWasmcp, needGo, needTS, needWasmtime bool
	var toolNames []string
	for _, s := range sel {
		switch s.Impl {
		case "wasmcp":
			needWasmcp = true
			needWasmtime = needWasmtime || s.Engine == "wasmtime"
			if name, ok := strings.CutPrefix(s.Source, "tools/"); ok && !slices.Contains(toolNames, name) {
				toolNames = append(toolNames, name)
			}
		case "go-sdk":
			needGo = true
		case "ts-sdk":
			needTS = true
		}
	}
	if needWasmcp {
		argv := []string{"go", "build", "-trimpath", "-o", a.wasmcp}
		if needWasmtime {
			argv = append(argv, "-tags", "wasmtime")
		}
		if err := a.run(a.root, append(argv, "./cmd/wasmcp")...); err != nil {
			return err
		}
		modules := filepath.Join(a.out, "modules")
		// scripts/build-tools makes it too, but a run of C guests alone
		// does not call it.
		if err := os.MkdirAll(modules, 0o755); err != nil {
			return err
		}
		if len(toolNames) > 0 {
			args := append([]string{"scripts/build-tools", modules, a.wasmcp}, toolNames...)
			if err := a.run(a.root, args...); err != nil {
				return fmt.Errorf("%w (the guest toolchains come from scripts/setup)", err)
			}
		}
		for _, s := range sel {
			if !s.wasmcp() {
				continue
			}
			module := filepath.Join(modules, filepath.Base(s.Source)+".wasm")
			switch dir, command := strings.CutPrefix(s.Source, goCommand); {
			case command:
				module = filepath.Join(modules, filepath.Base(dir)+"-command.wasm")
				if err := a.buildGoCommand(dir, s.Manifest, module); err != nil {
					return err
				}
			case strings.HasSuffix(s.Source, ".c"):
				if err := a.buildC(s.Source, s.Manifest, module); err != nil {
					return err
				}
			}
			dir := a.toolDir(s)
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := copyFile(module, filepath.Join(dir, s.Tool+".wasm")); err != nil {
				return err
			}
		}
	}
	if needGo {
		if err := a.run(a.root, "go", "build", "-trimpath", "-o", a.nativeGo, "./bench/native-go"); err != nil {
			return err
		}
	}
	if needTS {
		if err := a.npmInstall(); err != nil {
			return err
		}
	}
	return nil
}

// buildC builds a C guest of bench/c-guests and packs it with its
// manifest.
func (a *artifacts) buildC(source, manifest, module string) error {
	raw := filepath.Join(a.out, "tmp", filepath.Base(source)+".wasm")
	if err := os.MkdirAll(filepath.Dir(raw), 0o755); err != nil {
		return err
	}
	if err := a.run(a.root, "bench/c-guests/build", source, raw); err != nil {
		return fmt.Errorf("%w (clang-14 and wasi-libc come from scripts/setup)", err)
	}
	return a.packCommand(raw, manifest, module)
}

// buildGoCommand builds a Go tool as a command and packs it with its
// manifest.
func (a *artifacts) buildGoCommand(dir, manifest, module string) error {
	raw := filepath.Join(a.out, "tmp", filepath.Base(dir)+"-command.wasm")
	if err := os.MkdirAll(filepath.Dir(raw), 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", raw, "./"+dir)
	cmd.Dir, cmd.Env = a.root, append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s as a command: %w", dir, err)
	}
	return a.packCommand(raw, manifest, module)
}

// packCommand packs a command module with a manifest, less the manifest's
// "start": the bench's C and Go commands share the Go reactor's.
func (a *artifacts) packCommand(raw, manifest, module string) error {
	data, err := os.ReadFile(filepath.Join(a.root, manifest))
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", manifest, err)
	}
	delete(m, "start")
	if data, err = json.Marshal(m); err != nil {
		return err
	}
	commandManifest := raw + ".manifest.json"
	if err := os.WriteFile(commandManifest, data, 0o644); err != nil {
		return err
	}
	return a.run(a.root, a.wasmcp, "pack", "--manifest", commandManifest, "-o", module, raw)
}

// npmInstall runs npm ci in bench/native-ts when the lock file differs from
// the one last installed (kept as a stamp in node_modules, as scripts/setup
// does for the AssemblyScript SDK).
func (a *artifacts) npmInstall() error {
	dir := filepath.Join(a.root, "bench", "native-ts")
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	stamp := filepath.Join(dir, "node_modules", ".wasmcp-installed-lock")
	if old, err := os.ReadFile(stamp); err == nil && bytes.Equal(old, lock) {
		return nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("native-ts needs Node.js and npm (Debian: nodejs npm): %w", err)
	}
	if err := a.run(dir, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"); err != nil {
		return err
	}
	return os.WriteFile(stamp, lock, 0o644)
}

// precompile fills wasmcp's disk cache with every module's native code
// (`wasmcp list` compiles each module), so that servers start as they do
// for a user on any run but the very first.
func (a *artifacts) precompile(sel []*server) error {
	for _, s := range sel {
		if !s.wasmcp() {
			continue
		}
		argv := []string{"list", "--tools", a.toolDir(s), "--cache-dir", a.cacheDir}
		if s.Engine != "" {
			argv = append(argv, "--engine", s.Engine)
		}
		cmd := exec.Command(a.wasmcp, argv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("wasmcp list --tools %s: %v\n%s", a.toolDir(s), err, out)
		}
	}
	return nil
}

// check reports what a --no-build run is missing.
func (a *artifacts) check(sel []*server) error {
	var need []string
	for _, s := range sel {
		switch s.Impl {
		case "wasmcp":
			need = append(need, a.wasmcp, filepath.Join(a.toolDir(s), s.Tool+".wasm"))
		case "go-sdk":
			need = append(need, a.nativeGo)
		case "ts-sdk":
			need = append(need, filepath.Join(a.root, "bench/native-ts/node_modules/.wasmcp-installed-lock"))
		}
	}
	for _, p := range need {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%v: run without --no-build first", err)
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
