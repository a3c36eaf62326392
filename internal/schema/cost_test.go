package schema

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// doubling is the bomb of $defs that each refer twice to the one before:
// validating anything against it evaluates 2^(n+2)-2 schemas at one place.
func doubling(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{"d0":{"type":"number"}`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `,"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	fmt.Fprintf(&b, `},"properties":{"x":{"$ref":"#/$defs/d%d"}}}`, n)
	return b.String()
}

// most is the cost of the costliest place in a plan.
func most(p *place) int {
	seen := map[*place]bool{}
	n := 0
	var walk func(p *place)
	walk = func(p *place) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		n = max(n, p.cost)
		for _, q := range p.named {
			walk(q)
		}
		for _, q := range p.indexed {
			walk(q)
		}
		walk(p.anyName)
		walk(p.keyName)
		walk(p.anyIndex)
	}
	walk(p)
	return n
}

func TestEvaluationsPerPlace(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         int
	}{
		{"plain object", calcSchema, 1},
		{"allOf of two", `{"allOf":[{},{}]}`, 3},
		{"a $ref counts its target", `{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, 2},
		// The root and the property are different places.
		{"property under a union", `{"anyOf":[{"properties":{"x":{}}},{"properties":{"x":{}}}]}`, 3},
		// Both branches apply their own schema to x.
		{"two schemas for one property", `{"properties":{"x":{"allOf":[{},{}]}},"allOf":[{"properties":{"x":{}}}]}`, 4},
		{"recursion that repeats", `{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`, 2},
		{"items and contains at one index", `{"items":{"allOf":[{},{}]},"contains":{}}`, 4},
		{"tuple, then the rest", `{"prefixItems":[{"allOf":[{},{},{}]}],"items":{}}`, 4},
		{"a small doubling", doubling(7), 510},
		{"lists cost by the span", `{"enum":[` + strings.Repeat(`1,`, 2*listSpan-1) + `1]}`, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if got := most(s.plan); got != tc.want {
				t.Errorf("evaluations at the costliest place = %d; want %d", got, tc.want)
			}
		})
	}
}

func TestCompileRefusesCostlySchemas(t *testing.T) {
	for _, tc := range []struct{ name, schema, says string }{
		{"doubling $defs", doubling(10), "more than 1000 schema evaluations at /x"},
		{"doubling $defs, deep", doubling(40), "more than 1000 schema evaluations at /x"},
		{"doubling through items", `{"$defs":{"d":{"allOf":[{"items":{"$ref":"#/$defs/d"}},{"items":{"$ref":"#/$defs/d"}}]}},"$ref":"#/$defs/d"}`,
			"more than 1000 schema evaluations at /<any index>/<any index>/"},
		{"doubling through properties", `{"$defs":{"d":{"properties":{"a":{"$ref":"#/$defs/d"}},"patternProperties":{"":{"$ref":"#/$defs/d"}}}},"$ref":"#/$defs/d"}`,
			"more than 1000 schema evaluations at /a/a/a/"},
		{"wide allOf", `{"allOf":[` + strings.Repeat(`{},`, 1000) + `{}]}`, "more than 1000 schema evaluations at the root"},
		{"self through allOf", `{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, "schema at /$defs/a applies itself again at the same place"},
		{"self through anyOf", `{"$defs":{"a":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "applies itself again"},
		{"root through not", `{"not":{"$ref":"#"}}`, "schema at the root applies itself again"},
		{"dynamic reference", `{"$dynamicAnchor":"node","properties":{"x":{"$dynamicRef":"#node"}}}`, "uses $dynamicRef to a $dynamicAnchor"},
		// The 2020-12 meta-schema extends itself through $dynamicRef.
		{"the 2020-12 meta-schema", `{"properties":{"s":{"$ref":"https://json-schema.org/draft/2020-12/schema"}}}`,
			"schema at https://json-schema.org/draft/2020-12/meta/"},
		{"recursive reference", `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"properties":{"x":{"$recursiveRef":"#"}}}`,
			"uses $recursiveRef to a $recursiveAnchor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Compile = %v; want an error saying %q", err, tc.says)
			}
		})
	}
}

// interleaved is a schema of cheap places in more combinations than the
// cost analysis will look at: nine recursions through "a", of prime
// lengths, that come round together only every 223,092,870 levels.
func interleaved() string {
	var defs, all []string
	for _, p := range []int{2, 3, 5, 7, 11, 13, 17, 19, 23} {
		for j := range p {
			defs = append(defs, fmt.Sprintf(`"c%d_%d":{"properties":{"a":{"$ref":"#/$defs/c%d_%d"}}}`, p, j, p, (j+1)%p))
		}
		all = append(all, fmt.Sprintf(`{"$ref":"#/$defs/c%d_0"}`, p))
	}
	return `{"$defs":{` + strings.Join(defs, ",") + `},"allOf":[` + strings.Join(all, ",") + `]}`
}

func TestCostAnalysisIsBounded(t *testing.T) {
	for name, src := range map[string]string{"interleaved": interleaved(), "crossed": crossed()} {
		if _, err := Compile([]byte(src)); err == nil || !strings.Contains(err.Error(), "too intricate") {
			t.Errorf("%s: Compile = %v; want it refused as too intricate to bound", name, err)
		}
	}
}

func TestCompileAcceptsLargeListsAndStaticReferences(t *testing.T) {
	for name, src := range map[string]string{
		"a 50,000-value enum": bigEnum(50000),
		// $dynamicRef to an anchor its target lacks is a plain $ref.
		"static $dynamicRef":     `{"$defs":{"a":{"type":"string"}},"properties":{"x":{"$dynamicRef":"#/$defs/a"}}}`,
		"at the bound":           `{"allOf":[` + strings.Repeat(`{},`, MaxEvaluations-2) + `{}]}`,
		"draft-07's meta-schema": `{"properties":{"s":{"$ref":"http://json-schema.org/draft-07/schema#"}}}`,
	} {
		if _, err := Compile([]byte(src)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func bigEnum(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"code":{"enum":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(strconv.Quote(fmt.Sprintf("value-%07d", i)))
	}
	b.WriteString(`]}}}`)
	return b.String()
}

func TestCompileRefusesDeepOrLargeSchemas(t *testing.T) {
	props := func(n int, v string) string {
		var b strings.Builder
		b.WriteString(`{"properties":{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"p%d":%s`, i, v)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	for _, tc := range []struct {
		name, schema string
		says         string // "" when the schema is within the bounds
	}{
		{"deepest allowed", nots(MaxDepth - 1), ""},
		{"one level too deep", nots(MaxDepth), "more than 64 levels deep"},
		{"the 3,000-deep bomb", nots(3000), "more than 64 levels deep"},
		{"deep in an array", `{"enum":[` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `]}`, "more than 64 levels deep"},
		// The root and "properties" are two of the objects.
		{"largest allowed", props(MaxNodes-2, "{}"), ""},
		{"one object too many", props(MaxNodes-1, "{}"), "more than 1024 objects and booleans"},
		{"booleans count", props(MaxNodes-1, "true"), "more than 1024 objects and booleans"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.schema))
			switch {
			case tc.says == "" && err != nil:
				t.Fatalf("Compile = %v; want it compiled", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)):
				t.Fatalf("Compile = %v; want an error saying %q", err, tc.says)
			}
		})
	}
}

// crossed is a schema of 500 places that each apply 200 schemas naming
// 500 properties between them: the analysis's work grows with the product.
func crossed() string {
	var props, refs []string
	for i := range 500 {
		props = append(props, fmt.Sprintf(`"p%d":{"$ref":"#/$defs/x"}`, i))
	}
	for range 100 {
		refs = append(refs, `{"$ref":"#/$defs/x"}`)
	}
	return `{"$defs":{"x":{"properties":{` + strings.Join(props, ",") + `}}},"allOf":[` + strings.Join(refs, ",") + `]}`
}
