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

//go:wasmimport wasmcp elicit
func wasmcpElicit(ptr unsafe.Pointer, n uint32, respLen unsafe.Pointer) int32

//go:wasmimport wasmcp create_message
func wasmcpCreateMessage(ptr unsafe.Pointer, n uint32, respLen unsafe.Pointer) int32

//go:wasmimport wasmcp list_roots
func wasmcpListRoots(ptr unsafe.Pointer, n uint32, respLen unsafe.Pointer) int32

//go:wasmimport wasmcp ask_all
func wasmcpAskAll(ptr unsafe.Pointer, n uint32, respLen unsafe.Pointer) int32

//go:wasmimport wasmcp ask_response
func wasmcpAskResponse(ptr unsafe.Pointer, n uint32) int32

// hostLog, hostProgress, hostHTTP and the host's asks are variables so
// that native tests can stand in for the host. The linker keeps only
// those a tool uses, so a tool imports no function it does not call.
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
	hostElicit        = func(req []byte) (int32, []byte) { return ask(wasmcpElicit, req) }
	hostCreateMessage = func(req []byte) (int32, []byte) { return ask(wasmcpCreateMessage, req) }
	hostListRoots     = func(req []byte) (int32, []byte) { return ask(wasmcpListRoots, req) }
	hostAskAll        = func(req []byte) (int32, []byte) { return ask(wasmcpAskAll, req) }
)

// ask makes one ask of the client through f and takes the answer, as
// hostHTTP does.
func ask(f func(unsafe.Pointer, uint32, unsafe.Pointer) int32, req []byte) (int32, []byte) {
	var n uint32
	code := f(unsafe.Pointer(unsafe.SliceData(req)), uint32(len(req)), unsafe.Pointer(&n))
	if n == 0 {
		return code, nil
	}
	buf := make([]byte, n)
	if rc := wasmcpAskResponse(unsafe.Pointer(unsafe.SliceData(buf)), n); rc != Ok {
		return rc, nil
	}
	return code, buf
}
