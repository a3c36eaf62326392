//go:build !(wasmtime && cgo)

package sandbox

import "errors"

// wasmtimeBuilt says whether this build has the wasmtime engine.
const wasmtimeBuilt = false

func newWasmtime(Config) (backend, error) {
	return nil, errors.New("this wasmcp was built without the wasmtime engine; build it with -tags wasmtime (needs cgo and a C compiler)")
}
