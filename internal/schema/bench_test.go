package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// nots nests n "not"s: {"not":{"not":{}}} is 2, and nests 3 deep.
func nots(n int) string { return strings.Repeat(`{"not":`, n) + `{}` + strings.Repeat(`}`, n) }

// atBounds are schemas at MaxDepth and MaxNodes, shaped for the most
// compiling each bound allows, and schemas that take the cost analysis as
// far as it goes.
func atBounds() map[string]string {
	chains := (MaxNodes - 1) / (MaxDepth - 1)
	var props strings.Builder
	props.WriteString(`{"type":"object","properties":{`)
	for i := range MaxNodes - 2 {
		if i > 0 {
			props.WriteString(",")
		}
		fmt.Fprintf(&props, `"p%d":{"type":"string"}`, i)
	}
	props.WriteString(`}}`)
	return map[string]string{
		"deepest":       nots(MaxDepth - 1),
		"widest":        `{"allOf":[` + strings.Repeat(`{},`, MaxNodes-2) + `{}]}`,
		"deep-and-wide": `{"allOf":[` + strings.Repeat(nots(MaxDepth-3)+",", chains-1) + nots(MaxDepth-3) + `]}`,
		"properties":    props.String(),
		// Not bounds on size: schemas that take the cost analysis as far as
		// it goes.
		"analysis-interleaved": interleaved(),
		"analysis-crossed":     crossed(),
	}
}

// BenchmarkCompileAtBounds measures what loading a schema costs at the
// bounds on its size, whether or not the cost analysis then refuses it:
// the figures docs/design.md gives.
func BenchmarkCompileAtBounds(b *testing.B) {
	for name, src := range atBounds() {
		b.Run(name, func(b *testing.B) {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := checkSize(doc); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				Compile([]byte(src))
			}
			b.ReportMetric(float64(len(src)), "schema-bytes")
		})
	}
}

// allOf is a schema that applies s n times at one place.
func allOf(n int, s string) string {
	return `{"allOf":[` + strings.Repeat(s+",", n-1) + s + `]}`
}

// array is a JSON array of n copies of v.
func array(n int, v string) string { return "[" + strings.Repeat(v+",", n-1) + v + "]" }

// largest is the largest value of(n) that the budget lets through.
func largest(s *Schema, of func(n int) string) []byte {
	lo, hi := 1, 1<<24 // of(lo) fits; of(hi) does not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(of(mid)))
		if err != nil {
			panic(err)
		}
		if work, _ := s.plan.work(v); work <= MaxWork {
			lo = mid
		} else {
			hi = mid
		}
	}
	return []byte(of(lo))
}

// BenchmarkValidateAtBudget measures the costliest validations MaxWork lets
// through: values as large as the budget allows, each failing or costly.
func BenchmarkValidateAtBudget(b *testing.B) {
	var enum strings.Builder
	enum.WriteString(`{"items":{"enum":[`)
	for i := range 50000 {
		if i > 0 {
			enum.WriteString(",")
		}
		fmt.Fprintf(&enum, `"value-%07d"`, i)
	}
	enum.WriteString(`]}}`)
	for _, c := range []struct {
		name, schema string
		value        func(n int) string
	}{
		{"every-item-fails", `{"items":{"type":"string"}}`, func(n int) string { return array(n, "0") }},
		{"31-failures-per-item", `{"items":` + allOf(31, `{"type":"string"}`) + `}`, func(n int) string { return array(n, "0") }},
		{"patterns-over-text", allOf(7, `{"pattern":"^(a|b)*c$"}`), func(n int) string { return `"` + strings.Repeat("ab", n) + `"` }},
		{"enum-misses", enum.String(), func(n int) string { return array(n, `"value-0000000x"`) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := Compile([]byte(c.schema))
			if err != nil {
				b.Fatal(err)
			}
			value := largest(s, c.value)
			vs, err := s.Validate(value)
			if err != nil || len(vs) == 0 || vs[0].Keyword == "" {
				b.Fatalf("Validate = %v, %v; want the schema's own violations", vs, err)
			}
			for b.Loop() {
				s.Validate(value)
			}
			b.ReportMetric(float64(len(value)), "value-bytes")
		})
	}
}
