//go:build wasip1

package guest

import (
	"os"
	"unsafe"
)

//go:wasmimport wasi_snapshot_preview1 args_sizes_get
func argsSizesGet(count, size unsafe.Pointer) int32

//go:wasmimport wasi_snapshot_preview1 args_get
func argsGet(ptrs, buf unsafe.Pointer) int32

//go:wasmimport wasi_snapshot_preview1 environ_sizes_get
func environSizesGet(count, size unsafe.Pointer) int32

//go:wasmimport wasi_snapshot_preview1 environ_get
func environGet(ptrs, buf unsafe.Pointer) int32

// wasmcpInit is a reactor's start-up, after Go's own: the tools' one-off
// work.
//
//go:wasmexport wasmcp_init
func wasmcpInit() { warmAll() }

// wasmcpRun is one call of a reactor.
//
//go:wasmexport wasmcp_run
func wasmcpRun() {
	if status := runCall(wasiStrings(argsSizesGet, argsGet), wasiStrings(environSizesGet, environGet), os.Stdin, os.Stdout, os.Stderr); status != ExitOK {
		os.Exit(status)
	}
}

// wasiStrings reads argv or the environment from WASI, as it is now: Go
// read both once, as the snapshot's start-up ran.
func wasiStrings(sizes, get func(unsafe.Pointer, unsafe.Pointer) int32) []string {
	var count, size uint32
	if sizes(unsafe.Pointer(&count), unsafe.Pointer(&size)) != 0 || count == 0 {
		return nil
	}
	ptrs := make([]uint32, count)
	buf := make([]byte, size)
	if get(unsafe.Pointer(&ptrs[0]), unsafe.Pointer(unsafe.SliceData(buf))) != 0 {
		return nil
	}
	base := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	list := make([]string, count)
	for i, p := range ptrs {
		s := buf[p-base:]
		for j, c := range s {
			if c == 0 {
				s = s[:j]
				break
			}
		}
		list[i] = string(s)
	}
	return list
}
