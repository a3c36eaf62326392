package guest

import (
	"fmt"
	"unicode/utf8"
)

// Level is a log level: the RFC 5424 levels MCP uses, in increasing
// severity.
type Level int32

// The log levels.
const (
	Debug Level = iota
	Info
	Notice
	Warning
	Error
	Critical
	Alert
	Emergency
)

// maxMessage is the longest message the host accepts; Log cuts longer ones
// rather than lose them.
const maxMessage = 8 << 10

// Results of the host functions (docs/abi.md, "Result codes"). They are
// the constants of the same names in wasmcp's package abi, which this
// package cannot import: `wasmcp new` copies it into a module of its own.
const (
	Ok          int32 = 0 // done as asked
	ErrFault    int32 = 1 // a pointer and length outside the module's memory
	ErrInvalid  int32 = 2 // a bad argument, or a malformed request
	ErrEncoding int32 = 3 // a message that is not UTF-8
	ErrTooLong  int32 = 4 // a message or request over its size limit
	ErrLimit    int32 = 5 // the call has used up an allowance
	ErrOrder    int32 = 6 // progress that did not increase
	ErrDenied   int32 = 7 // not granted by the operator's policy
	ErrNetwork  int32 = 8 // a request that was allowed but failed
)

// HostError is a refusal from a wasmcp host function. The message was not
// sent; the tool may go on.
type HostError struct{ Code int32 }

var hostErrors = map[int32]string{
	ErrFault:    "message outside the module's memory",
	ErrInvalid:  "invalid level, progress or total",
	ErrEncoding: "message is not UTF-8",
	ErrTooLong:  "message too long",
	ErrLimit:    "this call's allowance is used up",
	ErrOrder:    "progress did not increase",
	ErrDenied:   "the server's policy does not allow this",
	ErrNetwork:  "the request failed",
}

func (e *HostError) Error() string {
	if s, ok := hostErrors[e.Code]; ok {
		return "wasmcp host: " + s
	}
	return fmt.Sprintf("wasmcp host: error %d", e.Code)
}

func hostResult(code int32) error {
	if code == Ok {
		return nil
	}
	return &HostError{Code: code}
}

// Log sends a message to the client that called the tool, as an MCP log
// notification; the client's chosen level decides whether it is shown.
// Messages over 8 KiB are cut at a character boundary.
func Log(level Level, msg string) error {
	return hostResult(hostLog(int32(level), truncate(msg)))
}

// Logf is Log with fmt.Sprintf formatting.
func Logf(level Level, format string, args ...any) error {
	return Log(level, fmt.Sprintf(format, args...))
}

// Progress reports how far the call has got, when the client asked for
// progress. progress must grow from one report to the next; total is the
// value progress will reach, or negative when unknown. msg may be empty.
func Progress(progress, total float64, msg string) error {
	return hostResult(hostProgress(progress, total, truncate(msg)))
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	s = s[:maxMessage]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
