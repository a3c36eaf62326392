// Package jsonsize measures a JSON string's encoding without making it.
// A host that bounds what an answer costs once encoded must know the
// figure before it pays it: a byte of a tool's output can take six in
// JSON (\u0001, \u003c), and an answer of 1 MiB becomes one of 6 MiB, and
// its copies, in the encoder's hands.
package jsonsize

import "unicode/utf8"

// String returns how many bytes s takes as a JSON string, its quotes
// included, as json.Marshal writes it: the way the MCP SDK encodes a tool
// result (its MarshalJSON calls json.Marshal), and the host its answers to
// guests. Control characters take six bytes (\u0001), or two for the five
// with a short escape (\n); a quote or a backslash two; <, > and & six
// (json.Marshal escapes them for HTML); U+2028 and U+2029 six, and each
// byte of invalid UTF-8 six (\ufffd).
func String[T string | []byte](s T) int {
	n := 2
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			n += int(ascii[b])
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028', c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// ascii is what each ASCII byte takes.
var ascii = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		switch {
		case b == '"' || b == '\\' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
			t[b] = 2
		case b < 0x20 || b == '<' || b == '>' || b == '&':
			t[b] = 6
		default:
			t[b] = 1
		}
	}
	return t
}()
