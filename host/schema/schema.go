// Package schema compiles tool schemas and checks JSON values against them,
// wrapping santhosh-tekuri/jsonschema (a complete JSON Schema 2020-12
// implementation) with the settings a server that loads untrusted schemas
// needs.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// MaxViolations bounds how many violations Validate reports; a model needs
// the first few to fix its call, and an attacker's deeply invalid argument
// must not produce an unbounded error text.
const MaxViolations = 20

// Bounds on a schema, checked before it is compiled. The compiler's work
// grows with the square of the number of subschemas and faster than that
// with their depth (docs/design.md, "Manifests and schemas").
const (
	// MaxDepth bounds how deep a schema's JSON nests: {"not": {}} is 2.
	MaxDepth = 64
	// MaxNodes bounds how many objects and booleans, each a possible
	// subschema, a schema holds.
	MaxNodes = 1024
)

// Schema is a compiled JSON Schema.
type Schema struct {
	s *jsonschema.Schema
}

// refuseLoader refuses every external reference. The library's default
// loader reads file:// URLs, which would let a manifest read the server's
// files (and leak them into error text); network references are forbidden by
// MCP 2026-07-28 outright. Standard meta-schemas are built into the library
// and need no loader.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s); use $defs within the schema", url)
}

// resourceURL names the schema being compiled. It only has to be unique
// within one compiler, which compiles one schema.
const resourceURL = "urn:wasmcp:schema"

// Compile compiles a schema; 2020-12 is the dialect unless $schema says
// otherwise. The schema is checked against its meta-schema, against
// MaxDepth and MaxNodes before that, and against MaxEvaluations after.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	if err := checkSize(doc); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// 2020-12 makes "format" an annotation by default; tools declare
	// formats because they rely on them, and a model that sends "03/01/2026"
	// for a date should hear so before the tool runs.
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(resourceURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(resourceURL)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %s", strings.ReplaceAll(err.Error(), resourceURL, "schema"))
	}
	if _, err := evaluations(s); err != nil {
		return nil, fmt.Errorf("schema refused: %w", err)
	}
	return &Schema{s: s}, nil
}

// checkSize holds a schema to MaxDepth and MaxNodes. It stops at the first
// level past the bound, so its own recursion is bounded too.
func checkSize(doc any) error {
	nodes := 0
	var walk func(v any, depth int) error
	walk = func(v any, depth int) error {
		var elems iter.Seq[any]
		switch v := v.(type) {
		case map[string]any:
			nodes++
			elems = maps.Values(v)
		case []any:
			elems = slices.Values(v)
		case bool:
			nodes++
		}
		if nodes > MaxNodes {
			return fmt.Errorf("schema has more than %d objects and booleans (each a possible subschema), this server's limit: make it smaller, sharing repeated parts through $defs", MaxNodes)
		}
		if elems == nil {
			return nil
		}
		if depth > MaxDepth {
			return fmt.Errorf("schema nests more than %d levels deep, this server's limit: move nested parts into $defs and refer to them with $ref", MaxDepth)
		}
		for e := range elems {
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(doc, 1)
}

// Violation is one way a value fails a schema.
type Violation struct {
	// Pointer is the JSON pointer of the failing value ("" is the root).
	Pointer string
	// Keyword is the JSON pointer of the failing keyword in the schema.
	Keyword string
	// Message says what is wrong, in words a model can act on.
	Message string
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("at %s: %s", p, v.Message)
}

// Validate checks a JSON document against the schema. It returns nil when the
// document conforms, and an error only when data is not JSON.
func (s *Schema) Validate(data []byte) ([]Violation, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return s.ValidateValue(v), nil
}

// ValidateValue checks a decoded value. Numbers must be json.Number or
// float64, as jsonschema.UnmarshalJSON or encoding/json produce.
func (s *Schema) ValidateValue(v any) []Violation {
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	return leaves(ve)
}

// leaves flattens the library's error tree into its leaf causes, which are
// the violations a caller can fix; inner nodes only say "does not validate".
func leaves(ve *jsonschema.ValidationError) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{
				Pointer: pointer(e.InstanceLocation),
				Keyword: e.SchemaURL,
				Message: e.ErrorKind.LocalizedString(printer),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	for i := range out {
		out[i].Keyword = keywordPointer(out[i].Keyword)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	if len(out) > MaxViolations {
		out = out[:MaxViolations]
	}
	return out
}

// keywordPointer strips the compiler's resource URL from a schema location,
// leaving the JSON pointer within the tool's schema.
func keywordPointer(loc string) string {
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		return loc[i+1:]
	}
	return loc
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointer renders a location as an RFC 6901 JSON pointer.
func pointer(segments []string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		pointerEscaper.WriteString(&b, s)
	}
	return b.String()
}
