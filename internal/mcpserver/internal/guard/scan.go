package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// envelope holds the raw values of the top-level members of a message that
// the guard looks at, and what the walk over the message met on the way. A
// nil member field means the member is absent.
type envelope struct {
	jsonrpc, id, method, params, result, error []byte
	walk
}

// walk is what a walk over a message meets besides its members: how deep it
// nests and whether it holds a number the SDK cannot read.
type walk struct {
	// depth is the deepest nesting of objects and arrays, the message's own
	// object counting as 1, as the SDK's depth check counts.
	depth int
	// bigNumber is the first number beyond float64's range, anywhere in the
	// message, or nil.
	bigNumber []byte
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
	ok = env.members(msg, func(key []byte, start, end int) {
		env.set(key, msg[start:end:end])
	})
	return env, ok
}

// findMember finds the top-level member of the object obj named name (the
// last one, if it repeats), as scanEnvelope would, and returns the bounds
// of its value.
func findMember(obj []byte, name string) (start, end int, ok bool) {
	var w walk
	start = -1
	walked := w.members(obj, func(key []byte, s, e int) {
		if string(memberName(key)) == name {
			start, end = s, e
		}
	})
	return start, end, walked && start >= 0
}

// members walks the members of the JSON object msg, calling visit with each
// member's quoted key and the bounds of its value in msg, and records what
// it meets in w. It reports false if msg is not an object it can walk; see
// scanEnvelope for the input it needs.
func (w *walk) members(msg []byte, visit func(key []byte, start, end int)) bool {
	i := skipSpace(msg, 0)
	if i == len(msg) || msg[i] != '{' {
		return false
	}
	w.depth = 1
	i = skipSpace(msg, i+1)
	if i < len(msg) && msg[i] == '}' {
		return true
	}
	for i < len(msg) && msg[i] == '"' {
		keyEnd := endOfString(msg, i)
		if keyEnd < 0 {
			return false
		}
		key := msg[i:keyEnd]
		i = skipSpace(msg, keyEnd)
		if i == len(msg) || msg[i] != ':' {
			return false
		}
		i = skipSpace(msg, i+1)
		valEnd := w.endOfValue(msg, i, 1)
		if valEnd < 0 {
			return false
		}
		visit(key, i, valEnd)
		i = skipSpace(msg, valEnd)
		if i == len(msg) {
			return false
		}
		switch msg[i] {
		case ',':
			i = skipSpace(msg, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
	return false
}

// set records val under the member named by the quoted key, if it is one
// the guard looks at.
func (env *envelope) set(quotedKey, val []byte) {
	switch string(memberName(quotedKey)) {
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

// memberName is the name a quoted key stands for; the common key, which
// needs no decoding, is returned without copying.
func memberName(quotedKey []byte) []byte {
	if key, plain := plainString(quotedKey); plain {
		return key
	}
	return []byte(unquote(quotedKey))
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
// -1 if none does, and records in w how deep the value nests and its first
// number beyond float64's range. depth is how deep the value itself sits:
// the number of objects and arrays around it.
func (w *walk) endOfValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return endOfString(b, i)
	case '{', '[':
		outer := depth
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				if i = endOfString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				if depth++; depth > w.depth {
					w.depth = depth
				}
			case '}', ']':
				if depth--; depth == outer {
					return i + 1
				}
			default:
				// Outside strings, a digit or a minus sign can only start
				// a number.
				if c == '-' || c-'0' < 10 {
					i = w.number(b, i)
					continue
				}
			}
			i++
		}
		return -1
	case ',', ':', '}', ']':
		return -1
	}
	if c := b[i]; c == '-' || c-'0' < 10 {
		return w.number(b, i)
	}
	return endOfScalar(b, i)
}

// endOfScalar returns the index just past the scalar that starts at b[i]:
// the next delimiter. Its spelling is json.Valid's concern.
func endOfScalar(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
		i++
	}
	return i
}

// number returns the index just past the number that starts at b[i], and
// records the number if it is the first one beyond float64's range. Only a
// number with an exponent or of over 308 bytes can be: without an
// exponent, 308 digits stay below 10^308, under float64's largest value,
// so the common number is not parsed.
func (w *walk) number(b []byte, i int) int {
	start, exponent := i, false
scan:
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break scan
		case 'e', 'E':
			exponent = true
		}
	}
	if (exponent || i-start > 308) && w.bigNumber == nil {
		if _, err := strconv.ParseFloat(string(b[start:i]), 64); errors.Is(err, strconv.ErrRange) {
			w.bigNumber = b[start:i:i]
		}
	}
	return i
}
