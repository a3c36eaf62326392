package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// inspectorCall is a call of a tool, its arguments as the MCP Inspector's
// --tool-arg pairs (a value that parses as JSON is sent as that JSON),
// and a part of the text it answers.
type inspectorCall struct {
	tool    string
	args    []string
	want    string
	isError bool
}

// inspectorCalls calls every example tool. fetch_text and read_notes have
// no grants here, so they fail, naming what they lacked.
var inspectorCalls = []inspectorCall{
	{"calculate", []string{"a=10", "b=5", "operation=add"}, "15.0", false},
	{"convert_units", []string{"value=5", "from=km", "to=mi"}, `"result":3.10685596119`, false},
	{"date_diff", []string{"start=2026-01-01", "end=2026-01-31"}, `"businessDays":21,"days":30`, false},
	{"date_info", []string{"date=2026-12-01"}, `"weekday":"Tuesday"`, false},
	{"fetch_text", []string{"url=https://en.wikipedia.org/wiki/WebAssembly"}, "permissions this call lacked", true},
	{"loan_payment", []string{"principal=250000", "annualRate=4.5", "years=30"}, `"monthlyPayment":1266.71`, false},
	{"find_matches", []string{"text=a1 b22", "pattern=[0-9]+"}, `"count":2`, false},
	{"random_uuid", nil, "-4", false},
	{"read_notes", nil, "permissions this call lacked", true},
	// The Inspector's CLI declares no elicitation: the tool is refused
	// before it runs, rather than failing its ask.
	{"remove_note", []string{"path=a.txt"}, "needs the client capability elicitation", true},
	{"roll_dice", []string{"count=2", "sides=6"}, `"rolls":[`, false},
	{"search_invoices", []string{"startDate=2026-01-01", "endDate=2026-01-31", "status=paid"}, `"total":2230.5`, false},
	{"slugify", []string{"text=Hello, World!"}, "hello-world", false},
	{"text_stats", []string{"text=One two. Three."}, `"sentences":2`, false},
}

// TestMCPInspector drives every example tool with the official MCP
// Inspector's CLI, a client written by others, over stdio and Streamable
// HTTP: tools/list lists each, and tools/call answers each as expected.
func TestMCPInspector(t *testing.T) {
	// Each example module serves a tool of its own name: a new example
	// without a call here fails.
	examples, err := os.ReadDir("../tools")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range examples {
		if e.IsDir() && !slices.ContainsFunc(inspectorCalls, func(c inspectorCall) bool { return c.tool == e.Name() }) {
			t.Errorf("inspectorCalls has no call of the example %s", e.Name())
		}
	}
	writeHostile(t)
	s := startHTTP(t)
	engine := os.Getenv("WASMCP_ENGINE")
	if engine == "" {
		engine = "wazero"
	}
	targets := map[string][]string{
		// Its stdio transport passes on only a few variables of its own
		// environment, so the engine is named with -e.
		"stdio": {"-e", "WASMCP_ENGINE=" + engine, "--", binary, "serve", "--tools", toolsDir, "--cache-dir", cacheDir, "--log-level", "error"},
		"http":  {"--", s.url},
	}
	for _, transport := range []string{"stdio", "http"} {
		target := targets[transport]
		t.Run(transport, func(t *testing.T) {
			var list struct {
				Tools []struct {
					Name        string
					InputSchema struct{ Type string }
				}
			}
			inspector(t, &list, 0, append([]string{"--method", "tools/list"}, target...)...)
			var names []string
			for _, tool := range list.Tools {
				if tool.InputSchema.Type != "object" {
					t.Errorf("tools/list gives %s the inputSchema type %q", tool.Name, tool.InputSchema.Type)
				}
				names = append(names, tool.Name)
			}
			for _, c := range inspectorCalls {
				if !slices.Contains(names, c.tool) {
					t.Errorf("tools/list lacks %s: %v", c.tool, names)
				}
				var res struct {
					Content []struct{ Text string }
					IsError bool
				}
				// The Inspector exits 5 on a result with isError.
				status := 0
				if c.isError {
					status = 5
				}
				args := []string{"--method", "tools/call", "--tool-name", c.tool}
				if len(c.args) > 0 {
					args = append(append(args, "--tool-arg"), c.args...)
				}
				inspector(t, &res, status, append(args, target...)...)
				var texts []string
				for _, part := range res.Content {
					texts = append(texts, part.Text)
				}
				if got := strings.Join(texts, "\n"); res.IsError != c.isError || !strings.Contains(got, c.want) {
					t.Errorf("%s %v = %q (isError %v); want isError %v and %q", c.tool, c.args, got, res.IsError, c.isError, c.want)
				}
			}
		})
	}
}

// inspector runs `inspector --cli ARGS`, checks its exit status, and
// decodes the first JSON value it prints into v.
func inspector(t *testing.T, v any, status int, args ...string) {
	t.Helper()
	cmd := nodeCommand(t, "npx", append([]string{"--no-install", "@modelcontextprotocol/inspector", "--cli"}, args...)...)
	cmd.Env = append(cmd.Env, "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "catalog.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if got := cmd.ProcessState.ExitCode(); got != status {
		t.Fatalf("inspector %v: exit status %d (%v); want %d\nstdout:\n%s\nstderr:\n%s", args, got, err, status, stdout.String(), stderr.String())
	}
	if err := json.NewDecoder(&stdout).Decode(v); err != nil {
		t.Fatalf("inspector %v printed no JSON (%v):\n%s", args, err, stdout.String())
	}
}
