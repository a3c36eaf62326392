//go:build wasip1

package guest

import (
	"io"
	"os"
	"syscall"
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
	if status := runCall(wasiStrings(argsSizesGet, argsGet), wasiStrings(environSizesGet, environGet), callStdin, callStdout, os.Stderr); status != ExitOK {
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

// wasiFD reads or writes a call's stdin or stdout with syscall.Read and
// syscall.Write, one WASI call per buffer. os.File's way (internal/poll's
// locks, the non-blocking dance) is most of a snapshotted call's cold
// code; wasmcp's stdin and stdout never block. Where WASI fails (another
// host's non-blocking stdin), the os.File does the rest.
type wasiFD struct {
	fd       int
	fallback *os.File
}

var callStdin, callStdout = &wasiFD{0, os.Stdin}, &wasiFD{1, os.Stdout}

func (f *wasiFD) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := syscall.Read(f.fd, p)
	switch {
	case err != nil:
		return f.fallback.Read(p)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f *wasiFD) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := syscall.Write(f.fd, p[written:])
		if err != nil || n == 0 {
			m, err := f.fallback.Write(p[written:])
			return written + m, err
		}
		written += n
	}
	return written, nil
}
