package schema

import (
	"strings"
	"testing"
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
	if len(got) != MaxViolations {
		t.Fatalf("got %d violations; want the first %d", len(got), MaxViolations)
	}
}
