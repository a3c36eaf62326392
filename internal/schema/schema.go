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
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// MaxViolations bounds how many violations Validate reports; a model needs
// the first few to fix its call, and an attacker's deeply invalid argument
// must not produce an unbounded error text.
const MaxViolations = 20

// Bounds on the text of the violations Validate reports. A message can
// quote the value and the schema (an enum's every value), and a pointer
// the value's every level, so each is cut, and so is the list.
const (
	// MaxMessage bounds one violation's message, in bytes.
	MaxMessage = 512
	// MaxPointer bounds one violation's pointer, in bytes.
	MaxPointer = 256
	// MaxText bounds the text of all the violations Validate returns.
	MaxText = 4096
	// enumShown is how many of an enum's values a message lists.
	enumShown = 16
)

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

// Bounds on a value Validate checks.
const (
	// MaxWork bounds a validation's work, in evaluations: over the places
	// in the value, what the schemas there cost (MaxEvaluations), times
	// one plus the place's properties or items, or its bytes of text over
	// textSpan.
	MaxWork = 1 << 18
	// textSpan is how many bytes of text cost as much to check as one
	// schema evaluation: a pattern scans a string at about 12 ns a byte,
	// and a failing evaluation takes about 0.8 µs.
	textSpan = 64
	// maxDigits and maxExponent bound the numbers Validate checks. The
	// library compares numbers as math/big rationals: 1e999999 takes 30 ms
	// to convert, and past an exponent of a million math/big gives up and
	// the library dereferences its nil result, a panic.
	maxDigits   = 1000
	maxExponent = 1000
)

// Schema is a compiled JSON Schema.
type Schema struct {
	s *jsonschema.Schema
	// plan bounds the evaluations at each place in a value.
	plan  *place
	nodes int
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
	nodes, err := checkSize(doc)
	if err != nil {
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
	plan, err := evaluations(s)
	if err != nil {
		return nil, fmt.Errorf("schema refused: %w", err)
	}
	return &Schema{s: s, plan: plan, nodes: nodes}, nil
}

// Nodes is how many objects and booleans the schema holds, each a possible
// subschema: what compiling it cost grows with their square.
func (s *Schema) Nodes() int { return s.nodes }

// checkSize holds a schema to MaxDepth and MaxNodes, and counts its nodes.
// It stops at the first level past the bound, so its own recursion is
// bounded too.
func checkSize(doc any) (int, error) {
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
	return nodes, walk(doc, 1)
}

// Violation is one way a value fails a schema.
type Violation struct {
	// Pointer is the JSON pointer of the failing value ("" is the root).
	Pointer string
	// Keyword is the JSON pointer of the failing keyword in the schema; ""
	// when the server, not the schema, refused the value.
	Keyword string
	// Message says what is wrong, in words a model can act on.
	Message string
	// Omitted, when not zero, makes this the last entry of a list that was
	// cut short: it stands for that many violations left out, and has no
	// Pointer, Keyword or Message.
	Omitted int
}

func (v Violation) String() string {
	if v.Omitted > 0 {
		return printer.Sprintf("… and %d more violations, not shown", v.Omitted)
	}
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
// float64, as jsonschema.UnmarshalJSON or encoding/json produce. A value
// the library cannot check safely, or that is too large to check against
// this schema within MaxWork, is refused before the library sees it.
func (s *Schema) ValidateValue(v any) []Violation {
	work, unsafe := s.plan.work(v)
	if unsafe {
		f := &first{}
		unchecked(v, nil, f)
		return f.report()
	}
	if work > MaxWork {
		return only(&tooLarge{work})
	}
	return s.validate(v)
}

// validate runs the library's validator. Should it panic all the same, the
// value is refused and the server goes on: a library's bug must not let a
// model's argument or a tool's output end the process.
func (s *Schema) validate(v any) (vs []Violation) {
	defer func() {
		if p := recover(); p != nil {
			vs = only(&failed{p})
		}
	}()
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return only(&failed{err})
	}
	return leaves(ve).report()
}

// only reports one failure of the whole value.
func only(k jsonschema.ErrorKind) []Violation {
	f := &first{}
	f.add(failure{kind: k})
	return f.report()
}

// failure is one violation before it is rendered: rendering a message can
// be costly (an enum lists its values), so only those reported are.
type failure struct {
	loc     []string
	keyword string
	kind    jsonschema.ErrorKind
}

// leaves keeps the first leaf causes of the library's error tree, which
// are the violations a caller can fix; inner nodes only say "does not
// validate".
func leaves(ve *jsonschema.ValidationError) *first {
	f := &first{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			f.add(failure{loc: e.InstanceLocation, keyword: e.SchemaURL, kind: e.ErrorKind})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return f
}

// first keeps the MaxViolations failures that come first by place, in
// order, and counts them all. A value can fail at hundreds of thousands of
// places, and only the first few are reported.
type first struct {
	kept  []failure
	total int
}

func (f *first) add(x failure) {
	f.total++
	// After any equal place, so that failures at one place keep their order.
	i, _ := slices.BinarySearchFunc(f.kept, x, func(a, b failure) int {
		if c := slices.Compare(a.loc, b.loc); c != 0 {
			return c
		}
		return -1
	})
	switch {
	case i == MaxViolations:
		return
	case len(f.kept) < MaxViolations:
		f.kept = slices.Insert(f.kept, i, x)
	default:
		copy(f.kept[i+1:], f.kept[i:MaxViolations-1])
		f.kept[i] = x
	}
}

// report renders the failures kept, at most MaxText bytes of them, each
// cut to MaxPointer and MaxMessage; an Omitted entry ends a list that was
// cut.
func (f *first) report() []Violation {
	var out []Violation
	size := 0
	for _, x := range f.kept {
		v := Violation{
			Pointer: cut(pointer(x.loc), MaxPointer),
			Keyword: keywordPointer(x.keyword) + pointer(x.kind.KeywordPath()),
			Message: cut(render(x.kind), MaxMessage),
		}
		if size += len(v.String()); size > MaxText {
			break
		}
		out = append(out, v)
	}
	if len(out) < f.total {
		out = append(out, Violation{Omitted: f.total - len(out)})
	}
	return out
}

// render is a failure's text. Before the library renders it, a long
// string of the value is shortened, since one string can fail many
// schemas, and an enum lists only its first values: all 50,000 of a large
// one would make the text 800 KiB.
func render(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Enum:
		short := *k
		short.Got = clip(k.Got)
		if len(k.Want) <= enumShown {
			return short.LocalizedString(printer)
		}
		short.Want = k.Want[:enumShown]
		return printer.Sprintf("%s, … (%d more allowed values, not shown)", short.LocalizedString(printer), len(k.Want)-enumShown)
	case *kind.Pattern:
		short := *k
		short.Got = clip(k.Got).(string)
		return short.LocalizedString(printer)
	case *kind.Format:
		short := *k
		short.Got = clip(k.Got)
		if want, ok := formatWanted[k.Want]; ok {
			// The library's reason for these quotes Go's parser (parsing
			// time "03/01/2026" as "2006-01-02"), which says nothing to a
			// model; the form it should have sent does.
			got, _ := json.Marshal(short.Got)
			return fmt.Sprintf("%s is not a valid %s: %s", got, k.Want, want)
		}
		return short.LocalizedString(printer)
	}
	return k.LocalizedString(printer)
}

// formatWanted says, for each format whose failures the library explains
// in Go's terms, how a valid value is written.
var formatWanted = map[string]string{
	"date":      "write it as YYYY-MM-DD (an RFC 3339 full-date), such as 2026-03-31",
	"date-time": "write it as an RFC 3339 date-time with an offset, such as 2026-03-31T14:30:00Z",
	"time":      "write it as an RFC 3339 time with an offset, such as 14:30:00Z",
	"uri":       "write it as an absolute URI with a scheme, such as https://example.com/page",
}

// clip shortens a string of the value to half a message, leaving room for
// what the message says of it.
func clip(v any) any {
	if s, ok := v.(string); ok {
		return cut(s, MaxMessage/2)
	}
	return v
}

// cut shortens s to at most n bytes, at a character boundary, saying that
// it did and how long s was.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mark := printer.Sprintf("… (cut; %d bytes in all)", len(s))
	keep := max(n-len(mark), 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + mark
}

// unchecked lists, with their places, the numbers in v that the library
// cannot check safely.
func unchecked(v any, loc []string, out *first) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			unchecked(e, append(loc, k), out)
		}
	case []any:
		for i, e := range v {
			unchecked(e, append(loc, strconv.Itoa(i)), out)
		}
	case json.Number:
		if !checkable(string(v)) {
			out.add(failure{loc: slices.Clone(loc), kind: &tooBig{string(v)}})
		}
	}
}

