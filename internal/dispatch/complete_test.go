package dispatch

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

func TestMatching(t *testing.T) {
	got := matching([]string{"Paris", "park", "Lyon", "PARTY"}, "par")
	if !slices.Equal(got.Values, []string{"Paris", "park", "PARTY"}) || got.Total != 3 || got.HasMore {
		t.Errorf("matching = %+v; want the three, in declared order, whatever their case", got)
	}
	if got := matching(nil, "x"); got.Values == nil || len(got.Values) != 0 || got.Total != 0 {
		t.Errorf("no values = %+v; want an empty list, not null", got)
	}
	many := make([]string, 250)
	for i := range many {
		many[i] = fmt.Sprint("v", i)
	}
	if got := matching(many, ""); len(got.Values) != abi.MaxCompletionValues || got.Total != 250 || !got.HasMore {
		t.Errorf("250 values = %d values, total %d, hasMore %v; want 100, 250, true", len(got.Values), got.Total, got.HasMore)
	}
}

// A module's completion is checked as strictly as its other answers.
func TestCompletionFromAModuleIsChecked(t *testing.T) {
	many := make([]any, abi.MaxCompletionValues+1)
	for i := range many {
		many[i] = "v"
	}
	for _, c := range []struct {
		name string
		out  any
		want string
	}{
		{"no values", map[string]any{"total": 1}, `"values" is missing`},
		{"too many", map[string]any{"values": many}, "over the limit of 100"},
		{"a value too long", map[string]any{"values": []any{strings.Repeat("x", abi.MaxText+1)}}, "value 0 is"},
		{"a negative total", map[string]any{"values": []any{}, "total": -1}, "negative"},
		{"another member", map[string]any{"values": []any{}, "isError": true}, "unknown field"},
		{"not strings", map[string]any{"values": []any{1}}, "it must be"},
	} {
		if _, err := completion(c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
	got, err := completion(map[string]any{"values": []any{"a", "b"}, "total": 1, "hasMore": true})
	if err != nil || !slices.Equal(got.Values, []string{"a", "b"}) || got.Total != 2 || !got.HasMore {
		t.Errorf("a good answer = %+v, %v; want its values, a total of at least 2, hasMore", got, err)
	}
}
