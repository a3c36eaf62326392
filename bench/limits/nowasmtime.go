//go:build !(wasmtime && cgo)

package main

import "errors"

func measureWasmtime([]byte) error {
	return errors.New("this binary was built without -tags wasmtime")
}
