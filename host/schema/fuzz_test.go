package schema

import (
	"testing"
)

// FuzzCompile feeds arbitrary schemas and instances to the validator, as a
// hostile manifest and a hostile client would: compiling and validating
// must never panic, and a schema that compiles must validate any JSON.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(calcSchema), []byte(`{"a":1,"operation":"add"}`))
	f.Add([]byte(`{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`), []byte(`1`))
	f.Add([]byte(`{"type":"object","properties":{"p":{"pattern":"^(a+)+$"}}}`), []byte(`{"p":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`))
	f.Add([]byte(`{"allOf":[{"anyOf":[{"oneOf":[{"not":{}}]}]}]}`), []byte(`[[[[]]]]`))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`), []byte(`{}`))
	f.Add([]byte(`{"format":"date","type":"string"}`), []byte(`"2026-13-45"`))
	f.Fuzz(func(t *testing.T, schemaDoc, instance []byte) {
		s, err := Compile(schemaDoc)
		if err != nil {
			return
		}
		vs, err := s.Validate(instance)
		if err != nil {
			return // not JSON
		}
		if len(vs) > MaxViolations {
			t.Fatalf("%d violations; the bound is %d", len(vs), MaxViolations)
		}
	})
}
