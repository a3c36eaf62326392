package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// measure compiles a module, or compiles and runs it, in this process. A
// module within wasmcp's limits goes through sandbox.Engine, as the server
// compiles and runs it; one beyond them, which the engine would refuse,
// goes to the engine itself.
func measure(engine, path, cache, step string) error {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if checkWithin(wasm) != nil {
		if engine == "wasmtime" {
			return rawWasmtime(wasm, cache, step == "instantiate")
		}
		return rawWazero(ctx, wasm, cache, step == "instantiate")
	}
	e, err := sandbox.NewEngine(ctx, sandbox.Config{Engine: engine, CacheDir: cache})
	if err != nil {
		return err
	}
	c, err := e.Compile(ctx, wasm, abi.StartCommand)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if step == "instantiate" {
		out := c.Run(ctx, sandbox.Run{Limits: sandbox.Limits{Timeout: time.Minute, Memory: 4 << 30, Output: 1 << 20}})
		if out.Failure != nil {
			return fmt.Errorf("run: %s", out.Failure.Detail)
		}
	}
	return nil
}

func rawWazero(ctx context.Context, wasm []byte, cache string, run bool) error {
	cc, err := wazero.NewCompilationCacheWithDir(cache)
	if err != nil {
		return err
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(true).WithCompilationCache(cc))
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if run {
		if _, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("")); err != nil {
			return fmt.Errorf("instantiate: %w", err)
		}
	}
	return nil
}
