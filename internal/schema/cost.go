package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxEvaluations bounds how much work validating one place in a value may
// take: how many schemas apply there (through $ref, allOf, anyOf, oneOf,
// not, if/then/else and dependentSchemas, and from the schemas at the place
// above it), each counting once plus once per listSpan of the lists it
// goes through (enum and const values, required, properties). Real tool
// schemas need a handful; a schema of n $defs that each refer twice to the
// one before needs 2^n, and validating one value against it took 4.5 s at
// n = 20.
const MaxEvaluations = 1000

// listSpan is how many entries of a schema's lists (enum values, required
// names, properties) cost as much as evaluating a schema: a miss against a
// 50,000-value enum takes about as long as 700 evaluations of
// {"type": "string"}.
const listSpan = 64

// maxAnalysis bounds the work of the cost analysis itself, in schemas
// visited: real schemas take thousands of visits, and one that takes the
// analysis this far costs it about 0.1 s (docs/design.md).
const maxAnalysis = 1 << 17

// evaluations works out, from a compiled schema, the most work (in the
// units of MaxEvaluations) that validating any value against it can take at
// each place in the value, or why the schema is refused.
//
// It follows the library's validator: at each place, the schemas that
// apply there (its entries) and everything they apply in place. The places
// below are grouped by what decides which schemas reach them: one group per
// property name some schema names, one for every other name, one for
// property names themselves (propertyNames), one per array index some
// schema names (prefixItems), and one for every other index. Each group's
// entries make a state; states are explored until none is new, so
// recursion that repeats the same state costs nothing more, and recursion
// that grows (two schemas that each apply the schema above them again)
// grows until it passes the bound. Pattern properties are taken to match
// every name, and additionalProperties every name its schema does not
// list: the bound may be above the truth, never below.
func evaluations(root *jsonschema.Schema) (*place, error) {
	a := &analysis{
		own:    map[*jsonschema.Schema]int{},
		onPath: map[*jsonschema.Schema]bool{},
		ids:    map[*jsonschema.Schema]int{},
		edges:  map[*jsonschema.Schema][]*jsonschema.Schema{},
	}
	start := &found{state: state{{root, 1}}, place: &place{}}
	places := map[string]*place{a.key(start.state): start.place}
	queue := []*found{start}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		n, err := a.cost(f.state)
		if err != nil {
			return nil, err
		}
		if n > MaxEvaluations {
			return nil, fmt.Errorf("validating a value could take more than %d schema evaluations at %s, this server's limit for one place in a value: "+
				"simplify the allOf/anyOf/oneOf and $ref chains that apply there", MaxEvaluations, f.at())
		}
		f.place.cost = n
		a.below(f.state, f.place, func(st state, step string) *place {
			if len(st) == 0 {
				return nil
			}
			k := a.key(st)
			if p, ok := places[k]; ok {
				return p
			}
			p := &place{}
			places[k] = p
			queue = append(queue, &found{state: st, from: f, step: step, place: p})
			return p
		})
		if a.visits > maxAnalysis {
			return nil, fmt.Errorf("schema is too intricate for this server to bound what validating against it costs (it gave up after %d steps): "+
				"use fewer, simpler $ref and allOf/anyOf/oneOf combinations", maxAnalysis)
		}
	}
	return start.place, nil
}

// place is what the analysis found of a kind of place in a value: what
// evaluating the schemas there costs, and the places one step below, nil
// where no schema applies.
type place struct {
	cost     int
	named    map[string]*place // properties some schema here names
	anyName  *place            // every other property
	keyName  *place            // property names themselves
	indexed  []*place          // items at the indexes some schema here names
	anyIndex *place            // every other item
}

// work bounds, in evaluations, what validating v at p costs, and says
// whether v holds a number the library cannot check safely (checkable).
// An object or an array costs p's evaluations once more per property or
// item, which they may each go through, and text once more per textSpan
// bytes, which a pattern scans.
func (p *place) work(v any) (n int, unsafe bool) {
	switch v := v.(type) {
	case map[string]any:
		n = p.per() * (1 + len(v))
		for k, e := range v {
			var next, key *place
			if p != nil {
				var named bool
				if next, named = p.named[k]; !named {
					next = p.anyName
				}
				key = p.keyName
			}
			m, u := next.work(e)
			n += m + key.per()*(1+len(k)/textSpan)
			unsafe = unsafe || u
		}
	case []any:
		n = p.per() * (1 + len(v))
		for i, e := range v {
			var next *place
			if p != nil {
				next = p.anyIndex
				if i < len(p.indexed) {
					next = p.indexed[i]
				}
			}
			m, u := next.work(e)
			n += m
			unsafe = unsafe || u
		}
	case string:
		n = p.per() * (1 + len(v)/textSpan)
	case json.Number:
		n = p.per() * (1 + len(v)/textSpan)
		unsafe = !checkable(string(v))
	default:
		n = p.per()
	}
	return n, unsafe
}

