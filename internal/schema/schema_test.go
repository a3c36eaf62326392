package schema

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const calcSchema = `{
  "type": "object",
  "properties": {
    "a": {"type": "number"},
    "b": {"type": "number", "maximum": 100},
    "operation": {"enum": ["add", "subtract"]},
    "tags": {"type": "array", "items": {"type": "string"}},
    "a/b": {"type": "string"}
  },
  "required": ["a", "operation"],
  "additionalProperties": false
}`

func TestValidateReportsEveryViolationWithPointer(t *testing.T) {
	s, err := Compile([]byte(calcSchema))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Validate([]byte(`{"b": 1000, "operation": "pow", "tags": ["x", 3], "a/b": 1, "extra": true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"":           "extra",
		"/b":         "maximum",
		"/operation": "add",
		"/tags/1":    "string",
		"/a~1b":      "string",
	}
	text := map[string]string{}
	for _, v := range got {
		text[v.Pointer] += v.Message + " " + v.Keyword + "; "
	}
	for p, w := range want {
		if !strings.Contains(text[p], w) {
			t.Errorf("violations at %q = %q; want one mentioning %q", p, text[p], w)
		}
	}
	var missingA bool
	for _, v := range got {
		if v.Pointer == "" && strings.Contains(v.Message, "'a'") {
			missingA = true
		}
	}
	if !missingA {
		t.Errorf("missing required property a not reported: %v", got)
	}
}

func TestValidateAcceptsConformingValue(t *testing.T) {
	s, err := Compile([]byte(calcSchema))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Validate([]byte(`{"a": 1e400, "b": 3, "operation": "add"}`))
	if err != nil || got != nil {
		t.Fatalf("Validate = %v, %v; want no violations", got, err)
	}
}

func TestCompileRejects(t *testing.T) {
	for name, src := range map[string]string{
		"not json":          `{"type":`,
		"bad keyword value": `{"type": "object", "properties": 3}`,
		"file ref":          `{"type": "object", "properties": {"x": {"$ref": "file:///etc/hostname"}}}`,
		"http ref":          `{"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:1/s.json"}}}`,
		"unknown dialect":   `{"$schema": "https://example.invalid/dialect", "type": "object"}`,
		"bad regex":         `{"type": "object", "properties": {"x": {"pattern": "("}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Compile([]byte(src))
			if err == nil {
				t.Fatal("Compile succeeded; want an error")
			}
			if strings.Contains(name, "ref") && !strings.Contains(err.Error(), "not allowed") {
				t.Errorf("error %q does not say external references are refused", err)
			}
		})
	}
}

func TestCompileAcceptsDraft7AndLocalRefs(t *testing.T) {
	for _, src := range []string{
		`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
		  "$defs": {"addr": {"type": "object", "properties": {"city": {"type": "string"}}}},
		  "properties": {"home": {"$ref": "#/$defs/addr"}}}`,
	} {
		if _, err := Compile([]byte(src)); err != nil {
			t.Errorf("Compile(%s) = %v", src, err)
		}
	}
}

