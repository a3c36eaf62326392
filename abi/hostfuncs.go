package abi

// HostModule is the import module of the host functions wasmcp offers a
// tool (HostFunctions). Importing it is optional: a tool that imports
// nothing from it works unchanged.
const HostModule = "wasmcp"

// ValueType is a WebAssembly value type, by its binary encoding.
type ValueType byte

// The value types of the host functions' parameters and results.
const (
	I32 ValueType = 0x7f
	I64 ValueType = 0x7e
	F32 ValueType = 0x7d
	F64 ValueType = 0x7c
)

// Param is one parameter of a host function.
type Param struct {
	Name string
	Type ValueType
}

// HostFunction is one function of HostModule: its name and parameters.
// Every host function returns one i32, Ok or one of the Err codes.
type HostFunction struct {
	Name   string
	Params []Param
}

// HostFunctions are the functions of HostModule, with the types a tool
// must import them with: both engines define them from this table, and a
// module that imports one with another type does not load. docs/abi.md
// describes them.
var HostFunctions = []HostFunction{
	{"log", []Param{{"level", I32}, {"msg_ptr", I32}, {"msg_len", I32}}},
	{"progress", []Param{{"progress", F64}, {"total", F64}, {"msg_ptr", I32}, {"msg_len", I32}}},
	{"http_request", []Param{{"req_ptr", I32}, {"req_len", I32}, {"resp_len_ptr", I32}}},
	{"http_response", []Param{{"buf_ptr", I32}, {"buf_len", I32}}},
	{"elicit", askParams},
	{"create_message", askParams},
	{"list_roots", askParams},
	{"ask_all", askParams},
	{"ask_response", []Param{{"buf_ptr", I32}, {"buf_len", I32}}},
}

// askParams are the parameters of every function that asks the client
// (AskFunctions), as of http_request: the request's JSON, and where the
// answer's length goes.
var askParams = []Param{{"req_ptr", I32}, {"req_len", I32}, {"resp_len_ptr", I32}}

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

// Results of the host functions, named once: docs/abi.md ("Result codes")
// and every guest SDK give these names the same values (a test in this
// package checks that they do). ErrLimit alone says the call has used up
// an allowance, so that later calls of the function fail the same way;
// every other code is about the one call that got it.
const (
	// Ok: the function did what was asked. A message was accepted (the
	// client may still filter it out by its log level, or have asked for
	// no progress; that is not the tool's concern), or a request got an
	// answer, whatever its HTTP status.
	Ok int32 = 0
	// ErrFault: a pointer and length do not lie within the module's
	// memory.
	ErrFault int32 = 1
	// ErrInvalid: a bad argument: a level outside the levels, a progress
	// or total that is NaN or infinite, an HTTP request that is malformed
	// (not JSON, a bad URL, method or header), or http_response with no
	// answer waiting.
	ErrInvalid int32 = 2
	// ErrEncoding: the message is not UTF-8.
	ErrEncoding int32 = 3
	// ErrTooLong: the message is longer than MaxMessageLen; an HTTP
	// request is over a size limit (MaxHTTPRequestLen of JSON, or its
	// body, URL or headers); or http_response's buffer is shorter than the
	// answer.
	ErrTooLong int32 = 4
	// ErrLimit: this call has used up an allowance (MaxLogMessages,
	// MaxLogBytes, MaxProgress, or its HTTP requests or their bytes); the
	// message or request was dropped, as later ones will be.
	ErrLimit int32 = 5
	// ErrOrder: progress did not increase over the last value reported.
	ErrOrder int32 = 6
	// ErrDenied: the operator's policy does not grant what the call
	// needs; the answer's "error" says what, and the call's error text
	// tells the operator how to grant it.
	ErrDenied int32 = 7
	// ErrNetwork: the request was allowed but brought no answer the tool
	// can have (no connection, a timeout, a response over the size limit,
	// too many redirects); the answer says why.
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
	// MaxAskLen bounds the JSON of one ask of the client (elicit,
	// create_message, list_roots), and MaxAnswerLen the client's answer
	// to it: both travel in requestState on 2026-07-28, so both are
	// small.
	MaxAskLen    = 64 << 10
	MaxAnswerLen = 64 << 10
	// MaxAsks bounds the asks of one call. Past it the call is stopped:
	// a tool that asks in a loop would otherwise keep a client (and, on
	// 2026-07-28, the retries that re-run it) busy until its time limit.
	MaxAsks = 16
)

// The client capabilities a tool may need, as a manifest's tools[].client
// names them: MCP's names of the capabilities a client declares.
const (
	ClientElicitation = "elicitation"
	ClientSampling    = "sampling"
	ClientRoots       = "roots"
)

// AskFunctions are the host functions that ask the client for something,
// each with the client capability it needs and the MCP method it sends.
// A module that imports one must declare the capability on a tool.
var AskFunctions = map[string]Ask{
	"elicit":         {Capability: ClientElicitation, Method: "elicitation/create"},
	"create_message": {Capability: ClientSampling, Method: "sampling/createMessage"},
	"list_roots":     {Capability: ClientRoots, Method: "roots/list"},
}

// AskMethods are the capabilities of the MCP methods of AskFunctions, by
// method: what ask_all may ask.
var AskMethods = map[string]string{
	"elicitation/create":     ClientElicitation,
	"sampling/createMessage": ClientSampling,
	"roots/list":             ClientRoots,
}

// AskAll is the host function that asks the client several things at
// once, of any of AskMethods. A module that imports it must declare a
// client capability on a tool or prompt.
const AskAll = "ask_all"

// Ask is what a function of AskFunctions asks of the client.
type Ask struct {
	// Capability is the client capability it needs (ClientElicitation, …).
	Capability string
	// Method is the MCP request it makes.
	Method string
}
