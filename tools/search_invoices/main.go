// Command search_invoices is a wasmcp tool that lists invoices in a date
// range. It shows output mode "json": the result is structured data checked
// against an outputSchema. The invoices are a fixed, made-up data set
// embedded in the module, since a tool has no files or network to read from.
//
// It also serves the invoices as resources: invoices://all and, through
// the template invoices://{id}, each invoice, which the module reads when
// it is started as resources/read (docs/abi.md, "Reading a resource"); and
// the prompt review_invoice, which it gets when started as prompts/get,
// with the invoice embedded; and the completions of invoice ids, from the
// data, when started as completion/complete. guest.Resources,
// guest.Prompts and guest.Completions make the three entry points.
package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

//go:embed invoices.json
var invoicesJSON []byte

// Invoice is one invoice, as stored and as returned.
type Invoice struct {
	ID       string  `json:"id"`
	Customer string  `json:"customer"`
	Date     string  `json:"date"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Status   string  `json:"status"`
}

type args struct {
	StartDate string `json:"startDate"`
	EndDate   string `json:"endDate"`
	Status    string `json:"status"`
}

type result struct {
	Invoices []Invoice `json:"invoices"`
	Count    int       `json:"count"`
	Total    float64   `json:"total"`
}

var statuses = []string{"paid", "unpaid", "void"}

const dateLayout = "2006-01-02"

func main() {
	guest.Main(
		guest.JSON("search_invoices", func(in args) (result, error) {
			invoices, err := loadInvoices()
			if err != nil {
				return result{}, err
			}
			res, err := search(invoices, in)
			if err == nil {
				// Tells a watching client how selective the query was.
				guest.Logf(guest.Info, "%d of %d invoices match", res.Count, len(invoices))
			}
			return res, err
		}),
		guest.Resources(read),
		guest.Prompts(prompt),
		guest.Completions(complete),
	)
}

// complete offers the ids of the invoices that begin with what the client
// typed, ignoring case, in order, from the data set itself: the invoices:// template's
// id and review_invoice's, whose manifest entries say "complete": "module".
// (chase_invoice declares its ids in the manifest instead.)
func complete(req guest.CompleteRequest) (*guest.CompleteResult, error) {
	invoices, err := loadInvoices()
	if err != nil {
		return nil, err
	}
	res := &guest.CompleteResult{}
	prefix := strings.ToUpper(req.Argument.Value)
	for _, inv := range invoices {
		if strings.HasPrefix(inv.ID, prefix) {
			res.Values = append(res.Values, inv.ID)
		}
	}
	slices.Sort(res.Values)
	res.Total = len(res.Values)
	return res, nil
}

// read answers one resources/read: all the invoices, or the one the
// template's id names.
func read(req guest.ReadRequest) (*guest.ReadResult, error) {
	invoices, err := loadInvoices()
	if err != nil {
		return nil, err
	}
	var data any = invoices
	if req.URI != "invoices://all" {
		if data, err = find(invoices, req.Arguments["id"]); err != nil {
			return nil, err
		}
	}
	text, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return &guest.ReadResult{Contents: []guest.Contents{{URI: req.URI, MIMEType: "application/json", Text: string(text)}}}, nil
}

func find(invoices []Invoice, id string) (Invoice, error) {
	i := slices.IndexFunc(invoices, func(inv Invoice) bool { return inv.ID == id })
	if i < 0 {
		return Invoice{}, fmt.Errorf("there is no invoice %q; ids run from INV-2026-001 to INV-2026-%03d", id, len(invoices))
	}
	return invoices[i], nil
}

// prompt answers prompts/get of review_invoice: the invoice, embedded as
// the resource invoices://{id}, and the request.
func prompt(req guest.PromptRequest) (*guest.PromptResult, error) {
	invoices, err := loadInvoices()
	if err != nil {
		return nil, err
	}
	inv, err := find(invoices, req.Arguments["id"])
	if err != nil {
		return nil, err
	}
	text, err := json.Marshal(inv)
	if err != nil {
		return nil, err
	}
	embedded, err := json.Marshal(map[string]any{"type": "resource", "resource": map[string]string{
		"uri": "invoices://" + inv.ID, "mimeType": "application/json", "text": string(text)}})
	if err != nil {
		return nil, err
	}
	return &guest.PromptResult{
		Description: "Review of invoice " + inv.ID,
		Messages: []guest.PromptMessage{
			{Role: "user", Content: guest.Content{Raw: embedded}},
			{Role: "user", Content: guest.TextContent(fmt.Sprintf(
				"Review invoice %s above: is the amount plausible for %s, and what should happen next given its status (%s)?", inv.ID, inv.Customer, inv.Status))},
		},
	}, nil
}

func loadInvoices() ([]Invoice, error) {
	var invoices []Invoice
	if err := json.Unmarshal(invoicesJSON, &invoices); err != nil {
		return nil, fmt.Errorf("bundled invoice data is corrupt: %v", err)
	}
	return invoices, nil
}

// search returns the invoices dated from in.StartDate to in.EndDate, both
// inclusive, with in.Status if it is set, ordered by date and then id so
// that the same question always gets the same answer.
func search(invoices []Invoice, in args) (result, error) {
	start, err := parseDate("startDate", in.StartDate)
	if err != nil {
		return result{}, err
	}
	end, err := parseDate("endDate", in.EndDate)
	if err != nil {
		return result{}, err
	}
	if end.Before(start) {
		return result{}, fmt.Errorf("endDate (%s) is before startDate (%s)", in.EndDate, in.StartDate)
	}
	if in.Status != "" && !slices.Contains(statuses, in.Status) {
		return result{}, fmt.Errorf("status %q is not one of %s", in.Status, strings.Join(statuses, ", "))
	}

	// Not nil, so that no match encodes as [] and not null, which the
	// outputSchema would reject.
	found := []Invoice{}
	var cents int64
	for _, inv := range invoices {
		date, err := time.Parse(dateLayout, inv.Date)
		if err != nil {
			return result{}, fmt.Errorf("bundled invoice %s has a bad date %q", inv.ID, inv.Date)
		}
		if date.Before(start) || date.After(end) || (in.Status != "" && inv.Status != in.Status) {
			continue
		}
		found = append(found, inv)
		// Summing cents keeps 0.10 + 0.20 from becoming 0.30000000000000004.
		cents += int64(math.Round(inv.Amount * 100))
	}
	slices.SortFunc(found, func(a, b Invoice) int {
		if c := strings.Compare(a.Date, b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return result{Invoices: found, Count: len(found), Total: float64(cents) / 100}, nil
}

func parseDate(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%s is required, as a date such as 2026-03-31", field)
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not a valid date; use YYYY-MM-DD, such as 2026-03-31", field, s)
	}
	return t, nil
}
