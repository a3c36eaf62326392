// Package grafana holds a Grafana dashboard of wasmcp's Prometheus metrics
// (wasmcp.json). Its test checks every query against what the server
// exports, as internal/metrics makes it, so that a renamed metric or label
// fails here rather than as an empty panel.
package grafana

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wasmcp/wasmcp/internal/metrics"
	"github.com/wasmcp/wasmcp/internal/observe"
)

type dashboard struct {
	Title      string
	UID        string
	Panels     []panel
	Templating struct {
		List []struct {
			Name  string
			Type  string
			Query json.RawMessage
		}
	}
}

type panel struct {
	ID         int
	Type       string
	Title      string
	Datasource *struct{ UID string }
	Targets    []struct{ Expr string }
	GridPos    struct{ H, W, X, Y int }
}

// exported returns the series names the server's /metrics serves, with
// each one's labels, once every kind of event has been reported to it.
// Prometheus adds instance and job to every series it scrapes.
func exported(t *testing.T) map[string][]string {
	t.Helper()
	m := metrics.New()
	m.CallStarted("calculate")
	m.CallFinished(observe.Call{Tool: "calculate", Outcome: observe.OK, Duration: time.Millisecond, PeakMemory: 1 << 20})
	m.Compiled("calculate.wasm", time.Millisecond, errors.New("broken"))
	m.Loaded(1, 1)
	m.Reloaded(nil)
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(w.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	names := map[string][]string{}
	for name, f := range families {
		labels := []string{"instance", "job"}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if !slices.Contains(labels, l.GetName()) {
					labels = append(labels, l.GetName())
				}
			}
		}
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[name+"_bucket"] = append(labels, "le")
			names[name+"_sum"] = labels
			names[name+"_count"] = labels
		case dto.MetricType_SUMMARY:
			names[name] = append(labels, "quantile")
			names[name+"_sum"] = labels
			names[name+"_count"] = labels
		default:
			names[name] = labels
		}
	}
	return names
}

// series finds the metric names a query selects, with the labels each
// selector matches on. Every name the server could export has one of
// these prefixes, and nothing else in PromQL does.
var series = regexp.MustCompile(`\b((?:wasmcp|process|go|promhttp)_[A-Za-z0-9_:]*)(\{[^}]*\})?`)

var matcher = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)`)

func load(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("wasmcp.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("wasmcp.json: %v", err)
	}
	return d
}

func TestQueriesUseExportedMetrics(t *testing.T) {
	d := load(t)
	names := exported(t)
	var queries []string
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			queries = append(queries, target.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			var q struct{ Query string }
			if err := json.Unmarshal(v.Query, &q); err != nil || q.Query == "" {
				t.Errorf("variable %s has no query: %s", v.Name, v.Query)
			}
			queries = append(queries, q.Query)
		}
	}
	used := map[string]bool{}
	for _, q := range queries {
		found := series.FindAllStringSubmatch(q, -1)
		if len(found) == 0 {
			t.Errorf("query %q uses none of the server's metrics", q)
		}
		for _, s := range found {
			labels, ok := names[s[1]]
			if !ok {
				t.Errorf("query %q uses %s, which the server does not export", q, s[1])
				continue
			}
			used[s[1]] = true
			for _, l := range matcher.FindAllStringSubmatch(s[2], -1) {
				if !slices.Contains(labels, l[1]) {
					t.Errorf("query %q matches %s on label %q; it has %v", q, s[1], l[1], labels)
				}
			}
		}
	}
	// Every metric of wasmcp's own has a panel.
	for name := range names {
		if strings.HasPrefix(name, "wasmcp_") && !used[name] && !used[strings.TrimSuffix(name, "_count")] && !used[histogramOf(name, names)] {
			t.Errorf("no panel shows %s", name)
		}
	}
}

// histogramOf returns the _bucket series of the histogram a _sum or
// _count series belongs to, so that a histogram shown by its quantiles
// counts as shown.
func histogramOf(name string, names map[string][]string) string {
	for _, suffix := range []string{"_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if _, isHistogram := names[base+"_bucket"]; isHistogram {
				return base + "_bucket"
			}
		}
	}
	return ""
}

// The dashboard imports anywhere: its panels take the data source chosen
// in its variable, their ids are unique, and they lie within the grid.
func TestDashboardShape(t *testing.T) {
	d := load(t)
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q", d.Title, d.UID)
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel %q repeats id %d", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q lies at %+v, outside the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: data source %+v, %d queries; want ${datasource} and a query", p.Title, p.Datasource, len(p.Targets))
		}
	}
}
