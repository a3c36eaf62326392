package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

func TestPayment(t *testing.T) {
	for _, c := range []struct {
		in   args
		want result
	}{
		{args{250000, 4.5, 30}, result{MonthlyPayment: 1266.71, Payments: 360, TotalPaid: 456015.6, TotalInterest: 206015.6}},
		{args{12000, 0, 1}, result{MonthlyPayment: 1000, Payments: 12, TotalPaid: 12000, TotalInterest: 0}},
		{args{1000, 12, 1}, result{MonthlyPayment: 88.85, Payments: 12, TotalPaid: 1066.2, TotalInterest: 66.2}},
	} {
		got, err := payment(c.in)
		if err != nil || got != c.want {
			t.Errorf("payment(%+v) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []args{{0, 5, 10}, {1000, -1, 10}, {1000, 101, 10}, {1000, 5, 0}, {1000, 5, 51}} {
		if _, err := payment(in); err == nil {
			t.Errorf("payment(%+v) succeeded", in)
		}
	}
}

// TestManifest checks that the manifest loads, links the tool to the
// interface main serves, and that read serves it as an app.
func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "loan_payment", abi.OutputJSON)
	var ui abi.ToolUI
	if json.Unmarshal(m.Tools[0].Meta[abi.UIKey], &ui) != nil || ui.ResourceURI != viewURI {
		t.Fatalf("the tool's interface is %+v; want %s", ui, viewURI)
	}
	res, err := read(guest.ReadRequest{URI: viewURI})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contents[0]
	if c.MIMEType != abi.UIMIMEType || !strings.Contains(c.Text, `"tools/call"`) {
		t.Errorf("read served %s, %d bytes", c.MIMEType, len(c.Text))
	}
}
