//go:build !(wasmtime && cgo)

package main

import "errors"

func rawWasmtime([]byte, string, bool) error {
	return errors.New("this binary was built without -tags wasmtime")
}
