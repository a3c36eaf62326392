// Package guard checks the JSON-RPC envelope of each inbound message before
// the MCP SDK sees it. The SDK closes a stdio connection on a line it cannot
// decode and answers some malformed HTTP bodies with plain text; JSON-RPC 2.0
// asks for an error object instead, and a server that hosts tools for
// agents must survive whatever a client sends. The guard answers every
// malformed message itself, so only well-formed envelopes reach the SDK.
package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// MaxDepth bounds how deep a message may nest objects and arrays, its own
// object counting as 1. The SDK refuses a message nested deeper than 1,000
// levels (its internal/json checks before decoding), and over stdio it
// then closes the connection; the guard refuses earlier, so the SDK never
// meets such a message. A tool's arguments sit at level 3 (message,
// params, arguments), so 510 levels are left to them: far more than any
// schema describes or a model writes, and still below what the SDK reads.
const MaxDepth = 512

// Kind classifies a message.
type Kind int

// The kinds of message.
const (
	// Invalid messages are answered by the guard with an error.
	Invalid Kind = iota
	Request
	Notification
	Response
)

// Verdict is what Inspect found.
type Verdict struct {
	Kind Kind
	// ID is the message's id as it appeared on the wire; nil when there is
	// none or it could not be read.
	ID json.RawMessage
	// Method is the method of a request or notification.
	Method string
	// Params is the raw params member, if present.
	//
	// ID and Params are slices of the inspected message, not copies, so
	// the message must not change while they are in use. Appending to them
	// copies.
	Params json.RawMessage
	// Code and Message describe why an Invalid message was refused.
	Code    int
	Message string
}

// jsonSpace is the white space JSON allows around a value; bytes.TrimSpace
// would also strip Unicode spaces that a JSON parser refuses.
const jsonSpace = " \t\r\n"

// Trim removes the white space JSON allows around a message.
func Trim(msg []byte) []byte { return bytes.Trim(msg, jsonSpace) }

// notAnObject answers a trimmed message that is not one JSON object.
func notAnObject(trimmed []byte) (Verdict, bool) {
	if !json.Valid(trimmed) {
		return invalid(nil, CodeParseError, "parse error: the message is not valid JSON"), true
	}
	switch trimmed[0] {
	case '{':
		return Verdict{}, false
	case '[':
		return invalid(nil, CodeInvalidRequest, "invalid request: batches are not supported (MCP removed JSON-RPC batching in 2025-06-18); send one message at a time"), true
	}
	return invalid(nil, CodeInvalidRequest, "invalid request: a message must be a JSON object"), true
}

