package e2e

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var versions = []string{"2025-11-25", "2026-07-28"}

// forEachClient runs f against a stdio server and an HTTP server, in each
// protocol revision.
func forEachClient(t *testing.T, f func(t *testing.T, cs *mcp.ClientSession)) {
	writeHostile(t)
	forEachClientOf(t, toolsDir, nil, nil, func(t *testing.T, cs *mcp.ClientSession, _ string) { f(t, cs) })
}

func TestListTools(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Description == "" || tool.InputSchema == nil {
				t.Errorf("tool %s lacks a description or inputSchema", tool.Name)
			}
		}
		examples := []string{"calculate", "search_invoices", "text_stats", "convert_units", "slugify", "random_uuid", "find_matches", "roll_dice", "date_diff", "date_info", "loan_payment"}
		for _, want := range append(examples, hostile...) {
			if !slices.Contains(names, want) {
				t.Errorf("tools/list lacks %s; got %v", want, names)
			}
		}
		if !slices.IsSorted(names) {
			t.Errorf("tools are not in a deterministic (sorted) order: %v", names)
		}
		for _, tool := range res.Tools {
			if tool.Name == "search_invoices" && tool.OutputSchema == nil {
				t.Error("search_invoices lost its outputSchema")
			}
			if tool.Name == "calculate" && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint) {
				t.Error("calculate lost its readOnlyHint annotation")
			}
		}
	})
}

func TestCallExamples(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		res := callTool(t, cs, "calculate", map[string]any{"a": 10, "b": 5, "operation": "add"})
		if res.IsError || text(res) != "15.0" {
			t.Errorf("calculate add = %q (isError %v); want 15.0", text(res), res.IsError)
		}
		res = callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 0, "operation": "divide"})
		if !res.IsError || !strings.Contains(text(res), "division by zero") {
			t.Errorf("divide by zero = %q (isError %v)", text(res), res.IsError)
		}

		res = callTool(t, cs, "search_invoices", map[string]any{"startDate": "2026-01-01", "endDate": "2026-12-31", "status": "paid"})
		if res.IsError {
			t.Fatalf("search_invoices: %s", text(res))
		}
		sc, ok := res.StructuredContent.(map[string]any)
		if !ok {
			t.Fatalf("structuredContent = %T; want an object", res.StructuredContent)
		}
		invoices, _ := sc["invoices"].([]any)
		if count, _ := sc["count"].(float64); count == 0 || int(count) != len(invoices) {
			t.Errorf("count %v does not match %d invoices", sc["count"], len(invoices))
		}
		for _, inv := range invoices {
			if s := inv.(map[string]any)["status"]; s != "paid" {
				t.Errorf("status filter let through %v", s)
			}
		}
		if !strings.Contains(text(res), `"invoices"`) {
			t.Errorf("structured result lacks its serialized text block: %q", text(res))
		}

		res = callTool(t, cs, "search_invoices", map[string]any{"startDate": "2026-05-01", "endDate": "2026-04-01"})
		if !res.IsError || !strings.Contains(text(res), "before") {
			t.Errorf("end before start = %q (isError %v)", text(res), res.IsError)
		}
	})
}

func TestInvalidArgumentsAreToolErrors(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		res := callTool(t, cs, "calculate", map[string]any{"a": "ten", "operation": "pow"})
		if !res.IsError {
			t.Fatal("invalid arguments did not give isError")
		}
		for _, want := range []string{"/a", "/operation", "'b'"} {
			if !strings.Contains(text(res), want) {
				t.Errorf("error text %q does not point at %s", text(res), want)
			}
		}
		res = callTool(t, cs, "search_invoices", map[string]any{"startDate": "03/01/2026", "endDate": "2026-04-01"})
		if !res.IsError || !strings.Contains(text(res), "/startDate") {
			t.Errorf("a malformed date = %q (isError %v); want a violation at /startDate", text(res), res.IsError)
		}
	})
}

func TestUnknownToolIsInvalidParams(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
			t.Fatalf("err = %v; want a JSON-RPC -32602 error", err)
		}
		// The session survives the error.
		if res := callTool(t, cs, "calculate", map[string]any{"a": 2, "b": 3, "operation": "multiply"}); text(res) != "6.0" {
			t.Errorf("call after the error = %q", text(res))
		}
	})
}

func TestHostileModules(t *testing.T) {
	cases := map[string]string{
		"loop":    "500ms time limit",
		"grow":    "limit is 16 MiB",
		"hugemem": "needs 3750 MiB",
		"recurse": "call stack",
		"spam":    "more than 64 KiB to stdout",
		"trap":    "integer divide by zero",
		"fail":    "exit status 3): noise\nthe widget is broken",
	}
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		for name, want := range cases {
			res := callTool(t, cs, name, nil)
			if !res.IsError || !strings.Contains(text(res), want) {
				t.Errorf("%s = %q (isError %v); want an error mentioning %q", name, text(res), res.IsError, want)
			}
			// The server answers the next request normally.
			if res := callTool(t, cs, "calculate", map[string]any{"a": 1, "b": 1, "operation": "add"}); text(res) != "2.0" {
				t.Fatalf("after %s, calculate = %q", name, text(res))
			}
		}
		res := callTool(t, cs, "probe", nil)
		if res.IsError || text(res) != "sealed" {
			t.Errorf("probe = %q (isError %v); the guest saw environment variables or files", text(res), res.IsError)
		}
		// Host-function abuse is answered with error codes (one digit per
		// call; see the .wat sources) and never harms the server.
		for name, want := range map[string]string{"report": "021143066022", "flood": "55"} {
			if res := callTool(t, cs, name, nil); res.IsError || text(res) != want {
				t.Errorf("%s = %q (isError %v); want %s", name, text(res), res.IsError, want)
			}
		}
	})
}

// TestOlderRevisions checks that clients of earlier protocol revisions,
// which the SDK still speaks, can list and call.
func TestOlderRevisions(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2025-03-26"} {
		t.Run(v, func(t *testing.T) {
			cs := connectStdio(t, v)
			if res := callTool(t, cs, "calculate", map[string]any{"a": 10, "b": 5, "operation": "add"}); text(res) != "15.0" {
				t.Errorf("calculate = %q", text(res))
			}
		})
	}
}
