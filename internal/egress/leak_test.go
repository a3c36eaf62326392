package egress

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"unicode/utf16"
)

// This file is the suite's own check that no secret reached the guest: it
// undoes, with the standard library and independently of redact.go, the
// encodings the host claims to catch, and looks for the values in what
// comes out.

// leaked returns the secret value s exposes, in any form exposures undoes,
// or "". A text over 64 KiB (the bodies of the limit tests, which echo
// nothing) is only searched as it is, in any case: undoing every encoding
// of megabytes of filler would make the race detector's run crawl.
func leaked(s string) string {
	texts := []string{s}
	if len(s) <= 64<<10 {
		texts = exposures(s)
	}
	for _, e := range texts {
		e = strings.ToLower(e)
		for _, v := range secretValues {
			if strings.Contains(e, strings.ToLower(v)) {
				return v
			}
		}
	}
	return ""
}

// exposures is s, and what s reads as with one text escape undone
// (percent-encoding, JSON or HTML escapes) and then one encoding (base64,
// hex, UTF-16) decoded from any point.
func exposures(s string) []string {
	var out []string
	for _, t := range []string{s, unpercent(s), unescapeJSON(s), html.UnescapeString(s)} {
		out = append(out, t)
		out = append(out, unbase64(t)...)
		out = append(out, unhex(t)...)
		out = append(out, unutf16(t)...)
	}
	return out
}

var (
	percentRE = regexp.MustCompile(`%[0-9a-fA-F]{2}|\+`)
	jsonRE    = regexp.MustCompile(`(\\u[0-9a-fA-F]{4})+|\\x[0-9a-fA-F]{2}|\\.`)
	stdRunRE  = regexp.MustCompile(`[A-Za-z0-9+/]+`)
	urlRunRE  = regexp.MustCompile(`[A-Za-z0-9_-]+`)
	hexRunRE  = regexp.MustCompile(`[0-9a-fA-F]+`)
)

func unpercent(s string) string {
	return percentRE.ReplaceAllStringFunc(s, func(m string) string {
		if m == "+" {
			return " "
		}
		b, _ := hex.DecodeString(m[1:])
		return string(b)
	})
}

func unescapeJSON(s string) string {
	return jsonRE.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, `\x`) {
			b, _ := hex.DecodeString(m[2:])
			return string(b)
		}
		var out string
		if json.Unmarshal([]byte(`"`+m+`"`), &out) == nil {
			return out
		}
		return m[1:] // \' and the like

	})
}

// unbase64 decodes each run of base64 characters from each of the four
// positions a 4-character group can start at.
func unbase64(s string) []string {
	var out []string
	for _, enc := range []struct {
		re  *regexp.Regexp
		enc *base64.Encoding
	}{{stdRunRE, base64.RawStdEncoding}, {urlRunRE, base64.RawURLEncoding}} {
		for _, run := range enc.re.FindAllString(s, -1) {
			for off := 0; off < 4 && off < len(run); off++ {
				r := run[off:]
				r = r[:len(r)/4*4]
				if b, err := enc.enc.DecodeString(r); err == nil {
					out = append(out, string(b))
				}
			}
		}
	}
	return out
}

func unhex(s string) []string {
	var out []string
	for _, run := range hexRunRE.FindAllString(s, -1) {
		for off := 0; off < 2 && off < len(run); off++ {
			r := run[off:]
			if b, err := hex.DecodeString(r[:len(r)/2*2]); err == nil {
				out = append(out, string(b))
			}
		}
	}
	return out
}

func unutf16(s string) []string {
	var out []string
	for off := range 2 {
		for _, bigEndian := range []bool{false, true} {
			var units []uint16
			for i := off; i+1 < len(s); i += 2 {
				if bigEndian {
					units = append(units, uint16(s[i])<<8|uint16(s[i+1]))
				} else {
					units = append(units, uint16(s[i+1])<<8|uint16(s[i]))
				}
			}
			out = append(out, string(utf16.Decode(units)))
		}
	}
	return out
}
