package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// tsSeen is what e2e/node/client.mjs reports.
type tsSeen struct {
	Tools, Resources, Templates, Prompts []string
	Calculate                            string
	DivideByZero                         struct {
		IsError bool
		Text    string
	}
	About, Invoice, Chase string
	Review                []string
	CompleteDeclared      tsCompletion
	CompleteModule        tsCompletion
}

type tsCompletion struct {
	Values []string
	Total  int
}

// TestTypeScriptClient drives the examples with the official TypeScript
// SDK's client, another implementation than the Go SDK the other tests
// use, over stdio and Streamable HTTP: tools, resources, templates,
// prompts and completions, declared and from a module.
func TestTypeScriptClient(t *testing.T) {
	s := startHTTP(t)
	for name, args := range map[string][]string{
		"http":  {"http", s.url},
		"stdio": append([]string{"stdio"}, stdioCommand().Args...),
	} {
		t.Run(name, func(t *testing.T) {
			var seen tsSeen
			runTSClient(t, "examples", args, &seen)
			for _, want := range []string{"calculate", "search_invoices", "loan_payment"} {
				if !slices.Contains(seen.Tools, want) {
					t.Errorf("tools/list lacks %s: %v", want, seen.Tools)
				}
			}
			if seen.Calculate != "15.0" || !seen.DivideByZero.IsError || !strings.Contains(seen.DivideByZero.Text, "zero") {
				t.Errorf("calls: %q, %+v", seen.Calculate, seen.DivideByZero)
			}
			if !slices.Contains(seen.Resources, "invoices://about") || !slices.Contains(seen.Templates, "invoices://{id}") ||
				!strings.Contains(seen.About, "invoice") || seen.Invoice != "INV-2026-007" {
				t.Errorf("resources %v, templates %v, about %q, invoice %q", seen.Resources, seen.Templates, seen.About, seen.Invoice)
			}
			if !slices.Contains(seen.Prompts, "chase_invoice") || !strings.Contains(seen.Chase, "INV-2026-007") ||
				!strings.Contains(seen.Chase, "firm") || !slices.Equal(seen.Review, []string{"resource", "text"}) {
				t.Errorf("prompts %v, chase %q, review %v", seen.Prompts, seen.Chase, seen.Review)
			}
			if !slices.Equal(seen.CompleteDeclared.Values, []string{"friendly", "firm"}) ||
				len(seen.CompleteModule.Values) != 10 || seen.CompleteModule.Values[0] != "INV-2026-010" || seen.CompleteModule.Total != 10 {
				t.Errorf("completions: declared %+v, from the module %+v", seen.CompleteDeclared, seen.CompleteModule)
			}
		})
	}
}

// runTSClient runs scenario of e2e/node/client.mjs on the server args
// name, and decodes what it prints into seen.
func runTSClient(t *testing.T, scenario string, args []string, seen any) {
	t.Helper()
	cmd := nodeCommand(t, "node", append([]string{"client.mjs", scenario}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client.mjs %s: %v\n%s", scenario, err, stderr.String())
	}
	if err := json.Unmarshal(out, seen); err != nil {
		t.Fatalf("client.mjs %s printed %q: %v", scenario, out, err)
	}
}

// The TypeScript SDK's client answers a tool's asks: an elicitation and a
// request for its roots, asked at once (askall), over stdio and HTTP.
func TestTypeScriptClientAnswersAsks(t *testing.T) {
	dir := askDir(t)
	s := startHTTPIn(t, dir)
	stdio := stdioCommand("--tools", dir)
	for name, args := range map[string][]string{
		"http":  {"http", s.url},
		"stdio": append([]string{"stdio"}, stdio.Args...),
	} {
		t.Run(name, func(t *testing.T) {
			var seen struct {
				IsError bool
				Text    string
				Asked   []string
			}
			runTSClient(t, "ask", args, &seen)
			answers, _ := strings.CutPrefix(seen.Text, "02\n")
			var got struct {
				A struct {
					Action  string
					Content map[string]string
				}
				B struct{ Roots []struct{ URI, Name string } }
			}
			if seen.IsError || json.Unmarshal([]byte(answers), &got) != nil || got.A.Action != "accept" || got.A.Content["name"] != "ts" ||
				len(got.B.Roots) != 1 || got.B.Roots[0].URI != "file:///ts" {
				t.Errorf("askall = %q (isError %v); want the client's answers to both asks", seen.Text, seen.IsError)
			}
			if !slices.Equal(seen.Asked, []string{"elicitation/create: x", "roots/list"}) {
				t.Errorf("the client was asked %q", seen.Asked)
			}
		})
	}
}
