package egress

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRedactorSpellings covers what the HTTP tests cannot send in a
// header: characters outside ASCII and the BMP, bytes that are not UTF-8,
// and escapes mixed within one value.
func TestRedactorSpellings(t *testing.T) {
	const unicode = "clé-🔑-k3y"
	for _, tc := range []struct {
		name, value, text string
	}{
		{"mixed escapes", secretValue, `a "sk%2dlive\u002D7f3a9c&#45;do-not\x2dleak" b`},
		{"a character outside the BMP, as a JSON surrogate pair", unicode, transforms["jsonascii"](unicode)},
		{"and as HTML references", unicode, transforms["htmldec"](unicode)},
		{"and percent-encoded", unicode, transforms["percent"](unicode)},
		{"and in UTF-16", unicode, "x" + transforms["utf16be"](unicode)},
		{"and in base64", unicode, transforms["base64"]("xy" + unicode)},
		{"a byte that is not UTF-8, escaped", "k\xffey-value", `k\xffey-value k%FFey-value`},
		{"upper-case hex of a longer text", secretValue, strings.ToUpper(fmt.Sprintf("%x", "Bearer "+secretValue))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := newRedactor(tc.value).redact([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			got := string(b)
			if !strings.Contains(got, redactedText) && !strings.Contains(got, "\x00[") {
				t.Fatalf("nothing redacted in %q", got)
			}
			for _, e := range exposures(got) {
				if strings.Contains(strings.ToLower(e), strings.ToLower(tc.value)) {
					t.Fatalf("%q still shows the value: %q", got, e)
				}
			}
		})
	}
}

// TestRedactorTakesTheEdges checks that the base64 characters around a
// match, which hold bits of the value, go with it.
func TestRedactorTakesTheEdges(t *testing.T) {
	for shift := range 3 {
		blob := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00", shift) + secretValue + "\x00\x00\x00"))
		b, err := newRedactor(secretValue).redact([]byte(blob))
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		want := strings.Repeat("A", shift*4/3) + redactedText
		if !strings.HasPrefix(got, want) {
			t.Errorf("shift %d: got %q, want it to start %q", shift, got, want)
		}
	}
}

// TestRedactorLeavesOtherTextAlone checks texts that look like, but are
// not, the secret: they come back as they were, the same slice.
func TestRedactorLeavesOtherTextAlone(t *testing.T) {
	r := newRedactor(secretValue)
	for _, text := range []string{
		"",
		"sk-live-7f3a9c-do-not-lea",
		"sk-live-7f3a9c-do-not-lea%6",
		`{"key":"sk-live-\u00","n":"&#;&#x;&amp","p":"%zz"}`,
		base64.StdEncoding.EncodeToString([]byte(secretValue))[:20],
		string(sample(4 << 10)),
	} {
		b := []byte(text)
		if got, err := r.redact(b); err != nil || len(b) > 0 && &got[0] != &b[0] || !bytes.Equal(got, b) {
			t.Errorf("%.60q changed to %.60q (%v)", text, got, err)
		}
	}
}

// TestRedactorWorkIsBounded feeds a redactor the worst text there is for
// its secret: near-copies of a periodic value, overlapping at every
// position. It gives up, and the answer is refused rather than handed on
// unchecked.
func TestRedactorWorkIsBounded(t *testing.T) {
	r := newRedactor(strings.Repeat("ab", 500))
	text := []byte(strings.Repeat("ab", 32<<10))
	if _, err := r.redact(text); !errors.Is(err, errTooCostly) {
		t.Fatalf("got %v, want errTooCostly", err)
	}
	if got, found := r.redactString(string(text)); !found || got != redactedText {
		t.Fatalf("redactString kept %.40q", got)
	}
	if !r.contains(string(text)) {
		t.Fatal("a text too costly to check passed as free of the secret")
	}
}

// sample is JSON-like text with escapes, URLs and base64 in it, none of
// them a secret.
func sample(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for b.Len() < n {
		raw := make([]byte, 24)
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		fmt.Fprintf(&b, `{"id":%d,"url":"https:\/\/example.com\/a%%20b?q=1&amp;r=2","blob":"%s","name":"caf\u00e9 sk-live"},`+"\n",
			rng.IntN(1e6), base64.StdEncoding.EncodeToString(raw))
	}
	return b.Bytes()[:n]
}

// BenchmarkRedact measures the search of a 4 MiB answer (the default
// MaxResponseBody) for one secret. An answer to a request that carried no
// secret is not searched at all.
func BenchmarkRedact(b *testing.B) {
	body := sample(4 << 20)
	r := newRedactor(secretValue)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := r.redact(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewRedactor measures the cost of the first request of a call
// that carries a given secret.
func BenchmarkNewRedactor(b *testing.B) {
	for b.Loop() {
		newRedactor(secretValue)
	}
}
