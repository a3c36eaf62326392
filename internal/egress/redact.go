package egress

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A redactor finds secret values in what a server sent back and takes them
// out. A server that echoes a request (httpbin's /headers, a debugging
// endpoint, an error page) may hand back the secret the host added, and a
// tool may pick an endpoint or a format that echoes it transformed. So each
// value is looked for
//
//   - as it is, and in UTF-16 (either byte order);
//   - in hex, and in base64 (standard and URL alphabets) at each of the three
//     byte alignments it can have inside a longer base64 blob;
//
// and each of those forms may be spelled, character by character, with any
// mixture of percent-encoding (%2F, and + for a space), JSON and JavaScript
// escapes (\u002F, \/, \x2F), HTML character references (&#47;, &#x2f;,
// &amp;) and ASCII letters in either case.
//
// What a redactor cannot catch is listed in docs/design.md (Permissions):
// a server the secret is bound to can always send it back in a form of its
// own choosing.
type redactor struct {
	forms   []form
	byFirst [256][]int // the forms, by their first byte in lower case
}

// form is one encoding of a secret value.
type form struct {
	s string
	// alphabet is set for base64 forms. The characters just outside a
	// match hold a few bits of the value as well, mixed with those of its
	// neighbours, so one on each side is taken out too.
	alphabet string
	// with replaces a match: redactedText, in UTF-16 for UTF-16 forms so
	// that the text around it still decodes.
	with string
}

const (
	stdAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	urlAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	// minFormLen is the shortest encoded form looked for: a shorter one,
	// the base64 of a value of a byte or two, would be found in any text.
	minFormLen = 4
)

// newRedactor returns a redactor for the given values; empty ones are
// ignored.
func newRedactor(values ...string) *redactor {
	r := &redactor{}
	for _, v := range values {
		if v == "" {
			continue
		}
		r.add(form{s: v, with: redactedText})
		encoded := func(f form) {
			if len(f.s) >= minFormLen {
				r.add(f)
			}
		}
		if utf8.ValidString(v) {
			le, be := utf16Forms(v)
			wle, wbe := utf16Forms(redactedText)
			encoded(form{s: le, with: wle})
			encoded(form{s: be, with: wbe})
		}
		encoded(form{s: hex.EncodeToString([]byte(v)), with: redactedText})
		for shift := range 3 {
			std := shifted(base64.RawStdEncoding, v, shift)
			encoded(form{s: std, alphabet: stdAlphabet, with: redactedText})
			if url := shifted(base64.RawURLEncoding, v, shift); url != std {
				encoded(form{s: url, alphabet: urlAlphabet, with: redactedText})
			}
		}
	}
	return r
}

func (r *redactor) add(f form) {
	r.byFirst[lower(f.s[0])] = append(r.byFirst[lower(f.s[0])], len(r.forms))
	r.forms = append(r.forms, f)
}

// shifted is the part of v's base64 encoding that depends on v alone when v
// starts shift bytes into a 3-byte group: the characters that also hold
// bits of the bytes before or after it are left out.
func shifted(enc *base64.Encoding, v string, shift int) string {
	b := make([]byte, shift, shift+len(v))
	b = append(b, v...)
	s := enc.EncodeToString(b)
	from, to := (8*shift+5)/6, 8*len(b)/6
	if to <= from {
		return ""
	}
	return s[from:to]
}

func utf16Forms(v string) (le, be string) {
	units := utf16.Encode([]rune(v))
	l := make([]byte, 0, 2*len(units))
	b := make([]byte, 0, 2*len(units))
	for _, u := range units {
		l = append(l, byte(u), byte(u>>8))
		b = append(b, byte(u>>8), byte(u))
	}
	return string(l), string(b)
}

// span is a stretch of text to replace.
type span struct {
	from, to int
	with     string
}

// errTooCostly is returned for a text that would take too long to check.
var errTooCostly = errors.New("it holds so many partial copies of the secret's value that checking it for the secret would take too long")

