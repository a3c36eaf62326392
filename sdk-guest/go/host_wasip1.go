//go:build wasip1

package guest

import "unsafe"

//go:wasmimport wasmcp log
func wasmcpLog(level int32, ptr unsafe.Pointer, n uint32) int32

//go:wasmimport wasmcp progress
func wasmcpProgress(progress, total float64, ptr unsafe.Pointer, n uint32) int32

//go:wasmimport wasmcp http_request
func wasmcpHTTPRequest(ptr unsafe.Pointer, n uint32, respLen unsafe.Pointer) int32

//go:wasmimport wasmcp http_response
func wasmcpHTTPResponse(ptr unsafe.Pointer, n uint32) int32

// hostLog, hostProgress and hostHTTP are variables so that native tests
// can stand in for the host.
var (
	hostLog = func(level int32, msg string) int32 {
		return wasmcpLog(level, unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
	}
	hostProgress = func(progress, total float64, msg string) int32 {
		return wasmcpProgress(progress, total, unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
	}
	// hostHTTP makes the request and takes the host's answer, which it
	// sizes first so the buffer fits.
	hostHTTP = func(req []byte) (int32, []byte) {
		var n uint32
		code := wasmcpHTTPRequest(unsafe.Pointer(unsafe.SliceData(req)), uint32(len(req)), unsafe.Pointer(&n))
		if n == 0 {
			return code, nil
		}
		buf := make([]byte, n)
		if rc := wasmcpHTTPResponse(unsafe.Pointer(unsafe.SliceData(buf)), n); rc != Ok {
			return rc, nil
		}
		return code, buf
	}
)
