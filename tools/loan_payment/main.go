// Command loan_payment is a wasmcp tool with an interface of its own: it
// computes a fixed-rate loan's monthly payment, and serves, as the ui://
// resource its manifest links to the tool (MCP Apps), a page that a client
// which renders apps shows in place of the bare result. The page asks the
// host to call the tool as its inputs change.
package main

import (
	_ "embed"
	"errors"
	"fmt"
	"math"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// view is the tool's interface, served as viewURI.
//
//go:embed view.html
var view string

const viewURI = "ui://loan_payment/view.html"

type args struct {
	Principal  float64 `json:"principal"`
	AnnualRate float64 `json:"annualRate"`
	Years      int     `json:"years"`
}

type result struct {
	MonthlyPayment float64 `json:"monthlyPayment"`
	Payments       int     `json:"payments"`
	TotalPaid      float64 `json:"totalPaid"`
	TotalInterest  float64 `json:"totalInterest"`
}

func main() {
	guest.Main(
		guest.JSON("loan_payment", payment),
		guest.Resources(read),
	)
}

// payment is the annuity formula, P·r / (1 − (1 + r)^−n) for a monthly
// rate r over n months, in cents.
func payment(in args) (result, error) {
	switch {
	case !(in.Principal > 0) || in.Principal > 1e12:
		return result{}, fmt.Errorf("principal must be more than 0 and at most 1e12, not %v", in.Principal)
	case !(in.AnnualRate >= 0) || in.AnnualRate > 100:
		return result{}, fmt.Errorf("annualRate is a percentage from 0 to 100, not %v", in.AnnualRate)
	case in.Years < 1 || in.Years > 50:
		return result{}, fmt.Errorf("years must be from 1 to 50, not %d", in.Years)
	}
	n := in.Years * 12
	r := in.AnnualRate / 100 / 12
	monthly := in.Principal / float64(n)
	if r > 0 {
		monthly = in.Principal * r / (1 - math.Pow(1+r, -float64(n)))
	}
	monthly = cents(monthly)
	total := cents(monthly * float64(n))
	return result{MonthlyPayment: monthly, Payments: n, TotalPaid: total, TotalInterest: cents(total - in.Principal)}, nil
}

func cents(v float64) float64 { return math.Round(v*100) / 100 }

// read serves the interface.
func read(req guest.ReadRequest) (*guest.ReadResult, error) {
	if req.URI != viewURI {
		return nil, errors.New("this module serves only " + viewURI)
	}
	return &guest.ReadResult{Contents: []guest.Contents{{URI: viewURI, MIMEType: "text/html;profile=mcp-app", Text: view}}}, nil
}