// per is the evaluations at p; none where no schema applies.
func (p *place) per() int {
	if p == nil {
		return 0
	}
	return p.cost
}

// entry is a schema applied at a place, n times over.
type entry struct {
	s *jsonschema.Schema
	n int
}

// state is the schemas applied at a place, by the places above it, sorted
// by id.
type state []entry

// found is a state, its place, and the first place in a value it was
// found at: one step below the place of another.
type found struct {
	state state
	place *place
	from  *found
	step  string // a JSON pointer's step, or a wildcard
}

// at renders the place as a JSON pointer with wildcards, cut short, since
// a place can be a thousand levels down.
func (f *found) at() string {
	var steps []string
	for ; f.from != nil; f = f.from {
		steps = append(steps, f.step)
	}
	if len(steps) == 0 {
		return "the root"
	}
	slices.Reverse(steps)
	return cut(strings.Join(steps, ""), MaxPointer)
}

// analysis is the state of one run of evaluations.
type analysis struct {
	own    map[*jsonschema.Schema]int // cost of a schema with all it applies in place
	onPath map[*jsonschema.Schema]bool
	ids    map[*jsonschema.Schema]int
	edges  map[*jsonschema.Schema][]*jsonschema.Schema // sameplace, once worked out
	visits int
}

// sameplace is the package's sameplace, remembered.
func (a *analysis) sameplace(s *jsonschema.Schema) ([]*jsonschema.Schema, error) {
	if e, ok := a.edges[s]; ok {
		return e, nil
	}
	e, err := sameplace(s)
	if err == nil {
		a.edges[s] = e
	}
	return e, err
}

func (a *analysis) id(s *jsonschema.Schema) int {
	id, ok := a.ids[s]
	if !ok {
		id = len(a.ids)
		a.ids[s] = id
	}
	return id
}

// key names a state, for the set of those seen.
func (a *analysis) key(st state) string {
	var b strings.Builder
	for _, e := range st {
		b.WriteString(strconv.Itoa(a.id(e.s)))
		b.WriteByte('*')
		b.WriteString(strconv.Itoa(e.n))
		b.WriteByte(',')
	}
	return b.String()
}

// cost is the work at a place whose entries are st.
func (a *analysis) cost(st state) (int, error) {
	total := 0
	for _, e := range st {
		c, err := a.inPlace(e.s)
		if err != nil {
			return 0, err
		}
		total = min(total+e.n*c, MaxEvaluations+1)
	}
	return total, nil
}

// inPlace is the cost of s and everything s applies at the same place,
// capped just past the bound. The schemas applied in place must form no
// cycle: the library would stop such a cycle with a "reference cycle"
// error on every value that reaches it, so the schema is refused here,
// where its author sees why.
func (a *analysis) inPlace(s *jsonschema.Schema) (int, error) {
	if c, ok := a.own[s]; ok {
		return c, nil
	}
	if a.onPath[s] {
		return 0, fmt.Errorf("schema at %s applies itself again at the same place in the value (through $ref, allOf, anyOf, oneOf, not, if/then/else or dependentSchemas), a cycle the validator can only break by failing the value",
			where(s))
	}
	a.onPath[s] = true
	defer delete(a.onPath, s)
	a.visits++
	c := weight(s)
	edges, err := a.sameplace(s)
	if err != nil {
		return 0, err
	}
	for _, t := range edges {
		ct, err := a.inPlace(t)
		if err != nil {
			return 0, err
		}
		c = min(c+ct, MaxEvaluations+1)
	}
	a.own[s] = c
	return c, nil
}

// weight is what evaluating s itself costs: one, plus its lists.
func weight(s *jsonschema.Schema) int {
	n := len(s.Required) + len(s.Properties) + len(s.PatternProperties) + len(s.Dependencies)
	for _, req := range s.DependentRequired {
		n += len(req)
	}
	if s.Enum != nil {
		for _, v := range s.Enum.Values {
			n += values(v)
		}
	}
	if s.Const != nil {
		n += values(*s.Const)
	}
	return 1 + n/listSpan
}

// values counts the JSON values in v, which comparing a value to v may
// each have to look at.
func values(v any) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			n += values(e)
		}
	case []any:
		for _, e := range v {
			n += values(e)
		}
	}
	return n
}

