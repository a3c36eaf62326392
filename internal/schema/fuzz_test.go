package schema

import (
	"testing"
)

// FuzzCompile feeds arbitrary schemas and instances to the validator, as a
// hostile manifest and a hostile client would: compiling and validating
// must never panic, and a schema that compiles must validate any JSON
// within the bounds on what is reported.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(calcSchema), []byte(`{"a":1,"operation":"add"}`))
	f.Add([]byte(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`), []byte(`1`))
	f.Add([]byte(`{"type":"object","properties":{"p":{"pattern":"^(a+)+$"}}}`), []byte(`{"p":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`))
	f.Add([]byte(`{"allOf":[{"anyOf":[{"oneOf":[{"not":{}}]}]}]}`), []byte(`[[[[]]]]`))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`), []byte(`{}`))
	f.Add([]byte(`{"format":"date","type":"string"}`), []byte(`"2026-13-45"`))
	f.Add([]byte(doubling(12)), []byte(`{"x":1}`))
	f.Add([]byte(`{"$defs":{"d":{"allOf":[{"items":{"$ref":"#/$defs/d"}},{"items":{"$ref":"#/$defs/d"}}]}},"$ref":"#/$defs/d"}`), []byte(`[[[[[[]]]]]]`))
	f.Add([]byte(`{"maximum":1,"uniqueItems":true,"items":{"multipleOf":3}}`), []byte(`[1e9999999,1e-9999999,1e1000000]`))
	f.Add([]byte(`{"enum":["a","b"],"properties":{"x":{"enum":[1,2,3]}}}`), []byte(`{"x":"`+"\xff\xfe"+`"}`))
	f.Fuzz(func(t *testing.T, schemaDoc, instance []byte) {
		s, err := Compile(schemaDoc)
		if err != nil {
			return
		}
		vs, err := s.Validate(instance)
		if err != nil {
			return // not JSON
		}
		if len(vs) > MaxViolations+1 {
			t.Fatalf("%d violations; the bound is %d and a count of the rest", len(vs), MaxViolations)
		}
		size := 0
		for i, v := range vs {
			if v.Omitted > 0 && i != len(vs)-1 {
				t.Fatalf("violation %d of %d counts the omitted", i, len(vs))
			}
			if len(v.Pointer) > MaxPointer || len(v.Message) > MaxMessage {
				t.Fatalf("violation %q is over the bounds", v)
			}
			size += len(v.String())
		}
		if size > MaxText+100 {
			t.Fatalf("violations are %d bytes of text; the bound is %d and a count of the rest", size, MaxText)
		}
	})
}
