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

// HostError is a refusal from a wasmcp host function. The message was not
// sent; the tool may go on.
type HostError struct{ Code int32 }

var hostErrors = map[int32]string{
	1: "message outside the module's memory",
	2: "invalid level, progress or total",
	3: "message is not UTF-8",
	4: "message too long",
	5: "this call's allowance of messages is used up",
	6: "progress did not increase",
	7: "the server's policy does not allow this",
	8: "the request failed",
}

func (e *HostError) Error() string {
	if s, ok := hostErrors[e.Code]; ok {
		return "wasmcp host: " + s
	}
	return fmt.Sprintf("wasmcp host: error %d", e.Code)
}

func hostResult(code int32) error {
	if code == 0 {
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