// sameplace lists the schemas s applies at its own place in the value, as
// often as it applies each.
func sameplace(s *jsonschema.Schema) ([]*jsonschema.Schema, error) {
	var out []*jsonschema.Schema
	add := func(ts ...*jsonschema.Schema) {
		for _, t := range ts {
			if t != nil {
				out = append(out, t)
			}
		}
	}
	add(s.Ref, s.Not, s.If, s.Then, s.Else)
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		add(s.DependentSchemas[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		if t, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			add(t)
		}
	}
	// A dynamic reference goes wherever the schemas validation passed
	// through say, which no walk of the schema alone can bound.
	if r := s.RecursiveRef; r != nil {
		if r.RecursiveAnchor {
			return nil, fmt.Errorf("schema at %s uses $recursiveRef to a $recursiveAnchor, whose target depends on the value: this server cannot bound its cost; use $ref", where(s))
		}
		add(r)
	}
	if r := s.DynamicRef; r != nil {
		if r.Anchor != "" && r.Ref.DynamicAnchor == r.Anchor {
			return nil, fmt.Errorf("schema at %s uses $dynamicRef to a $dynamicAnchor, whose target depends on the value: this server cannot bound its cost; use $ref", where(s))
		}
		add(r.Ref)
	}
	return out, nil
}

// below fills in p, the place whose entries are st, with the places one
// step below it; to gives the place of a state, nil for an empty one.
func (a *analysis) below(st state, p *place, to func(st state, step string) *place) {
	// Every schema evaluated at the place, with how often.
	var all []entry
	var walk func(s *jsonschema.Schema, n int)
	walk = func(s *jsonschema.Schema, n int) {
		a.visits++
		all = append(all, entry{s, n})
		edges, _ := a.sameplace(s) // cost has already refused what errs
		for _, t := range edges {
			walk(t, n)
		}
	}
	for _, e := range st {
		walk(e.s, e.n)
	}

	group := func(step string, pick func(s *jsonschema.Schema) []*jsonschema.Schema) *place {
		counts := map[*jsonschema.Schema]int{}
		a.visits += len(all)
		for _, e := range all {
			for _, t := range pick(e.s) {
				if t != nil {
					counts[t] += e.n
				}
			}
		}
		next := make(state, 0, len(counts))
		for t, n := range counts {
			next = append(next, entry{t, n})
		}
		slices.SortFunc(next, func(x, y entry) int { return cmp.Compare(a.id(x.s), a.id(y.s)) })
		return to(next, step)
	}

	// Objects.
	names := map[string]bool{}
	for _, e := range all {
		for k := range e.s.Properties {
			names[k] = true
		}
	}
	anyName := func(s *jsonschema.Schema) []*jsonschema.Schema {
		ts := slices.Collect(maps.Values(s.PatternProperties))
		if t, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
			ts = append(ts, t)
		}
		return append(ts, s.UnevaluatedProperties)
	}
	p.named = make(map[string]*place, len(names))
	for _, k := range slices.Sorted(maps.Keys(names)) {
		p.named[k] = group("/"+pointerEscaper.Replace(k), func(s *jsonschema.Schema) []*jsonschema.Schema {
			if t, ok := s.Properties[k]; ok {
				return append(slices.Collect(maps.Values(s.PatternProperties)), t, s.UnevaluatedProperties)
			}
			return anyName(s)
		})
	}
	p.anyName = group("/<any property>", anyName)
	p.keyName = group("/<a property name>", func(s *jsonschema.Schema) []*jsonschema.Schema { return []*jsonschema.Schema{s.PropertyNames} })

	// Arrays.
	tuple := 0
	for _, e := range all {
		tuple = max(tuple, len(e.s.PrefixItems))
		if items, ok := e.s.Items.([]*jsonschema.Schema); ok {
			tuple = max(tuple, len(items))
		}
	}
	item := func(i int) func(s *jsonschema.Schema) []*jsonschema.Schema {
		return func(s *jsonschema.Schema) []*jsonschema.Schema {
			ts := []*jsonschema.Schema{s.Contains, s.UnevaluatedItems}
			if i >= 0 && i < len(s.PrefixItems) {
				ts = append(ts, s.PrefixItems[i])
			} else {
				ts = append(ts, s.Items2020)
			}
			switch items := s.Items.(type) {
			case *jsonschema.Schema:
				ts = append(ts, items)
			case []*jsonschema.Schema:
				if i >= 0 && i < len(items) {
					ts = append(ts, items[i])
				} else if t, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
					ts = append(ts, t)
				}
			}
			return ts
		}
	}
	p.indexed = make([]*place, tuple)
	for i := range tuple {
		p.indexed[i] = group("/"+strconv.Itoa(i), item(i))
	}
	p.anyIndex = group("/<any index>", item(-1))
	// contentSchema applies only where content is asserted, which Compile
	// does not ask for: the library does not even compile it.
}

// where names the place of s: a JSON pointer in the tool's schema, or the
// URL of a standard meta-schema the tool's schema refers to.
func where(s *jsonschema.Schema) string {
	p, ours := strings.CutPrefix(s.Location, resourceURL+"#")
	switch {
	case !ours:
		return s.Location
	case p == "":
		return "the root"
	}
	return p
}
