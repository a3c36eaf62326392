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
		"http":  {"client.mjs", "http", s.url},
		"stdio": append([]string{"client.mjs", "stdio"}, stdioCommand().Args...),
	} {
		t.Run(name, func(t *testing.T) {
			cmd := nodeCommand(t, "node", args...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("client.mjs: %v\n%s", err, stderr.String())
			}
			var seen tsSeen
			if err := json.Unmarshal(out, &seen); err != nil {
				t.Fatalf("client.mjs printed %q: %v", out, err)
			}
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
