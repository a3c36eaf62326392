//go:build wasmtime && cgo

package main

import (
	"fmt"

	wt "github.com/bytecodealliance/wasmtime-go/v39"
)

func measureWasmtime(wasm []byte) error {
	c := wt.NewConfig()
	c.SetEpochInterruption(true)
	engine := wt.NewEngineWithConfig(c)
	m, err := wt.NewModule(engine, wasm)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
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
