package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// date_info is the Python example (tools/date_info, built with
// sdk-guest/python on the CPython runtime).
func TestExampleDateInfo(t *testing.T) {
	good := []toolCase{
		{map[string]any{"date": "2024-02-29"},
			`{"date":"2024-02-29","dayOfYear":60,"daysInMonth":29,"isoWeek":9,"isoYear":2024,"leapYear":true,"weekday":"Thursday"}`},
		{map[string]any{"date": "2021-01-01", "other": "2020-12-25"},
			`{"date":"2021-01-01","dayOfYear":1,"daysInMonth":31,"daysUntilOther":-7,"isoWeek":53,"isoYear":2020,"leapYear":false,"weekday":"Friday"}`},
		{map[string]any{"date": "1900-02-01", "other": "9999-12-31"},
			`{"date":"1900-02-01","dayOfYear":32,"daysInMonth":28,"daysUntilOther":2958432,"isoWeek":5,"isoYear":1900,"leapYear":false,"weekday":"Thursday"}`},
	}
	bad := []toolCase{
		// Valid RFC 3339 dates that Python's calendar does not have: the
		// tool's own error, through the SDK's ToolError.
		{map[string]any{"date": "0000-01-01"}, "date_info failed (exit status 1): date '0000-01-01' is not a date from 0001-01-01 to 9999-12-31 in YYYY-MM-DD form"},
		{map[string]any{"date": "2024-01-01", "other": "0000-12-31"}, "other '0000-12-31' is not a date"},
		{map[string]any{"date": "2024-02-30"}, "/date"},
		{map[string]any{}, "/"},
		{map[string]any{"date": "2024-01-01", "when": "now"}, "when"},
	}
	checkToolCases(t, "date_info", good, bad)
}

// The tool logs the weekday at debug level through wasmcp.log.
func TestExampleDateInfoLogs(t *testing.T) {
	forEachNotingClient(t, "debug", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		res := callWithMeta(t, cs, meta, "date_info", map[string]any{"date": "2026-07-28"})
		if res.IsError {
			t.Fatalf("date_info: %s", text(res))
		}
		logs := n.waitLogs(t, 1)
		if len(logs) != 1 || logs[0].Level != "debug" || logs[0].Logger != "date_info" || logs[0].Data != "2026-07-28 is a Tuesday" {
			t.Fatalf("logs = %s; want one debug message from date_info", mustJSON(t, logs))
		}
	})
}
