package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// text_stats is the C example (tools/text_stats, built with sdk-guest/c).

type textStats struct {
	Characters        int     `json:"characters"`
	Bytes             int     `json:"bytes"`
	Words             int     `json:"words"`
	Lines             int     `json:"lines"`
	Sentences         int     `json:"sentences"`
	AverageWordLength float64 `json:"averageWordLength"`
	TopWords          []struct {
		Word  string `json:"word"`
		Count int    `json:"count"`
	} `json:"topWords"`
}

func decodeTextStats(t *testing.T, res *mcp.CallToolResult) textStats {
	t.Helper()
	if res.IsError {
		t.Fatalf("text_stats failed: %s", text(res))
	}
	var st textStats
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	// Older clients read the same object from the text block.
	var fromText textStats
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || mustJSON(t, fromText) != mustJSON(t, st) {
		t.Errorf("text block %q does not hold the structured result (%v)", text(res), err)
	}
	return st
}

func TestExampleTextStats(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		res := callTool(t, cs, "text_stats", map[string]any{
			"text": "The cat sat on the mat. Don’t panic!\nThe END? Café, café.",
			"top":  3,
		})
		st := decodeTextStats(t, res)
		got := mustJSON(t, st)
		want := `{"characters":57,"bytes":61,"words":12,"lines":2,"sentences":4,"averageWordLength":3.42,` +
			`"topWords":[{"word":"the","count":3},{"word":"café","count":2},{"word":"cat","count":1}]}`
		if got != want {
			t.Errorf("text_stats = %s\nwant %s", got, want)
		}

		// Empty text counts zeros; top defaults to 5.
		st = decodeTextStats(t, callTool(t, cs, "text_stats", map[string]any{"text": ""}))
		if got := mustJSON(t, st); got != `{"characters":0,"bytes":0,"words":0,"lines":0,"sentences":0,"averageWordLength":0,"topWords":[]}` {
			t.Errorf("empty text = %s", got)
		}
		st = decodeTextStats(t, callTool(t, cs, "text_stats", map[string]any{"text": "a b c d e f g a"}))
		if len(st.TopWords) != 5 || st.TopWords[0].Word != "a" || st.TopWords[0].Count != 2 || st.TopWords[4].Word != "e" {
			t.Errorf("default top = %+v", st.TopWords)
		}

		// Bad arguments are refused by the schema before the module runs.
		for _, tt := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"text": "x", "top": 0}, "/top"},
			{map[string]any{"text": "x", "top": 51}, "/top"},
			{map[string]any{"text": "x", "top": 2.5}, "/top"},
			{map[string]any{"top": 3}, "'text'"},
			{map[string]any{"text": 7}, "/text"},
			{map[string]any{"text": "x", "lang": "en"}, "lang"},
		} {
			res := callTool(t, cs, "text_stats", tt.args)
			if !res.IsError || !strings.Contains(text(res), "invalid arguments for text_stats") || !strings.Contains(text(res), tt.want) {
				t.Errorf("%v = %q (isError %v); want a violation at %s", tt.args, text(res), res.IsError, tt.want)
			}
		}
	})
}

// TestExampleTextStatsReports checks that the C SDK's host-function calls
// reach a client: increasing progress for a text over 64 KiB, and the
// tool's debug log line. A 2025-11-25 client asks for logs with
// logging/setLevel, a 2026-07-28 one with the request's _meta log level.
func TestExampleTextStatsReports(t *testing.T) {
	big := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 4000) // 228,000 bytes
	forEachNotingClient(t, "debug", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		meta["progressToken"] = "stats-1"
		res := callWithMeta(t, cs, meta, "text_stats", map[string]any{"text": big})
		st := decodeTextStats(t, res)
		if st.Bytes != len(big) || st.Words != 32000 || st.Sentences != 4000 || st.TopWords[0].Count != 4000 {
			t.Errorf("counts for the large text: %+v", st)
		}

		total := float64(len(big))
		n.waitFor(t, "the final progress report and the log message", func(logs []*mcp.LoggingMessageParams, progress []*mcp.ProgressNotificationParams) bool {
			return len(logs) > 0 && len(progress) > 0 && progress[len(progress)-1].Progress == total
		})
		logs, progress := n.snapshot()
		// One report per 64 KiB passed, and one at the end.
		if want := len(big)/65536 + 1; len(progress) != want {
			t.Errorf("%d progress reports; want %d", len(progress), want)
		}
		for i, p := range progress {
			if p.ProgressToken != "stats-1" || p.Total != total || !strings.HasPrefix(p.Message, "counted ") {
				t.Errorf("report %d = %+v", i, p)
			}
			if i > 0 && p.Progress <= progress[i-1].Progress {
				t.Errorf("progress went from %v to %v", progress[i-1].Progress, p.Progress)
			}
		}
		if len(logs) != 1 || logs[0].Level != "debug" || logs[0].Logger != "text_stats" || logs[0].Data != "counted 32000 words (8 different) in 228000 bytes" {
			t.Errorf("logs = %s", mustJSON(t, logs))
		}
	})
}

// TestProgressNeedsAToken checks that a request without a progress token
// gets no progress notifications, though the tool reports progress.
func TestProgressNeedsAToken(t *testing.T) {
	big := strings.Repeat("word ", 40000) // 200,000 bytes: three reports and a final one
	forEachNotingClient(t, "debug", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		callWithMeta(t, cs, meta, "text_stats", map[string]any{"text": big})
		// The tool logs after its last progress report, so once the log is
		// in, any progress notification would have come first.
		n.waitLogs(t, 1)
		if _, progress := n.snapshot(); len(progress) != 0 {
			t.Fatalf("%d progress notifications without a progress token", len(progress))
		}
	})
}
