package calc

import (
	"math"
	"testing"
)

func TestCalculate(t *testing.T) {
	tests := []struct {
		a, b float64
		op   string
		want string
	}{
		{10, 5, "add", "15.0"},
		{10, 5, "subtract", "5.0"},
		{10, 5, "multiply", "50.0"},
		{10, 5, "divide", "2.0"},
		{5, 2, "divide", "2.5"},
		{1, 3, "divide", "0.3333333333333333"},
		{0.1, 0.2, "add", "0.30000000000000004"},
		{2, 5, "subtract", "-3.0"},
		{math.Copysign(0, -1), 5, "multiply", "-0.0"},
		{0, 5, "divide", "0.0"},
		{1e15, 1, "multiply", "1000000000000000.0"},
		{1e16, 1, "multiply", "1e+16"},
		{1.5e300, 1, "multiply", "1.5e+300"},
		{0.0001, 1, "multiply", "0.0001"},
		{0.00001, 1, "multiply", "1e-05"},
		{-1, 3e7, "divide", "-3.3333333333333334e-08"},
	}
	for _, tt := range tests {
		got, err := Calculate(Args{A: tt.a, B: tt.b, Operation: tt.op})
		if err != nil || got != tt.want {
			t.Errorf("%v %s %v = %q, %v; want %q", tt.a, tt.op, tt.b, got, err, tt.want)
		}
	}
}

func TestCalculateErrors(t *testing.T) {
	tests := []struct {
		in   Args
		want string
	}{
		{Args{A: 1, B: 0, Operation: "divide"}, "division by zero"},
		{Args{A: 0, B: 0, Operation: "divide"}, "division by zero"},
		{Args{A: 1, B: math.Copysign(0, -1), Operation: "divide"}, "division by zero"},
		{Args{A: 1, B: 2, Operation: "power"}, `unknown operation "power": want add, subtract, multiply or divide`},
		{Args{A: 1, B: 2}, `unknown operation "": want add, subtract, multiply or divide`},
		{Args{A: math.MaxFloat64, B: 10, Operation: "multiply"}, "result is too large for a 64-bit float"},
	}
	for _, tt := range tests {
		got, err := Calculate(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v = %q, %v; want error %q", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	tests := map[float64]string{
		15:           "15.0",
		2.5:          "2.5",
		-7:           "-7.0",
		0:            "0.0",
		1.0 / 3:      "0.3333333333333333",
		123456789.25: "123456789.25",
		9.999e15:     "9999000000000000.0",
		1e22:         "1e+22",
		5e-324:       "5e-324",
		math.Inf(1):  "+Inf",
	}
	for x, want := range tests {
		if got := FormatFloat(x); got != want {
			t.Errorf("FormatFloat(%v) = %q, want %q", x, got, want)
		}
	}
	if got := FormatFloat(math.NaN()); got != "NaN" {
		t.Errorf("FormatFloat(NaN) = %q", got)
	}
}
