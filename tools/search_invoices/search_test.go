package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

func mustLoad(t *testing.T) []Invoice {
	t.Helper()
	invoices, err := loadInvoices()
	if err != nil {
		t.Fatal(err)
	}
	return invoices
}

func ids(r result) []string {
	var out []string
	for _, inv := range r.Invoices {
		out = append(out, inv.ID)
	}
	return out
}

// TestData keeps the bundled data set within what the outputSchema and the
// description promise.
func TestData(t *testing.T) {
	invoices := mustLoad(t)
	if len(invoices) < 15 {
		t.Fatalf("only %d invoices", len(invoices))
	}
	seen := map[string]bool{}
	for _, inv := range invoices {
		if seen[inv.ID] {
			t.Errorf("duplicate id %s", inv.ID)
		}
		seen[inv.ID] = true
		d, err := time.Parse(dateLayout, inv.Date)
		if err != nil || d.Year() != 2026 {
			t.Errorf("%s: date %q", inv.ID, inv.Date)
		}
		if inv.Customer == "" || inv.Currency != "USD" || !slices.Contains(statuses, inv.Status) || inv.Amount <= 0 {
			t.Errorf("bad invoice %+v", inv)
		}
	}
}

func TestSearchWholeYear(t *testing.T) {
	invoices := mustLoad(t)
	r, err := search(invoices, args{StartDate: "2026-01-01", EndDate: "2026-12-31"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != len(invoices) || len(r.Invoices) != r.Count {
		t.Fatalf("count %d, %d invoices, want %d", r.Count, len(r.Invoices), len(invoices))
	}
	// The data file lists 005 before 004 on the same date; the result must not.
	sorted := slices.IsSortedFunc(r.Invoices, func(a, b Invoice) int {
		if c := strings.Compare(a.Date, b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if !sorted {
		t.Fatalf("not sorted by date then id: %v", ids(r))
	}
	if i := slices.Index(ids(r), "INV-2026-004"); i < 0 || ids(r)[i+1] != "INV-2026-005" {
		t.Fatalf("same-date invoices out of order: %v", ids(r))
	}
	if r.Total != 41581.24 {
		t.Fatalf("total %v", r.Total)
	}
}

func TestSearchFilters(t *testing.T) {
	invoices := mustLoad(t)
	tests := []struct {
		in    args
		ids   []string
		total float64
	}{
		// Both ends are inclusive.
		{args{StartDate: "2026-01-08", EndDate: "2026-01-31"}, []string{"INV-2026-001", "INV-2026-002", "INV-2026-003"}, 2660.75},
		{args{StartDate: "2026-01-09", EndDate: "2026-01-30"}, []string{"INV-2026-002"}, 980.5},
		{args{StartDate: "2026-02-12", EndDate: "2026-02-12"}, []string{"INV-2026-004", "INV-2026-005"}, 2815.75},
		{args{StartDate: "2026-01-01", EndDate: "2026-12-31", Status: "void"}, []string{"INV-2026-003", "INV-2026-011", "INV-2026-018"}, 3950.35},
		{args{StartDate: "2026-07-01", EndDate: "2026-12-31", Status: "unpaid"}, []string{"INV-2026-013", "INV-2026-015", "INV-2026-017", "INV-2026-019"}, 7507.3},
		{args{StartDate: "2026-05-01", EndDate: "2026-05-31", Status: "paid"}, []string{"INV-2026-010"}, 299.99},
		// Cents are summed exactly: 1250 + 980.50 + 299.99 + ... would drift as floats.
		{args{StartDate: "2026-04-01", EndDate: "2026-05-31"}, []string{"INV-2026-008", "INV-2026-009", "INV-2026-010", "INV-2026-011"}, 5995.99},
		{args{StartDate: "2025-01-01", EndDate: "2025-12-31"}, nil, 0},
		{args{StartDate: "2026-01-02", EndDate: "2026-01-07", Status: "paid"}, nil, 0},
	}
	for _, tt := range tests {
		r, err := search(invoices, tt.in)
		if err != nil {
			t.Errorf("%+v: %v", tt.in, err)
			continue
		}
		if !slices.Equal(ids(r), tt.ids) || r.Count != len(tt.ids) || r.Total != tt.total {
			t.Errorf("%+v: got %v count %d total %v; want %v total %v", tt.in, ids(r), r.Count, r.Total, tt.ids, tt.total)
		}
	}
}

func TestNoMatchIsEmptyArray(t *testing.T) {
	r, err := search(mustLoad(t), args{StartDate: "2030-01-01", EndDate: "2030-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if string(b) != `{"invoices":[],"count":0,"total":0}` {
		t.Fatalf("got %s", b)
	}
}

func TestSearchErrors(t *testing.T) {
	tests := []struct {
		in   args
		want string
	}{
		{args{StartDate: "2026-02-01", EndDate: "2026-01-01"}, "endDate (2026-01-01) is before startDate (2026-02-01)"},
		{args{StartDate: "2026-1-5", EndDate: "2026-01-31"}, `startDate "2026-1-5" is not a valid date; use YYYY-MM-DD, such as 2026-03-31`},
		{args{StartDate: "2026-01-01", EndDate: "2026-02-30"}, `endDate "2026-02-30" is not a valid date; use YYYY-MM-DD, such as 2026-03-31`},
		{args{StartDate: "2026-01-01", EndDate: "31/01/2026"}, `endDate "31/01/2026" is not a valid date; use YYYY-MM-DD, such as 2026-03-31`},
		{args{StartDate: "2026-01-01T00:00:00Z", EndDate: "2026-01-31"}, `startDate "2026-01-01T00:00:00Z" is not a valid date; use YYYY-MM-DD, such as 2026-03-31`},
		{args{EndDate: "2026-01-31"}, "startDate is required, as a date such as 2026-03-31"},
		{args{StartDate: "2026-01-01"}, "endDate is required, as a date such as 2026-03-31"},
		{args{StartDate: "2026-01-01", EndDate: "2026-01-31", Status: "overdue"}, `status "overdue" is not one of paid, unpaid, void`},
	}
	for _, tt := range tests {
		_, err := search(mustLoad(t), tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v: got %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestManifest keeps manifest.json loadable by the server and checks that
// real results satisfy its outputSchema, which the host enforces.
func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "search_invoices", abi.OutputJSON)
	input := compile(t, m.Tools[0].InputSchema)
	output := compile(t, m.Tools[0].OutputSchema)

	for _, a := range []args{
		{StartDate: "2026-01-01", EndDate: "2026-12-31"},
		{StartDate: "2026-03-01", EndDate: "2026-03-31", Status: "paid"},
		{StartDate: "2030-01-01", EndDate: "2030-01-01"},
	} {
		in := map[string]string{"startDate": a.StartDate, "endDate": a.EndDate}
		if a.Status != "" {
			in["status"] = a.Status
		}
		b, _ := json.Marshal(in)
		validate(t, input, b)
		r, err := search(mustLoad(t), a)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(r)
		validate(t, output, b)
	}

	// The schema, not the code, is what stops these under wasmcp.
	for _, bad := range []string{
		`{"startDate":"2026-01-01"}`,
		`{"startDate":"2026-01-01","endDate":"2026-01-31","status":"overdue"}`,
		`{"startDate":"2026-01-01","endDate":"2026-01-31","limit":5}`,
		`{"startDate":"January 1","endDate":"2026-01-31"}`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if input.Validate(v) == nil {
			t.Errorf("inputSchema accepts %s", bad)
		}
	}
}

func compile(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, instance []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s: %v", instance, err)
	}
}

func TestRead(t *testing.T) {
	res, err := read(guest.ReadRequest{URI: "invoices://all"})
	var all []Invoice
	if err != nil || res.Contents[0].URI != "invoices://all" || json.Unmarshal([]byte(res.Contents[0].Text), &all) != nil || len(all) != 20 {
		t.Errorf("invoices://all: %+v, %v", res, err)
	}
	res, err = read(guest.ReadRequest{URI: "invoices://INV-2026-003", Arguments: map[string]string{"id": "INV-2026-003"}})
	var one Invoice
	if err != nil || json.Unmarshal([]byte(res.Contents[0].Text), &one) != nil || one.Customer != "Initech" || one.Status != "void" {
		t.Errorf("invoices://INV-2026-003: %+v, %v", res, err)
	}
	if _, err := read(guest.ReadRequest{URI: "invoices://nope", Arguments: map[string]string{"id": "nope"}}); err == nil || !strings.Contains(err.Error(), `there is no invoice "nope"`) {
		t.Errorf("an unknown id: %v", err)
	}
}

func TestPrompt(t *testing.T) {
	res, err := prompt(guest.PromptRequest{Name: "review_invoice", Arguments: map[string]string{"id": "INV-2026-007"}})
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	var embedded struct {
		Type     string            `json:"type"`
		Resource map[string]string `json:"resource"`
	}
	if json.Unmarshal(res.Messages[0].Content.Raw, &embedded) != nil || embedded.Type != "resource" || embedded.Resource["uri"] != "invoices://INV-2026-007" {
		t.Errorf("first message = %s; want the invoice embedded", res.Messages[0].Content.Raw)
	}
	if text := res.Messages[1].Content.Text; !strings.Contains(text, "Stark Industries") || !strings.Contains(text, "unpaid") {
		t.Errorf("second message = %q", text)
	}
	if _, err := prompt(guest.PromptRequest{Name: "review_invoice", Arguments: map[string]string{"id": "x"}}); err == nil || !strings.Contains(err.Error(), `there is no invoice "x"`) {
		t.Errorf("an unknown id: %v", err)
	}
}

// TestCompletionsAreTheInvoiceIDs checks that the ids the manifest offers
// for completion are those of the data, sorted.
func TestCompletionsAreTheInvoiceIDs(t *testing.T) {
	var ids []string
	for _, inv := range mustLoad(t) {
		ids = append(ids, inv.ID)
	}
	slices.Sort(ids)
	m := tooltest.Manifest(t, "search_invoices", abi.OutputJSON)
	if got := m.Prompts[0].Arguments[0].Completions; !slices.Equal(got, ids) {
		t.Errorf("chase_invoice's completions = %v; want %v", got, ids)
	}
	if m.ResourceTemplates[0].Complete != abi.CompleteModule || m.Prompts[1].Complete != abi.CompleteModule {
		t.Errorf("the template and review_invoice are not completed by the module")
	}
	var req guest.CompleteRequest
	req.Argument.Value = "inv-2026-00"
	res, err := complete(req)
	if err != nil || !slices.Equal(res.Values, ids[:9]) || res.Total != 9 {
		t.Errorf("complete inv-2026-00 = %+v, %v; want %v", res, err, ids[:9])
	}
	req.Argument.Value = ""
	if res, _ := complete(req); !slices.Equal(res.Values, ids) {
		t.Errorf("complete with nothing typed = %v; want every id", res.Values)
	}
}
