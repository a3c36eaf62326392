package e2e

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// convert_units is the Rust example (tools/convert_units, with the Rust
// guest SDK): output mode json with an outputSchema, and one info log.

func TestExampleConvertUnits(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		conversions := []struct {
			value    float64
			from, to string
			result   float64
			category string
		}{
			{5, "km", "mi", 3.10685596119, "length"},
			{100, "C", "F", 212, "temperature"},
			{1, "GiB", "MB", 1073.741824, "data"},
			{1, "lb", "oz", 16, "mass"},
			{90, "min", "h", 1.5, "time"},
		}
		for _, c := range conversions {
			res := callTool(t, cs, "convert_units", map[string]any{"value": c.value, "from": c.from, "to": c.to})
			if res.IsError {
				t.Fatalf("%v %s in %s: %s", c.value, c.from, c.to, text(res))
			}
			want := map[string]any{"value": c.value, "from": c.from, "to": c.to, "result": c.result, "category": c.category}
			if !reflect.DeepEqual(res.StructuredContent, want) {
				t.Errorf("%v %s in %s: structuredContent = %v; want %v", c.value, c.from, c.to, res.StructuredContent, want)
			}
			// Older clients read the same object from the text block.
			var fromText map[string]any
			if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil || !reflect.DeepEqual(fromText, want) {
				t.Errorf("%v %s in %s: text = %s (%v)", c.value, c.from, c.to, text(res), err)
			}
		}

		failures := []struct {
			args map[string]any
			want []string
		}{
			{map[string]any{"value": 1, "from": "m", "to": "kg"},
				[]string{"cannot convert m (length) to kg (mass)", "mm, cm, m, km, in, ft, yd, mi"}},
			{map[string]any{"value": 1, "from": "furlong", "to": "m"},
				[]string{`unknown unit "furlong"`, "the length units are: mm, cm, m, km, in, ft, yd, mi"}},
			{map[string]any{"value": 1, "from": "kg", "to": "stone"},
				[]string{`unknown unit "stone"`, "the mass units are: mg, g, kg, t, oz, lb"}},
			{map[string]any{"value": -300, "from": "C", "to": "K"},
				[]string{"below absolute zero"}},
			// The server's inputSchema check, before the module runs.
			{map[string]any{"value": 1, "from": "m", "to": "km", "precision": 2},
				[]string{"invalid arguments for convert_units"}},
		}
		for _, f := range failures {
			res := callTool(t, cs, "convert_units", f.args)
			if !res.IsError || !containsAll(text(res), f.want) {
				t.Errorf("%v = %q (isError %v); want an error containing %q", f.args, text(res), res.IsError, f.want)
			}
		}
	})
}

func TestExampleConvertUnitsLogs(t *testing.T) {
	forEachNotingClient(t, "info", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		res := callWithMeta(t, cs, meta, "convert_units", map[string]any{"value": 2, "from": "km", "to": "m"})
		if res.IsError {
			t.Fatalf("call: %s", text(res))
		}
		logs := n.waitLogs(t, 1)
		if len(logs) != 1 || logs[0].Level != "info" || logs[0].Logger != "convert_units" {
			t.Fatalf("logs = %+v; want one info message from convert_units", logs)
		}
		if data, _ := logs[0].Data.(string); !strings.Contains(data, "2 km = 2000 m, using 1 km = 1000 m") {
			t.Errorf("log message = %q; want the conversion and its factor", data)
		}
	})
}
