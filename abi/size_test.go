package abi

import (
	"encoding/json"
	"flag"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSizeString(t *testing.T) {
	tests := []struct {
		in   Size
		want string
	}{
		{0, "0B"},
		{1, "1B"},
		{1023, "1023B"},
		{1024, "1KiB"},
		{1025, "1025B"},
		{1536, "1536B"},
		{512 << 10, "512KiB"},
		{1 << 20, "1MiB"},
		{(1 << 20) + 1024, "1025KiB"},
		{32 << 20, "32MiB"},
		{1 << 30, "1GiB"},
		{3 << 30, "3GiB"},
		{(1 << 30) + (1 << 20), "1025MiB"},
		{1 << 40, "1024GiB"},
		{math.MaxInt64, "9223372036854775807B"},
		{math.MaxInt64 - (1<<30 - 1), "8589934591GiB"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.in.String(); got != tc.want {
				t.Errorf("Size(%d).String() = %q, want %q", int64(tc.in), got, tc.want)
			}
		})
	}
}

func TestSizeStringRoundTrip(t *testing.T) {
	values := []Size{0, 1, 7, 1023, 1024, 4096, 65536, 1 << 20, 5 << 30, 1<<62 + 1, math.MaxInt64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		// Mix plain values with multiples of each unit.
		shift := []uint{0, 10, 20, 30}[r.IntN(4)]
		values = append(values, Size(r.Int64N(math.MaxInt64>>shift)<<shift))
	}
	for _, s := range values {
		str := s.String()
		got, err := ParseSize(str)
		if err != nil {
			t.Errorf("ParseSize(%q) (from Size(%d)): %v", str, int64(s), err)
			continue
		}
		if got != s {
			t.Errorf("ParseSize(Size(%d).String() = %q) = %d, want %d", int64(s), str, int64(got), int64(s))
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    Size
		wantErr string // "" means success
	}{
		{"0", 0, ""},
		{"1048576", 1 << 20, ""},
		{"0B", 0, ""},
		{"17B", 17, ""},
		{"512KiB", 512 << 10, ""},
		{"64MiB", 64 << 20, ""},
		{"2GiB", 2 << 30, ""},
		{"  64MiB  ", 64 << 20, ""},
		{"1 KiB", 1 << 10, ""},
		{"9223372036854775807", math.MaxInt64, ""},
		{"9223372036854775807B", math.MaxInt64, ""},
		{"8589934591GiB", 8589934591 << 30, ""},
		{"8796093022207MiB", 8796093022207 << 20, ""},
		{"9007199254740991KiB", 9007199254740991 << 10, ""},

		{"", 0, "want a whole number"},
		{"   ", 0, "want a whole number"},
		{"KiB", 0, "want a whole number"},
		{"B", 0, "want a whole number"},
		{"abc", 0, "want a whole number"},
		{"-1", 0, "want a whole number"},
		{"-1KiB", 0, "want a whole number"},
		{"1.5MiB", 0, "want a whole number"},
		{"1e3", 0, "want a whole number"},
		{"0x10", 0, "want a whole number"},
		{"32MB", 0, "want a whole number"},
		{"32KB", 0, "want a whole number"},
		{"1GB", 0, "want a whole number"},
		{"1TiB", 0, "want a whole number"},
		{"1kib", 0, "want a whole number"},
		{"1 MiB B", 0, "want a whole number"},
		{"9223372036854775808", 0, "want a whole number"},
		{"99999999999999999999KiB", 0, "want a whole number"},
		{"8589934592GiB", 0, "too large"},
		{"8796093022208MiB", 0, "too large"},
		{"9007199254740992KiB", 0, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseSize(%q): %v, want %d", tc.in, err, int64(tc.want))
				}
				if got != tc.want {
					t.Errorf("ParseSize(%q) = %d, want %d", tc.in, int64(got), int64(tc.want))
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseSize(%q) = %d, want error containing %q", tc.in, int64(got), tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseSize(%q) error = %q, want it to contain %q", tc.in, err, tc.wantErr)
			}
			if got != 0 {
				t.Errorf("ParseSize(%q) returned %d alongside error, want 0", tc.in, int64(got))
			}
		})
	}
}