// Inspect classifies one message. It never fails: anything it cannot accept
// is an Invalid verdict with the code to answer with.
func Inspect(msg []byte) Verdict {
	trimmed := Trim(msg)
	if v, bad := notAnObject(trimmed); bad {
		return v
	}
	env, ok := scanEnvelope(trimmed)
	if !ok {
		// Valid JSON that is an object always scans; this is defensive.
		return invalid(nil, CodeParseError, "parse error: the message is not valid JSON")
	}

	hasID := env.id != nil
	var id json.RawMessage
	if hasID {
		if !validID(env.id) {
			return invalid(nil, CodeInvalidRequest, "invalid request: id must be a string or an integer (MCP forbids null)")
		}
		id = env.id
	}
	if string(env.jsonrpc) != `"2.0"` {
		return invalid(id, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}

	if env.method == nil {
		hasResult, hasError := env.result != nil, env.error != nil
		if hasID && hasResult != hasError {
			if env.beyondLimits() {
				return refuseBeyondLimits(env.walk, id)
			}
			return Verdict{Kind: Response, ID: id}
		}
		return invalid(id, CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	// A null or any other non-string method is refused like an empty one.
	method := ""
	if env.method[0] == '"' {
		method = unquote(env.method)
	}
	if method == "" {
		return invalid(id, CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	if env.params != nil && env.params[0] != '{' {
		return invalid(id, CodeInvalidParams, fmt.Sprintf("invalid params: params of %q must be an object", method))
	}
	if hasID && strings.HasPrefix(method, "notifications/") {
		return invalid(id, CodeInvalidRequest, notificationWithID(method))
	}
	kind := Notification
	if hasID {
		kind = Request
	}
	if env.beyondLimits() {
		return refuseBeyondLimits(env.walk, id)
	}
	return Verdict{Kind: kind, ID: id, Method: method, Params: env.params}
}

// beyondLimits reports whether a well-formed message is one the SDK could
// not read: nested deeper than MaxDepth, or holding a number beyond
// float64's range, which the SDK decodes into a float64 and fails on.
func (w walk) beyondLimits() bool { return w.depth > MaxDepth || w.bigNumber != nil }

// refuseBeyondLimits is the verdict on a message beyondLimits refuses.
func refuseBeyondLimits(w walk, id json.RawMessage) Verdict {
	if w.depth > MaxDepth {
		// -32600, not -32700: the message is valid JSON, whose id the guard
		// reads and answers with; it is a request the server will not take,
		// as is one over the size limit.
		return invalid(id, CodeInvalidRequest, tooDeep)
	}
	return invalid(id, CodeInvalidParams, numberOutOfRange(w.bigNumber))
}

// The reasons for refusing a well-formed message, shared with the tests'
// reference reading.
var tooDeep = fmt.Sprintf("invalid request: the message nests objects and arrays deeper than %d levels; send shallower arguments", MaxDepth)

func numberOutOfRange(tok []byte) string {
	shown := string(tok)
	if len(shown) > 40 {
		shown = shown[:40] + "..."
	}
	return fmt.Sprintf("invalid params: the number %s is beyond the range of a 64-bit float (about ±1.8e308), which is as far as the server reads numbers; send it as a string", shown)
}

func notificationWithID(method string) string {
	return fmt.Sprintf(`invalid request: %q is a notification, and a notification carries no "id"; send it without one`, method)
}

// ResponseID returns the id of msg, a message the SDK encoded, if msg is a
// response: an object with an id and without a method (or with a null
// one). Anything else, or a message it cannot read, gives false. The id is
// a slice of msg.
//
// It finds the two members without decoding anything, because a response
// carries a tool's whole result and is checked on its way out on every
// call. It does not validate msg: the SDK's own encoding is trusted.
func ResponseID(msg []byte) (json.RawMessage, bool) {
	env, ok := scanEnvelope(msg)
	if !ok || env.id == nil || (env.method != nil && string(env.method) != "null") {
		return nil, false
	}
	return env.id, true
}

func invalid(id json.RawMessage, code int, msg string) Verdict {
	return Verdict{Kind: Invalid, ID: id, Code: code, Message: msg}
}

// checkID accepts a string or an integer and returns it without the white
// space around it.
func checkID(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.Trim(raw, jsonSpace)
	if !json.Valid(raw) || !validID(raw) {
		return nil, false
	}
	return raw, true
}

// validID reports whether raw, one valid JSON value, is a string or an
// integer that fits in an int64.
func validID(raw []byte) bool {
	switch raw[0] {
	case '"':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if bytes.ContainsAny(raw, ".eE") {
			return false
		}
		_, err := strconv.ParseInt(string(raw), 10, 64)
		return err == nil
	}
	return false
}

// ErrorResponse encodes a JSON-RPC error response. A nil id is written as
// null, as JSON-RPC asks when the request's id could not be read. The id is
// written as it came, not encoded again: encoding/json would escape some
// characters of a string id, and a client must get its id back byte for
// byte.
func ErrorResponse(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message})
	return response(id, "error", e)
}

// ResultResponse is the JSON-RPC response to the request id, whose result
// is the encoded result; the id is written as ErrorResponse writes it.
func ResultResponse(id, result json.RawMessage) []byte {
	return response(id, "result", result)
}

// response is the response to id with one member, name, beside it.
func response(id json.RawMessage, name string, value []byte) []byte {
	out := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"":}`)+len(id)+len(name)+len(value))
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, `,"`...)
	out = append(out, name...)
	out = append(out, `":`...)
	out = append(out, value...)
	return append(out, '}')
}

// HasModernMeta reports whether params carries
// _meta["io.modelcontextprotocol/protocolVersion"], the mark of a request
// made under the stateless 2026-07-28 revision. Names match exactly, as
// the SDK's decoder matches them: a "_META" is not the SDK's _meta, so it
// is not this one's either.
func HasModernMeta(params json.RawMessage) bool {
	if len(params) == 0 || !json.Valid(params) {
		return false
	}
	meta, ok := Member(params, "_meta")
	if !ok {
		return false
	}
	_, ok = Member(meta, "io.modelcontextprotocol/protocolVersion")
	return ok
}

// IDKey returns a comparable form of an id, the same for every spelling of
// one value ("a" and "\u0061", 1 and 1), so that a response can be matched
// to its request whoever encoded it. It returns "" for an unreadable id.
func IDKey(raw json.RawMessage) string {
	id, ok := checkID(raw)
	if !ok {
		return ""
	}
	if id[0] == '"' {
		return "s" + unquote(id)
	}
	n, _ := strconv.ParseInt(string(id), 10, 64)
	return "n" + strconv.FormatInt(n, 10)
}

// SubstitutePrefix begins every id the server hands the SDK in place of a
// request id that is not plain (see PlainID). A client's own string id
// that begins with it is never plain, so it is replaced too, and a
// substitute cannot be mistaken for a client's id.
const SubstitutePrefix = "wasmcp-id:"

// maxExactID is the largest integer id the SDK gives back unchanged: it
// holds a request's id as a float64 on its way in, exact up to 2^53.
const maxExactID = 1 << 53

// PlainID reports whether the SDK gives id, the id of a request Inspect
// accepted, back exactly as the client wrote it: an integer within ±2^53
// other than -0 (which comes back as 0), or a string of printable ASCII
// without escapes that does not begin with SubstitutePrefix. The SDK
// decodes and encodes a string id again, which changes the spelling of
// escapes and of some characters; printable ASCII comes back as it was.
func PlainID(id json.RawMessage) bool {
	if id[0] == '"' {
		inner := id[1 : len(id)-1]
		if bytes.HasPrefix(inner, []byte(SubstitutePrefix)) {
			return false
		}
		for _, c := range inner {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	if string(id) == "-0" {
		return false
	}
	// Up to 15 digits is always below 2^53, which has 16.
	if digits := len(bytes.TrimPrefix(id, []byte("-"))); digits <= 15 {
		return true
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && -maxExactID <= n && n <= maxExactID
}

// Member returns the value of the top-level member name of obj, a JSON
// object that json.Valid accepted or the SDK encoded: the last one if the
// name repeats, as a decoder reads it. Keys are compared unescaped. The
// value is a slice of obj.
func Member(obj []byte, name string) (json.RawMessage, bool) {
	start, end, ok := findMember(obj, name)
	if !ok {
		return nil, false
	}
	return obj[start:end:end], true
}

// Members returns the top-level members of obj, an object as Member
// takes, by their unescaped names, and false if obj is not an object or a
// name repeats. The values are slices of obj.
func Members(obj []byte) (map[string]json.RawMessage, bool) {
	var w walk
	members := map[string]json.RawMessage{}
	repeated := false
	walked := w.members(obj, func(key []byte, start, end int) {
		name := string(memberName(key))
		if _, ok := members[name]; ok {
			repeated = true
		}
		members[name] = obj[start:end:end]
	})
	return members, walked && !repeated
}

// WithMember returns a copy of obj, an object as Member takes, with the
// value of its member name (the one Member finds) replaced by val, and
// every other byte as it was. It returns false if obj has no such member.
func WithMember(obj []byte, name string, val []byte) ([]byte, bool) {
	start, end, ok := findMember(obj, name)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(val))
	out = append(out, obj[:start]...)
	out = append(out, val...)
	return append(out, obj[end:]...), true
}
