package abi

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a byte count, written in JSON and on the command line either as a
// plain integer or with a binary unit: "512KiB", "32MiB", "1GiB". Decimal
// units (MB) are refused rather than guessed at.
type Size int64

var sizeUnits = []struct {
	suffix string
	factor int64
}{
	{"GiB", 1 << 30},
	{"MiB", 1 << 20},
	{"KiB", 1 << 10},
	{"B", 1},
}

// ParseSize parses a size such as "64MiB" or "1048576".
func ParseSize(s string) (Size, error) {
	s = strings.TrimSpace(s)
	num, factor := s, int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, factor = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || strings.HasPrefix(num, "+") {
		return 0, fmt.Errorf("bad size %q: want a whole number of bytes, KiB, MiB or GiB", s)
	}
	if n > math.MaxInt64/factor {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return Size(n * factor), nil
}

// String formats the size in the largest unit that divides it exactly.
func (s Size) String() string {
	for _, u := range sizeUnits {
		if s != 0 && int64(s)%u.factor == 0 {
			return strconv.FormatInt(int64(s)/u.factor, 10) + u.suffix
		}
	}
	return "0B"
}

// Set implements flag.Value.
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err != nil {
		return err
	}
	*s = n
	return nil
}

// MarshalJSON implements json.Marshaler.
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (s *Size) UnmarshalJSON(b []byte) error {
	var n int64
	if err := json.Unmarshal(b, &n); err == nil {
		if n < 0 {
			return errors.New("a size must not be negative")
		}
		*s = Size(n)
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return errors.New(`a size is a number of bytes or a string such as "32MiB"`)
	}
	return s.Set(str)
}