// The work of one find is bounded: a text made of near-copies of a long
// secret would otherwise cost its length times the secret's. Ordinary
// text, and text full of whole copies, stays far below the bound.
const (
	stepsPerByte = 32
	minSteps     = 1 << 16
)

// find returns the stretches of text that spell one of r's forms, in
// order and without overlaps. Every position is tried, so that a match
// starting inside another one still counts. It fails with errTooCostly
// when the text needs more work than the bound allows.
func (r *redactor) find(text []byte) ([]span, error) {
	var spans []span
	m := matcher{budget: minSteps + stepsPerByte*len(text)}
	for p, c := range text {
		// A form is tried only where its first byte is, as it is or
		// escaped, which rules out most positions at the cost of a table
		// look-up.
		tries := r.byFirst[lower(c)]
		if escapeStart[c] {
			if er, eb, n := escaped(text[p:]); n > 0 {
				tries = append(tries[:len(tries):len(tries)], r.byFirst[lower(firstByte(er, eb))]...)
			}
		}
		if len(tries) == 0 {
			continue
		}
		best, bf := -1, (*form)(nil)
		for _, i := range tries {
			f := &r.forms[i]
			if e := m.match(text, p, f.s); e > best {
				best, bf = e, f
			}
		}
		if m.budget < 0 {
			return nil, errTooCostly
		}
		if best < 0 {
			continue
		}
		s := span{from: p, to: best, with: bf.with}
		if bf.alphabet != "" {
			if s.from > 0 && strings.IndexByte(bf.alphabet, text[s.from-1]) >= 0 {
				s.from--
			}
			if s.to < len(text) && strings.IndexByte(bf.alphabet, text[s.to]) >= 0 {
				s.to++
			}
		}
		if n := len(spans); n > 0 && s.from <= spans[n-1].to {
			spans[n-1].from = min(spans[n-1].from, s.from)
			spans[n-1].to = max(spans[n-1].to, s.to)
			continue
		}
		spans = append(spans, s)
	}
	return spans, nil
}

// replace returns text with each span replaced.
func replace(text []byte, spans []span) []byte {
	out := make([]byte, 0, len(text))
	at := 0
	for _, s := range spans {
		out = append(out, text[at:s.from]...)
		out = append(out, s.with...)
		at = s.to
	}
	return append(out, text[at:]...)
}

// redact returns text with every secret taken out: text itself when it
// holds none.
func (r *redactor) redact(text []byte) ([]byte, error) {
	spans, err := r.find(text)
	if spans == nil || err != nil {
		return text, err
	}
	return replace(text, spans), nil
}

// redactString is redact for short texts, error messages and the like,
// and says whether it found anything. A text too costly to check is
// replaced whole.
func (r *redactor) redactString(s string) (string, bool) {
	spans, err := r.find([]byte(s))
	switch {
	case err != nil:
		return redactedText, true
	case spans == nil:
		return s, false
	}
	return string(replace([]byte(s), spans)), true
}

// contains reports whether s may hold a secret: it does, or it is too
// costly to check.
func (r *redactor) contains(s string) bool {
	spans, err := r.find([]byte(s))
	return spans != nil || err != nil
}