// checkable reports whether a JSON number has at most maxDigits digits and
// an exponent of at most maxExponent either way.
func checkable(n string) bool {
	mantissa, exp, _ := strings.Cut(strings.TrimPrefix(n, "-"), "e")
	if i := strings.IndexByte(mantissa, 'E'); i >= 0 {
		mantissa, exp = mantissa[:i], mantissa[i+1:]
	}
	digits := len(mantissa)
	if strings.Contains(mantissa, ".") {
		digits--
	}
	if digits > maxDigits {
		return false
	}
	exp = strings.TrimLeft(strings.TrimLeft(exp, "+-"), "0")
	e, err := strconv.Atoi(exp)
	return exp == "" || err == nil && e <= maxExponent
}

// The server's own reasons to refuse a value, as the library's error kinds
// so that they are reported alike. None is a schema keyword's.

type tooBig struct{ n string }

func (*tooBig) KeywordPath() []string { return nil }
func (k *tooBig) LocalizedString(p *message.Printer) string {
	return p.Sprintf("the number is too large for this server to check: it takes numbers of at most %d digits with an exponent of at most ±%d, and this one is %s",
		maxDigits, maxExponent, cut(k.n, 64))
}

type tooLarge struct{ work int }

func (*tooLarge) KeywordPath() []string { return nil }
func (k *tooLarge) LocalizedString(p *message.Printer) string {
	return p.Sprintf("the value is too large to check against this schema: checking it could take up to %d schema evaluations, "+
		"more than this server's limit of %d; send a smaller value", k.work, MaxWork)
}

type failed struct{ cause any }

func (*failed) KeywordPath() []string { return nil }
func (k *failed) LocalizedString(p *message.Printer) string {
	return p.Sprintf("the value could not be checked: the schema validator failed (%v)", k.cause)
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
