package e2e

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// slugify is the AssemblyScript example (tools/slugify).
func TestExampleSlugify(t *testing.T) {
	good := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": "Hello, World!"}, "hello-world"},
		{map[string]any{"text": "Crème Brûlée: 2 Ways!"}, "creme-brulee-2-ways"},
		{map[string]any{"text": "Straße Æsir Øre Ångström Ça Niño Über"}, "strasse-aesir-ore-angstrom-ca-nino-uber"},
		{map[string]any{"text": "  --Already--slugged--  "}, "already-slugged"},
		{map[string]any{"text": "snake case here", "separator": "_"}, "snake_case_here"},
		{map[string]any{"text": "a-b_c", "separator": "_"}, "a_b_c"},
		{map[string]any{"text": "Hello World", "separator": "-"}, "hello-world"},
		{map[string]any{"text": "e\u0301cole 😀 日本 100%"}, "ecole-100"},
		{map[string]any{"text": "hello world", "maxLength": 6}, "hello"}, // no separator left at the end
		{map[string]any{"text": "hello world", "maxLength": 7}, "hello-w"},
		{map[string]any{"text": "hello world", "maxLength": 200}, "hello-world"},
		{map[string]any{"text": "hello world", "maxLength": 1}, "h"},
		{map[string]any{"text": "one two three", "separator": "_", "maxLength": 8}, "one_two"},
		{map[string]any{"text": strings.Repeat("ab ", 100), "maxLength": 200}, strings.Repeat("ab-", 66) + "ab"},
	}
	bad := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": "!!! ... ???"}, "slugify failed (exit status 1): text has no letters or digits to make a slug from"},
		{map[string]any{"text": ""}, "text has no letters or digits"},
		{map[string]any{"text": "日本語"}, "text has no letters or digits"},
		{map[string]any{}, "/"},
		{map[string]any{"text": 5}, "/text"},
		{map[string]any{"text": "x", "separator": "+"}, "/separator"},
		{map[string]any{"text": "x", "maxLength": 0}, "/maxLength"},
		{map[string]any{"text": "x", "maxLength": 201}, "/maxLength"},
		{map[string]any{"text": "x", "maxLength": 2.5}, "/maxLength"},
		{map[string]any{"text": "x", "maxLength": "10"}, "/maxLength"},
		{map[string]any{"text": "x", "maxLength": nil}, "/maxLength"},
		{map[string]any{"text": "x", "lowercase": true}, "lowercase"},
	}
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		for _, tt := range good {
			res := callTool(t, cs, "slugify", tt.args)
			if res.IsError || text(res) != tt.want {
				t.Errorf("slugify %s = %q (isError %v); want %q", mustJSON(t, tt.args), text(res), res.IsError, tt.want)
			}
		}
		for _, tt := range bad {
			res := callTool(t, cs, "slugify", tt.args)
			if !res.IsError || !strings.Contains(text(res), tt.want) {
				t.Errorf("slugify %s = %q (isError %v); want an error mentioning %q", mustJSON(t, tt.args), text(res), res.IsError, tt.want)
			}
		}
	})
}

// The tool reports each slug at debug level through wasmcp.log.
func TestExampleSlugifyLogs(t *testing.T) {
	forEachNotingClient(t, "debug", func(t *testing.T, cs *mcp.ClientSession, n *notes, meta mcp.Meta) {
		res := callWithMeta(t, cs, meta, "slugify", map[string]any{"text": "Hello, World!"})
		if res.IsError {
			t.Fatalf("slugify: %s", text(res))
		}
		logs := n.waitLogs(t, 1)
		if len(logs) != 1 || logs[0].Level != "debug" || logs[0].Logger != "slugify" || logs[0].Data != "slug of 11 characters from 13" {
			t.Fatalf("logs = %s; want one debug message from slugify", mustJSON(t, logs))
		}
	})
}
