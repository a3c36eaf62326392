package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInvoicePrompts lists and gets the prompts of the search_invoices
// example: a template served from its manifest, and one its module gets,
// with the invoice embedded as a resource.
func TestInvoicePrompts(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		list, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var chase *mcp.Prompt
		var names []string
		for _, p := range list.Prompts {
			names = append(names, p.Name)
			if p.Name == "chase_invoice" {
				chase = p
			}
		}
		if strings.Join(names, " ") != "chase_invoice review_invoice" {
			t.Fatalf("prompts/list = %v", names)
		}
		if len(chase.Arguments) != 2 || chase.Arguments[0].Name != "id" || !chase.Arguments[0].Required || chase.Arguments[1].Required || chase.Title != "Chase an unpaid invoice" {
			t.Errorf("chase_invoice = %+v", chase)
		}

		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "chase_invoice", Arguments: map[string]string{"id": "INV-2026-007", "tone": "firm"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
			t.Fatalf("chase_invoice = %+v", res)
		}
		if text := res.Messages[0].Content.(*mcp.TextContent).Text; text != "Read the resource invoices://INV-2026-007 and draft a reminder to the customer that invoice INV-2026-007 is unpaid. Tone: firm." {
			t.Errorf("chase_invoice's text = %q", text)
		}

		res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review_invoice", Arguments: map[string]string{"id": "INV-2026-007"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) != 2 || res.Description != "Review of invoice INV-2026-007" {
			t.Fatalf("review_invoice = %+v", res)
		}
		if r, ok := res.Messages[0].Content.(*mcp.EmbeddedResource); !ok || r.Resource.URI != "invoices://INV-2026-007" || !strings.Contains(r.Resource.Text, "Stark Industries") {
			t.Errorf("review_invoice's first message = %+v; want the invoice embedded", res.Messages[0].Content)
		}

		for _, name := range []string{"chase_invoice", "review_invoice"} {
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "needs the argument(s) id") {
				t.Errorf("%s without its id: %v; want -32602", name, err)
			}
		}
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review_invoice", Arguments: map[string]string{"id": "INV-2026-007", "tone": "firm"}})
		if rpc := (*jsonrpc.Error)(nil); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, `has no argument "tone"; its arguments are id`) {
			t.Errorf("review_invoice with an argument it lacks: %v; want -32602", err)
		}
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review_invoice", Arguments: map[string]string{"id": "INV-1999-001"}})
		if err == nil || !strings.Contains(err.Error(), `there is no invoice "INV-1999-001"`) {
			t.Errorf("reviewing a missing invoice: %v", err)
		}
	})
}

// TestInvoiceCompletions completes the invoice ids of the search_invoices
// example's prompt arguments and template variable, from its manifest and
// from the module.
func TestInvoiceCompletions(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		if cs.InitializeResult().Capabilities.Completions == nil {
			t.Fatal("the completions capability is not declared")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		complete := func(ref *mcp.CompleteReference, arg, value string) *mcp.CompletionResultDetails {
			t.Helper()
			res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
			if err != nil {
				t.Fatalf("completing %s %q: %v", arg, value, err)
			}
			return &res.Completion
		}
		prompt := &mcp.CompleteReference{Type: "ref/prompt", Name: "chase_invoice"}
		if got := complete(prompt, "id", "inv-2026-01"); strings.Join(got.Values, " ") != "INV-2026-010 INV-2026-011 INV-2026-012 INV-2026-013 INV-2026-014 INV-2026-015 INV-2026-016 INV-2026-017 INV-2026-018 INV-2026-019" || got.Total != 10 || got.HasMore {
			t.Errorf("chase_invoice id inv-2026-01 = %+v", got)
		}
		if got := complete(prompt, "tone", "f"); strings.Join(got.Values, " ") != "friendly firm" {
			t.Errorf("chase_invoice tone f = %+v", got)
		}
		// From the module, which completes the template and review_invoice.
		if got := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "invoices://{id}"}, "id", "INV-2026-02"); strings.Join(got.Values, " ") != "INV-2026-020" {
			t.Errorf("invoices://{id} id INV-2026-02 = %+v", got)
		}
		if got := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "review_invoice"}, "id", "inv-2026-00"); len(got.Values) != 9 || got.Values[0] != "INV-2026-001" || got.Total != 9 {
			t.Errorf("review_invoice id inv-2026-00 = %+v", got)
		}
		_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, Argument: mcp.CompleteParamsArgument{Name: "id"}})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("completing for an unknown prompt: %v; want -32602", err)
		}
	})
}
