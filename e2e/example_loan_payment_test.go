package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loan_payment is the MCP Apps example (tools/loan_payment): a tool whose
// _meta links it to a ui:// resource of its module, which the module serves
// as HTML a client renders.
func TestExampleLoanPayment(t *testing.T) {
	good := []toolCase{
		{map[string]any{"principal": 250000, "annualRate": 4.5, "years": 30},
			`{"monthlyPayment":1266.71,"payments":360,"totalInterest":206015.6,"totalPaid":456015.6}`},
	}
	bad := []toolCase{
		{map[string]any{"principal": 1000, "annualRate": 5, "years": 0}, "years"},
	}
	checkToolCases(t, "loan_payment", good, bad)
}

func TestExampleLoanPaymentInterface(t *testing.T) {
	const view = "ui://loan_payment/view.html"
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var tool *mcp.Tool
		for _, tl := range tools.Tools {
			if tl.Name == "loan_payment" {
				tool = tl
			}
		}
		if tool == nil {
			t.Fatal("loan_payment is not listed")
		}
		ui, _ := tool.Meta["ui"].(map[string]any)
		if ui["resourceUri"] != view || len(tool.Icons) != 1 || tool.Icons[0].MIMEType != "image/svg+xml" {
			t.Errorf("loan_payment is listed with _meta %v and icons %+v; want its interface %s and one icon", tool.Meta, tool.Icons, view)
		}
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: view})
		if err != nil {
			t.Fatal(err)
		}
		c := res.Contents[0]
		if c.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(c.Text, "ui/initialize") {
			t.Errorf("the interface is %s, %d bytes", c.MIMEType, len(c.Text))
		}
	})
}