// headers returns the first value of each header, with the secret taken
// out. The values are searched together, in the order of their names and
// then as sent, so that a secret split over several headers (X-Echo-1,
// X-Echo-2, or two lines of one header) is found; each piece of it is
// replaced. A header whose name holds the secret is left out.
func (r *redactor) headers(h http.Header) (map[string]string, error) {
	type segment struct {
		name     string
		i        int // index among the name's values
		from, to int
	}
	var joined []byte
	var segs []segment
	for _, name := range slices.Sorted(maps.Keys(h)) {
		if r.contains(name) {
			continue
		}
		for i, v := range h[name] {
			segs = append(segs, segment{name: name, i: i, from: len(joined), to: len(joined) + len(v)})
			joined = append(joined, v...)
		}
	}
	spans, err := r.find(joined)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(h))
	k := 0 // the first span that may reach the segment
	for _, sg := range segs {
		if sg.i > 0 {
			continue // only first values are handed on; later ones were searched with them
		}
		var local []span
		for k < len(spans) && spans[k].to <= sg.from {
			k++
		}
		for _, s := range spans[k:] {
			if s.from >= sg.to {
				break
			}
			local = append(local, span{from: max(s.from, sg.from) - sg.from, to: min(s.to, sg.to) - sg.from, with: s.with})
		}
		v := joined[sg.from:sg.to]
		if local != nil {
			v = replace(v, local)
		}
		out[sg.name] = string(v)
	}
	return out, nil
}

// firstValues is what the guest gets of headers that need no redaction.
func firstValues(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// matcher follows every way a form can be spelled from one position: the
// ends reached after each of its characters. Spellings differ in length
// (a literal "/" or "%2F"), so there may be a few at once.
type matcher struct {
	cur, next []int
	budget    int // steps left; below 0, matching has stopped
}

// match returns the end of the longest spelling of s in text at p, or -1.
func (m *matcher) match(text []byte, p int, s string) int {
	// Most tries fail at the second character. Where the first is a
	// plain ASCII byte, the second must be at p+1, as it is or escaped.
	if len(s) > 1 && s[0] < utf8.RuneSelf && !escapeStart[text[p]] {
		if p+1 == len(text) || lower(text[p+1]) != lower(s[1]) && !escapeStart[text[p+1]] {
			return -1
		}
	}
	m.cur = append(m.cur[:0], p)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		unit := s[i : i+size]
		if r == utf8.RuneError && size == 1 {
			r = -1 // a byte that is not UTF-8: only byte escapes spell it
		}
		m.next = m.next[:0]
		if m.budget -= len(m.cur); m.budget < 0 {
			return -1
		}
		for _, q := range m.cur {
			m.next = spell(text[q:], q, unit, r, m.next)
		}
		if len(m.next) == 0 {
			return -1
		}
		m.cur, m.next = m.next, m.cur
		i += size
	}
	return slices.Max(m.cur)
}

// spell adds to ends the end (at+length) of each way rest begins with
// unit, one character whose UTF-8 bytes are unit and whose rune is r (-1
// for a byte that is not UTF-8).
func spell(rest []byte, at int, unit string, r rune, ends []int) []int {
	add := func(n int) []int {
		if slices.Contains(ends, at+n) {
			return ends
		}
		return append(ends, at+n)
	}
	if hasPrefixFold(rest, unit) {
		ends = add(len(unit))
	}
	switch er, eb, n := escaped(rest); {
	case n == 0:
	case er >= 0:
		if r >= 0 && foldRune(er) == foldRune(r) {
			ends = add(n)
		}
	case rest[0] == '%':
		if n := percent(rest, unit); n > 0 {
			ends = add(n)
		}
	default: // \xHH
		if len(unit) == 1 && lower(eb) == lower(unit[0]) {
			ends = add(n)
		}
	}
	return ends
}

