//go:build wasmtime && cgo

package sandbox

// #include <stddef.h>
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// wasmcpWrite is the custom stdout and stderr writer of a wasmtime run
// with mounts: h is a handle to the run's capped buffer. It lives apart
// from wasmtime.go because a file that exports to C may only declare, not
// define, C functions.
//
//export wasmcpWrite
func wasmcpWrite(h unsafe.Pointer, p *C.uchar, n C.size_t) C.ptrdiff_t {
	out := cgo.Handle(uintptr(h)).Value().(*cappedBuffer)
	w, err := out.Write(unsafe.Slice((*byte)(p), int(n)))
	if err != nil && w == 0 {
		// The cap was reached and the run's context ended with the
		// reason; the guest stops at the next epoch tick.
		return -28 // ENOSPC
	}
	return C.ptrdiff_t(w)
}
