package abi

// HostModule is the import module of the host functions wasmcp offers a
// tool. Importing it is optional: a tool that imports nothing from it works
// unchanged.
//
// Its functions, in WebAssembly types:
//
//	log(level i32, msg_ptr i32, msg_len i32) -> i32
//	progress(progress f64, total f64, msg_ptr i32, msg_len i32) -> i32
//	http_request(req_ptr i32, req_len i32, resp_len_ptr i32) -> i32
//	http_response(buf_ptr i32, buf_len i32) -> i32
//
// Each returns Ok or one of the Err codes. docs/abi.md describes them.
const HostModule = "wasmcp"

// Log levels for log, in increasing severity: the RFC 5424 levels MCP uses.
const (
	LevelDebug int32 = iota
	LevelInfo
	LevelNotice
	LevelWarning
	LevelError
	LevelCritical
	LevelAlert
	LevelEmergency
)

// LevelNames are the MCP names of the log levels, indexed by level.
var LevelNames = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// Results of the host functions.
const (
	// Ok: the message was accepted. It may still be filtered out by the
	// client's chosen log level, or dropped because the request asked for
	// no progress; that is not the tool's concern.
	Ok int32 = 0
	// ErrFault: the pointer and length do not lie within the module's memory.
	ErrFault int32 = 1
	// ErrInvalid: a bad level, or a progress or total that is NaN or
	// infinite.
	ErrInvalid int32 = 2
	// ErrEncoding: the message is not UTF-8.
	ErrEncoding int32 = 3
	// ErrTooLong: the message is longer than MaxMessageLen.
	ErrTooLong int32 = 4
	// ErrLimit: this call has used up an allowance (MaxLogMessages,
	// MaxLogBytes, MaxProgress, or an HTTP request, byte or redirect cap);
	// the message or request was dropped.
	ErrLimit int32 = 5
	// ErrOrder: progress did not increase over the last value reported.
	ErrOrder int32 = 6
	// ErrDenied: the operator's policy does not grant what the call
	// needs; the answer's "error" says what, and the call's error text
	// tells the operator how to grant it.
	ErrDenied int32 = 7
	// ErrNetwork: the request was allowed but failed (no answer, a
	// timeout, a response over the size limit); the answer says why.
	ErrNetwork int32 = 8
)

// Per-call allowances of the host functions. They keep a tool from flooding
// a client or the server's log.
const (
	MaxMessageLen  = 8 << 10
	MaxLogMessages = 1000
	MaxLogBytes    = 1 << 20
	MaxProgress    = 1000
	// MaxHTTPRequestLen bounds the JSON of one http_request.
	MaxHTTPRequestLen = 2 << 20
)
