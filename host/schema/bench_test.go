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
// compiling each bound allows.
func atBounds() map[string]string {
	chains := (MaxNodes - 1) / (MaxDepth - 1)
	var props strings.Builder
	props.WriteString(`{"type":"object","properties":{`)
	for i := range MaxNodes/2 - 1 {
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
			if err := checkSize(doc); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				Compile([]byte(src))
			}
		})
	}
}
