package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// date_diff is the TypeScript example (tools/date_diff), on the QuickJS
// runtime, with an outputSchema.
func TestExampleDateDiff(t *testing.T) {
	good := []toolCase{
		{map[string]any{"start": "2026-01-01", "end": "2026-12-31", "holidays": []string{"2026-12-25", "2026-12-26"}},
			`{"businessDays":259,"days":364,"weeks":52}`},
		{map[string]any{"start": "2026-03-09", "end": "2026-03-02"}, `{"businessDays":-5,"days":-7,"weeks":-1}`},
		{map[string]any{"start": "2024-02-28", "end": "2024-03-01"}, `{"businessDays":2,"days":2,"weeks":0}`},
		{map[string]any{"start": "2026-05-05", "end": "2026-05-05"}, `{"businessDays":0,"days":0,"weeks":0}`},
	}
	bad := []toolCase{
		{map[string]any{"start": "2026-02-30", "end": "2026-03-01"}, `date_diff failed (exit status 1): start "2026-02-30" is not a date in YYYY-MM-DD form`},
		{map[string]any{"start": "2026-01-01", "end": "01/02/2026"}, `end "01/02/2026" is not a date`},
		{map[string]any{"start": "2026-01-01", "end": "2026-01-02", "holidays": []string{"soon"}}, `holiday "soon"`},
		{map[string]any{"start": "2026-01-01"}, "/"},
	}
	checkToolCases(t, "date_diff", good, bad)
}

// The TypeScript SDK's progress reaches the client: one report per ten
// years counted.
func TestExampleDateDiffProgress(t *testing.T) {
	forEachNotingClient(t, "debug", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		meta["progressToken"] = "dates-1"
		res := callWithMeta(t, cs, meta, "date_diff", map[string]any{"start": "2000-01-01", "end": "2020-01-01"})
		if res.IsError {
			t.Fatalf("date_diff: %s", text(res))
		}
		n.waitFor(t, "two progress reports", func(_ []*mcp.LoggingMessageParams, progress []*mcp.ProgressNotificationParams) bool {
			return len(progress) >= 2
		})
		_, progress := n.snapshot()
		if len(progress) != 2 || progress[0].Progress != 3650 || progress[1].Progress != 7300 ||
			progress[0].Total != 7305 || progress[0].Message != "counting working days" {
			t.Errorf("progress = %s; want reports at 3650 and 7300 of 7305 days", mustJSON(t, progress))
		}
	})
}
