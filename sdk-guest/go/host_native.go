//go:build !wasip1

package guest

// Outside wasip1 there is no host: reports are accepted and dropped, so a
// tool's logic can be tested natively.
var (
	hostLog      = func(level int32, msg string) int32 { return Ok }
	hostProgress = func(progress, total float64, msg string) int32 { return Ok }
	hostHTTP     = func(req []byte) (int32, []byte) {
		return ErrDenied, []byte(`{"error":"no wasmcp host: HTTP needs the tool to run under wasmcp"}`)
	}
	hostElicit, hostCreateMessage, hostListRoots, hostAskAll = noClient, noClient, noClient, noClient
)

func noClient([]byte) (int32, []byte) {
	return ErrDenied, []byte(`{"error":"no wasmcp host: asking the client needs the tool to run under wasmcp"}`)
}