func TestViolationsAreBounded(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Validate([]byte(`{"xs":[` + strings.Repeat("1,", 500) + `1]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxViolations+1 {
		t.Fatalf("got %d violations; want the first %d and a count of the rest", len(got), MaxViolations)
	}
	if last := got[MaxViolations]; last.Omitted != 501-MaxViolations || last.String() != "… and 481 more violations, not shown" {
		t.Errorf("last entry = %+v (%q); want one standing for the 481 left out", last, last)
	}
	for i, v := range got[:MaxViolations] {
		if want := "/xs/" + strconv.Itoa(i); i < 2 && v.Pointer != want {
			t.Errorf("violation %d at %q; want %q (the first places come first)", i, v.Pointer, want)
		}
	}
}

func TestValidateRefusesNumbersTooLargeToCheck(t *testing.T) {
	// The library compares numbers as math/big rationals; past an exponent
	// of a million math/big gives up and the library panicked.
	s, err := Compile([]byte(`{"type":"object","properties":{"a":{"type":"number","maximum":100}},"additionalProperties":{"type":"array","uniqueItems":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	many := "[" + strings.Repeat("1,", 30) + "1e9999999]"
	for _, value := range []string{`{"a":1e9999999}`, `{"a":1e1000000}`, `{"a":-1E+0000001000001}`, `{"a":` + strings.Repeat("9", 1001) + `}`, `{"b":` + many + `}`} {
		got, err := s.Validate([]byte(value))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Keyword != "" || !strings.Contains(got[0].Message, "too large for this server to check") {
			t.Errorf("%.40s: violations %v; want one saying the number is too large to check", value, got)
		}
	}
	for _, value := range []string{`{"a":1e-1000}`, `{"a":` + strings.Repeat("9", 1000) + `e-1000}`, `{"a":0.5e+01}`} {
		if got, err := s.Validate([]byte(value)); err != nil || len(got) != 0 {
			t.Errorf("%.40s: Validate = %v, %v; want it checked and passed", value, got, err)
		}
	}
}

func TestValidatorPanicsAreViolations(t *testing.T) {
	s, err := Compile([]byte(`{"maximum":100}`))
	if err != nil {
		t.Fatal(err)
	}
	// validate is what ValidateValue runs once the value is known safe;
	// this value is not, and makes the library panic.
	got := s.validate(json.Number("1e9999999"))
	if len(got) != 1 || !strings.Contains(got[0].Message, "the schema validator failed") {
		t.Fatalf("violations %v; want one saying the validator failed", got)
	}
}

func TestValidateRefusesValuesTooLargeToCheck(t *testing.T) {
	cheap, err := Compile([]byte(`{"type":"array","items":{"type":"number"}}`))
	if err != nil {
		t.Fatal(err)
	}
	costly, err := Compile([]byte(`{"type":"array","items":{"allOf":[` + strings.Repeat(`{"type":"number"},`, 15) + `{"type":"number"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	numbers := func(n int) []byte { return []byte("[" + strings.Repeat("0,", n-1) + "0]") }
	// The array costs one evaluation, and one more per item; each item
	// costs what its schemas do: 1, or 17.
	for _, tc := range []struct {
		s      *Schema
		values int
		ok     bool
	}{
		{cheap, (MaxWork - 1) / 2, true},
		{cheap, (MaxWork-1)/2 + 1, false},
		{costly, (MaxWork - 1) / 18, true},
		{costly, (MaxWork-1)/18 + 1, false},
	} {
		got, err := tc.s.Validate(numbers(tc.values))
		if err != nil {
			t.Fatal(err)
		}
		if tc.ok && len(got) != 0 || !tc.ok && (len(got) != 1 || !strings.Contains(got[0].Message, "too large to check against this schema")) {
			t.Errorf("%d numbers: violations %v", tc.values, got)
		}
	}
	// Text counts by its length.
	text := []byte(`["` + strings.Repeat("x", MaxWork*textSpan) + `"]`)
	if got, _ := cheap.Validate(text); len(got) != 1 || !strings.Contains(got[0].Message, "too large to check") {
		t.Errorf("a %d-byte string: violations %v; want it too large to check", len(text), got)
	}
	// A costly place costs only where it is: a union at the root leaves
	// room for many items below it.
	union, err := Compile([]byte(`{"oneOf":[` + strings.Repeat(`{"type":"object","required":["a"]},`, 199) + `{"type":"object"}],
		"properties":{"xs":{"type":"array","items":{"type":"number"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := union.Validate([]byte(`{"a":1,"xs":` + string(numbers(100000)) + `}`)); len(got) != 1 || got[0].Keyword == "" {
		t.Errorf("100,000 items under a 400-evaluation root: violations %v; want the schema's own (oneOf matches many)", got)
	}
}

func TestViolationTextIsCapped(t *testing.T) {
	s, err := Compile([]byte(bigEnum(50000)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Validate([]byte(`{"code":"nope"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Message) > MaxMessage || !strings.Contains(got[0].Message, "'value-0000015', … (49,984 more allowed values, not shown)") {
		t.Errorf("violations %v; want one short message listing the first values and counting the rest", got)
	}

	s, err = Compile([]byte(`{"type":"object","additionalProperties":{"allOf":[` + strings.Repeat(`{"pattern":"^a"},`, 7) + `{"pattern":"^a"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 3000)
	got, err = s.Validate([]byte(`{"` + long + `":"` + long + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("violations %v; want some shown, then a count of the rest", got)
	}
	size := 0
	for _, v := range got[:len(got)-1] {
		size += len(v.String())
		if len(v.Pointer) > MaxPointer || len(v.Message) > MaxMessage || !utf8.ValidString(v.String()) {
			t.Errorf("violation %q is over the bounds or not valid UTF-8", v)
		}
		if !strings.Contains(v.Pointer, "(cut; 6,001 bytes in all)") || !strings.Contains(v.Message, "(cut; 6,000 bytes in all)' does not match pattern") {
			t.Errorf("violation %q does not say its pointer and the value it quotes were cut", v)
		}
	}
	if size > MaxText {
		t.Errorf("violations are %d bytes of text; the bound is %d", size, MaxText)
	}
	if last := got[len(got)-1]; last.Omitted != 8-(len(got)-1) {
		t.Errorf("%d violations shown, the last %q; want the rest of the 8 counted", len(got)-1, last)
	}
}

// A model that sends a date in the wrong form hears the form to use, not
// the layout string of Go's time parser.
func TestFormatViolationsSayTheFormToUse(t *testing.T) {
	s, err := Compile([]byte(`{"type":"object","properties":{
		"d":{"type":"string","format":"date"},"dt":{"type":"string","format":"date-time"},
		"t":{"type":"string","format":"time"},"u":{"type":"string","format":"uri"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Validate([]byte(`{"d":"03/01/2026","dt":"yesterday","t":"25:00","u":"::"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/d":  `"03/01/2026" is not a valid date: write it as YYYY-MM-DD (an RFC 3339 full-date), such as 2026-03-31`,
		"/dt": `"yesterday" is not a valid date-time: write it as an RFC 3339 date-time with an offset, such as 2026-03-31T14:30:00Z`,
		"/t":  `"25:00" is not a valid time: write it as an RFC 3339 time with an offset, such as 14:30:00Z`,
		"/u":  `"::" is not a valid uri: write it as an absolute URI with a scheme, such as https://example.com/page`,
	}
	if len(got) != len(want) {
		t.Fatalf("violations = %v; want one for each of %d values", got, len(want))
	}
	for _, v := range got {
		if v.Message != want[v.Pointer] {
			t.Errorf("at %q: %q; want %q", v.Pointer, v.Message, want[v.Pointer])
		}
		if strings.Contains(v.Message, "2006") || strings.Contains(v.Message, "parse") {
			t.Errorf("at %q: %q quotes Go's parser", v.Pointer, v.Message)
		}
	}
}