func TestSizeSet(t *testing.T) {
	t.Run("valid value replaces the size", func(t *testing.T) {
		s := Size(5)
		if err := s.Set("4KiB"); err != nil {
			t.Fatalf("Set(4KiB): %v", err)
		}
		if s != 4096 {
			t.Errorf("after Set(4KiB), size = %d, want 4096", int64(s))
		}
	})
	t.Run("invalid value leaves the size alone", func(t *testing.T) {
		for _, v := range []string{"32MB", "8589934592GiB", "-1", ""} {
			s := Size(5)
			if err := s.Set(v); err == nil {
				t.Errorf("Set(%q) = nil, want error", v)
			}
			if s != 5 {
				t.Errorf("after failed Set(%q), size = %d, want 5", v, int64(s))
			}
		}
	})
	t.Run("works as a flag.Value", func(t *testing.T) {
		var s Size
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(&s, "memory", "memory limit")
		if err := fs.Parse([]string{"-memory", "64MiB"}); err != nil {
			t.Fatalf("flag parse: %v", err)
		}
		if s != 64<<20 {
			t.Errorf("-memory 64MiB gave %d, want %d", int64(s), 64<<20)
		}
		if got := fs.Lookup("memory").Value.String(); got != "64MiB" {
			t.Errorf("flag value String() = %q, want 64MiB", got)
		}
		if err := fs.Parse([]string{"-memory", "64MB"}); err == nil {
			t.Error("-memory 64MB parsed, want error")
		}
	})
}

func TestSizeJSON(t *testing.T) {
	t.Run("marshal", func(t *testing.T) {
		tests := []struct {
			in   Size
			want string
		}{
			{0, `"0B"`},
			{100, `"100B"`},
			{32 << 20, `"32MiB"`},
			{256 << 10, `"256KiB"`},
		}
		for _, tc := range tests {
			got, err := json.Marshal(tc.in)
			if err != nil {
				t.Errorf("Marshal(%d): %v", int64(tc.in), err)
				continue
			}
			if string(got) != tc.want {
				t.Errorf("Marshal(%d) = %s, want %s", int64(tc.in), got, tc.want)
			}
		}
	})
	t.Run("unmarshal", func(t *testing.T) {
		tests := []struct {
			in      string
			want    Size
			wantErr string
		}{
			{`0`, 0, ""},
			{`123`, 123, ""},
			{`9223372036854775807`, math.MaxInt64, ""},
			{`"123"`, 123, ""},
			{`"4KiB"`, 4096, ""},
			{`"1GiB"`, 1 << 30, ""},
			{`-5`, 0, "a size must not be negative"},
			{`-1`, 0, "a size must not be negative"},
			{`"-5"`, 0, "bad size"},
			{`"32MB"`, 0, "bad size"},
			{`1.5`, 0, "a size is a number of bytes"},
			{`1e3`, 0, "a size is a number of bytes"},
			{`9223372036854775808`, 0, "a size is a number of bytes"},
			{`true`, 0, "a size is a number of bytes"},
			{`[]`, 0, "a size is a number of bytes"},
			{`{}`, 0, "a size is a number of bytes"},
		}
		for _, tc := range tests {
			var s Size
			err := json.Unmarshal([]byte(tc.in), &s)
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("Unmarshal(%s): %v, want %d", tc.in, err, int64(tc.want))
				} else if s != tc.want {
					t.Errorf("Unmarshal(%s) = %d, want %d", tc.in, int64(s), int64(tc.want))
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Unmarshal(%s) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
		}
	})
	t.Run("round trip", func(t *testing.T) {
		checkJSONRoundTrip(t, []Size{0, 1, 1000, 1024, 3 << 20, 7 << 30, math.MaxInt64})
	})
}

// checkJSONRoundTrip checks that each value survives json.Marshal and
// json.Unmarshal unchanged.
func checkJSONRoundTrip[T comparable](t *testing.T, values []T) {
	t.Helper()
	for _, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Errorf("Marshal(%v): %v", v, err)
			continue
		}
		var back T
		if err := json.Unmarshal(b, &back); err != nil {
			t.Errorf("Unmarshal(%s): %v", b, err)
			continue
		}
		if back != v {
			t.Errorf("round trip of %v via %s gave %v", v, b, back)
		}
	}
}
