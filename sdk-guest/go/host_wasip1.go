//go:build wasip1

package guest

import "unsafe"

//go:wasmimport wasmcp log
func wasmcpLog(level int32, ptr unsafe.Pointer, n uint32) int32

//go:wasmimport wasmcp progress
func wasmcpProgress(progress, total float64, ptr unsafe.Pointer, n uint32) int32

// hostLog and hostProgress are variables so that native tests can stand in
// for the host.
var (
	hostLog = func(level int32, msg string) int32 {
		return wasmcpLog(level, unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
	}
	hostProgress = func(progress, total float64, msg string) int32 {
		return wasmcpProgress(progress, total, unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
	}
)
