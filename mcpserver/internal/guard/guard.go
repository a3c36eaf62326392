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
)

// JSON-RPC 2.0 error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

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
	kind := Notification
	if hasID {
		kind = Request
	}
	return Verdict{Kind: kind, ID: id, Method: method, Params: env.params}
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

// errorResponse is a JSON-RPC error response on the wire.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// ErrorResponse encodes a JSON-RPC error response. A nil id is written as
// null, as JSON-RPC asks when the request's id could not be read.
func ErrorResponse(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	r := errorResponse{JSONRPC: "2.0", ID: id}
	r.Error.Code, r.Error.Message = code, message
	b, _ := json.Marshal(r)
	return b
}

// HasModernMeta reports whether params carries
// _meta["io.modelcontextprotocol/protocolVersion"], the mark of a request
// made under the stateless 2026-07-28 revision.
func HasModernMeta(params json.RawMessage) bool {
	if len(params) == 0 {
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p.Meta["io.modelcontextprotocol/protocolVersion"]
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
