// Package calc is the arithmetic of the calculate example: the tool, and
// the native server the benchmark compares it with, answer identically
// because both use it.
package calc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Args are the tool's arguments.
type Args struct {
	A         float64 `json:"a"`
	B         float64 `json:"b"`
	Operation string  `json:"operation"`
}

// Calculate applies the operation to A and B and formats the result.
func Calculate(in Args) (string, error) {
	var r float64
	switch in.Operation {
	case "add":
		r = in.A + in.B
	case "subtract":
		r = in.A - in.B
	case "multiply":
		r = in.A * in.B
	case "divide":
		if in.B == 0 {
			return "", errors.New("division by zero")
		}
		r = in.A / in.B
	default:
		// The schema's enum stops this under wasmcp; other hosts may not check.
		return "", fmt.Errorf("unknown operation %q: want add, subtract, multiply or divide", in.Operation)
	}
	// JSON has no infinity, so an overflowed result could not be fed back
	// into another call; saying so beats printing "+Inf".
	if math.IsInf(r, 0) {
		return "", errors.New("result is too large for a 64-bit float")
	}
	return FormatFloat(r), nil
}

// FormatFloat writes x as Python's repr does, since that is what callers
// of the reference tool see: always a decimal point or an exponent, so the
// result reads as a float ("15.0", not "15"), and an exponent only outside
// 1e-4 <= |x| < 1e16, so ordinary results never look like "1.5e+01".
func FormatFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	// The shortest 'e' form tells the decimal exponent exactly, which
	// math.Log10 would only approximate near powers of ten.
	s := strconv.FormatFloat(x, 'e', -1, 64)
	exp, err := strconv.Atoi(s[strings.LastIndexByte(s, 'e')+1:])
	if err == nil && (exp < -4 || exp >= 16) {
		return s
	}
	s = strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
