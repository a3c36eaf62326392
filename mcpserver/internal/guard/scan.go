package guard

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// envelope holds the raw values of the top-level members of a message that
// the guard looks at. A nil field means the member is absent.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
}

// scanEnvelope finds the top-level members of the JSON object msg without
// decoding their values, so a call's arguments are walked over, never
// copied or turned into maps. As with encoding/json decoding into a map,
// keys are compared unescaped and the last of a repeated member wins. The
// values are slices of msg.
//
// It reports false if msg is not an object it can walk, but it does not
// validate the values: msg must be JSON already checked with json.Valid,
// or encoded by the SDK. On any other input it still returns, without
// panicking.
func scanEnvelope(msg []byte) (env envelope, ok bool) {
	i := skipSpace(msg, 0)
	if i == len(msg) || msg[i] != '{' {
		return env, false
	}
	i = skipSpace(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return env, true
	}
	for i < len(msg) && msg[i] == '"' {
		keyEnd := endOfString(msg, i)
		if keyEnd < 0 {
			return env, false
		}
		key := msg[i:keyEnd]
		i = skipSpace(msg, keyEnd)
		if i == len(msg) || msg[i] != ':' {
			return env, false
		}
		i = skipSpace(msg, i+1)
		valEnd := endOfValue(msg, i)
		if valEnd < 0 {
			return env, false
		}
		env.set(key, msg[i:valEnd:valEnd])
		i = skipSpace(msg, valEnd)
		if i == len(msg) {
			return env, false
		}
		switch msg[i] {
		case ',':
			i = skipSpace(msg, i+1)
		case '}':
			return env, true
		default:
			return env, false
		}
	}
	return env, false
}

// set records val under the member named by the quoted key, if it is one
// the guard looks at.
func (env *envelope) set(quotedKey, val []byte) {
	key, plain := plainString(quotedKey)
	if !plain {
		key = []byte(unquote(quotedKey))
	}
	switch string(key) {
	case "jsonrpc":
		env.jsonrpc = val
	case "id":
		env.id = val
	case "method":
		env.method = val
	case "params":
		env.params = val
	case "result":
		env.result = val
	case "error":
		env.error = val
	}
}

// unquote decodes a JSON string token. The common string, without escapes
// and in valid UTF-8, is converted directly; any other goes through
// encoding/json, which resolves escapes and replaces invalid UTF-8 with
// U+FFFD. A token that does not decode as a string gives "".
func unquote(quoted []byte) string {
	if inner, ok := plainString(quoted); ok {
		return string(inner)
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return ""
	}
	return s
}

// plainString returns the content of a JSON string token that needs no
// decoding: no escapes, no control characters, valid UTF-8.
func plainString(quoted []byte) ([]byte, bool) {
	if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' {
		return nil, false
	}
	inner := quoted[1 : len(quoted)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return inner, utf8.Valid(inner)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// endOfString returns the index just past the string whose opening quote is
// at b[i], or -1 if the string does not end.
func endOfString(b []byte, i int) int {
	for i++; ; {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		i += q
		// The quote is escaped if an odd run of backslashes precedes it;
		// the opening quote bounds the run.
		backslashes := 0
		for j := i - 1; b[j] == '\\'; j-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			return i
		}
	}
}

// endOfValue returns the index just past the value that starts at b[i], or
// -1 if none does. Scalars other than strings are taken to run up to the
// next delimiter; their spelling is json.Valid's concern.
func endOfValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = endOfString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}
