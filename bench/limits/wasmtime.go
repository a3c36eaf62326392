//go:build wasmtime && cgo

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
)

func rawWasmtime(wasm []byte, cache string, run bool) error {
	c := wt.NewConfig()
	c.SetEpochInterruption(true)
	toml := filepath.Join(cache, "wasmtime.toml")
	if err := os.WriteFile(toml, []byte("[cache]\ndirectory = "+strconv.Quote(filepath.Join(cache, "wasmtime"))+"\n"), 0o600); err != nil {
		return err
	}
	if err := c.CacheConfigLoad(toml); err != nil {
		return err
	}
	engine := wt.NewEngineWithConfig(c)
	m, err := wt.NewModule(engine, wasm)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	if !run {
		return nil
	}
	store := wt.NewStore(engine)
	store.SetEpochDeadline(1 << 40)
	linker := wt.NewLinker(engine)
	if err := linker.DefineWasi(); err != nil {
		return err
	}
	store.SetWasi(wt.NewWasiConfig())
	if _, err := linker.Instantiate(store, m); err != nil {
		return fmt.Errorf("instantiate: %w", err)
	}
	return nil
}