// escaped decodes the escape at the start of rest, if there is one: n is
// its length, and it stands for the rune r or, for %HH and \xHH, the byte b
// (r is then -1). The escapes are percent-encoding (and + for a space),
// JSON's and JavaScript's backslash escapes, and HTML's character
// references, numeric or named.
func escaped(rest []byte) (r rune, b byte, n int) {
	if len(rest) == 0 || !escapeStart[rest[0]] {
		return -1, 0, 0
	}
	switch rest[0] {
	case '+':
		return ' ', 0, 1
	case '%':
		if b, ok := hexByte(rest[1:]); ok {
			return -1, b, 3
		}
	case '\\':
		if len(rest) < 2 {
			break
		}
		switch c := rest[1]; c {
		case 'u':
			u, ok := hex4(rest[2:])
			if !ok {
				break
			}
			if r := rune(u); utf16.IsSurrogate(r) && len(rest) >= 12 && rest[6] == '\\' && rest[7] == 'u' {
				if lo, ok := hex4(rest[8:]); ok {
					if d := utf16.DecodeRune(r, rune(lo)); d != utf8.RuneError {
						return d, 0, 12
					}
				}
			}
			return rune(u), 0, 6
		case 'x':
			if b, ok := hexByte(rest[2:]); ok {
				return -1, b, 4
			}
		default:
			if r := shortEscape(c); r >= 0 {
				return r, 0, 2
			}
		}
	case '&':
		return reference(rest)
	}
	return -1, 0, 0
}

var escapeStart = [256]bool{'%': true, '+': true, '\\': true, '&': true}

// shortEscape is the character a backslash and c stand for, or -1.
func shortEscape(c byte) rune {
	switch c {
	case '"', '\'', '\\', '/':
		return rune(c)
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return -1
}

// reference decodes an HTML character reference at the start of rest, as
// escaped does.
func reference(rest []byte) (r rune, b byte, n int) {
	if len(rest) < 2 || rest[1] != '#' {
		for _, ref := range namedReferences {
			if hasPrefixFold(rest, ref.name) {
				return ref.r, 0, len(ref.name)
			}
		}
		return -1, 0, 0
	}
	i, base := 2, rune(10)
	if len(rest) > 2 && lower(rest[2]) == 'x' {
		i, base = 3, 16
	}
	var v rune
	digits := 0
	for ; i < len(rest) && digits < 8; i, digits = i+1, digits+1 {
		d, ok := digit(rest[i], base)
		if !ok {
			break
		}
		v = v*base + d
	}
	if digits == 0 || v > utf8.MaxRune || i >= len(rest) || rest[i] != ';' {
		return -1, 0, 0
	}
	return v, 0, i + 1
}

// namedReferences are the named references escaping functions write.
var namedReferences = []struct {
	name string
	r    rune
}{{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}}

// percent is the length of unit's percent-encoding at the start of rest,
// or 0.
func percent(rest []byte, unit string) int {
	for i := 0; i < len(unit); i++ {
		if len(rest) < 3*i+3 || rest[3*i] != '%' {
			return 0
		}
		if b, ok := hexByte(rest[3*i+1:]); !ok || lower(b) != lower(unit[i]) {
			return 0
		}
	}
	return 3 * len(unit)
}

// firstByte is the first byte of the UTF-8 encoding of r, or b if r is -1.
func firstByte(r rune, b byte) byte {
	if r < 0 {
		return b
	}
	var buf [utf8.UTFMax]byte
	utf8.EncodeRune(buf[:], r)
	return buf[0]
}

func digit(c byte, base rune) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case base == 16 && 'a' <= lower(c) && lower(c) <= 'f':
		return rune(lower(c)-'a') + 10, true
	}
	return 0, false
}

func hexByte(b []byte) (byte, bool) {
	if len(b) < 2 {
		return 0, false
	}
	hi, ok1 := digit(b[0], 16)
	lo, ok2 := digit(b[1], 16)
	return byte(hi<<4 | lo), ok1 && ok2
}

func hex4(b []byte) (uint16, bool) {
	if len(b) < 4 {
		return 0, false
	}
	hi, ok1 := hexByte(b)
	lo, ok2 := hexByte(b[2:])
	return uint16(hi)<<8 | uint16(lo), ok1 && ok2
}

// hasPrefixFold reports whether b begins with s, ASCII letters in either
// case.
func hasPrefixFold(b []byte, s string) bool {
	if len(b) < len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func foldRune(r rune) rune {
	if r < 0x80 {
		return rune(lower(byte(r)))
	}
	return r
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
