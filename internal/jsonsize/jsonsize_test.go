package jsonsize

import (
	"encoding/json"
	"strings"
	"testing"
)

// encoded is what the figure must match: json.Marshal's encoding.
func encoded(t testing.TB, s string) int {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestStringMatchesJSONMarshal(t *testing.T) {
	for _, s := range []string{
		"", "plain", "\x00\x01\x1f", "\b\f\n\r\t", `"\`, "<>&", "é日😀",
		"\u2028\u2029", "\xff", "a\xc3\x28b", "\xe6\x97", "\xf0\x9f\x98", strings.Repeat("\x01", 1000),
	} {
		if got, want := String(s), encoded(t, s); got != want {
			t.Errorf("String(%q) = %d; json.Marshal writes %d bytes", s, got, want)
		}
		if got, want := String([]byte(s)), encoded(t, s); got != want {
			t.Errorf("String([]byte(%q)) = %d; json.Marshal writes %d bytes", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\x01\"\\\n<", "\u2028é\xff", "\xf0\x9f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(s), encoded(t, s); got != want {
			t.Errorf("String(%q) = %d; json.Marshal writes %d bytes", s, got, want)
		}
	})
}

// BenchmarkString measures a scan of 1 MiB of control bytes, the most
// costly to encode.
func BenchmarkString(b *testing.B) {
	s := strings.Repeat("\x01", 1<<20)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		String(s)
	}
}
