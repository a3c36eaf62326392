package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// find_matches is the JavaScript example (tools/find_matches), on the
// QuickJS runtime: two tools in one module.
func TestExampleFindMatches(t *testing.T) {
	good := []toolCase{
		{map[string]any{"text": "2026-01 and 2027-02", "pattern": `(?<y>\d{4})-(\d{2})`},
			`{"count":2,"matches":[{"groups":["2026","01"],"index":0,"match":"2026-01","named":{"y":"2026"}},{"groups":["2027","02"],"index":12,"match":"2027-02","named":{"y":"2027"}}]}`},
		{map[string]any{"text": "Ab ab AB", "pattern": "ab", "flags": "i", "limit": 2},
			`{"count":3,"matches":[{"groups":[],"index":0,"match":"Ab"},{"groups":[],"index":3,"match":"ab"}]}`},
		{map[string]any{"text": "café 😀 é", "pattern": `\p{L}+`, "flags": "u"},
			`{"count":2,"matches":[{"groups":[],"index":0,"match":"café"},{"groups":[],"index":8,"match":"é"}]}`},
		{map[string]any{"text": "a1", "pattern": `(x)?(\d)`},
			`{"count":1,"matches":[{"groups":[null,"1"],"index":1,"match":"1"}]}`},
		{map[string]any{"text": "none here", "pattern": `\d`}, `{"count":0,"matches":[]}`},
	}
	bad := []toolCase{
		{map[string]any{"text": "x", "pattern": "("}, "find_matches failed (exit status 1): pattern is not a valid regular expression"},
		{map[string]any{"text": "x", "pattern": "x", "flags": "ii"}, "must be distinct letters"},
		{map[string]any{"text": "x", "pattern": "x", "flags": "g"}, "/flags"},
		{map[string]any{"text": "x"}, "/"},
		{map[string]any{"text": "x", "pattern": "x", "limit": 0}, "/limit"},
	}
	checkToolCases(t, "find_matches", good, bad)
}

// The JavaScript SDK's log reaches the client through wasmcp.log.
func TestExampleFindMatchesLogs(t *testing.T) {
	forEachNotingClient(t, "debug", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		res := callWithMeta(t, cs, meta, "find_matches", map[string]any{"text": "a b c", "pattern": `\w`})
		if res.IsError {
			t.Fatalf("find_matches: %s", text(res))
		}
		logs := n.waitLogs(t, 1)
		if len(logs) != 1 || logs[0].Level != "debug" || logs[0].Logger != "find_matches" || logs[0].Data != `3 matches of /\w/ in 5 characters` {
			t.Fatalf("logs = %s; want one debug message from find_matches", mustJSON(t, logs))
		}
	})
}

type diceRoll struct {
	Rolls    []int64   `json:"rolls"`
	Total    int64     `json:"total"`
	RolledAt time.Time `json:"rolledAt"`
}

// TestJavaScriptFreshness is the JavaScript freshness probe: two calls of
// one server's module, which the host starts from one snapshot, must see
// Math.random values of their own and the clock as of the call, not as of
// the snapshot.
func TestJavaScriptFreshness(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		var rolls []diceRoll
		for range 2 {
			before := time.Now().Truncate(time.Millisecond)
			res := callTool(t, cs, "roll_dice", map[string]any{"count": 8, "sides": 1000000000})
			after := time.Now()
			var r diceRoll
			if res.IsError || json.Unmarshal([]byte(text(res)), &r) != nil || len(r.Rolls) != 8 {
				t.Fatalf("roll_dice = %q (isError %v); want 8 rolls", text(res), res.IsError)
			}
			if r.RolledAt.Before(before) || r.RolledAt.After(after) {
				t.Errorf("roll_dice read the clock as %v, outside its call (%v to %v)", r.RolledAt, before, after)
			}
			rolls = append(rolls, r)
		}
		if slices.Equal(rolls[0].Rolls, rolls[1].Rolls) {
			t.Errorf("two calls rolled the same dice %v: Math.random was not reseeded for the call", rolls[0].Rolls)
		}
	})
}
