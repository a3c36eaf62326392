package registry

import (
	"strings"
	"testing"

	"github.com/yosida95/uritemplate/v3"

	"github.com/wasmcp/wasmcp/abi"
)

func TestSpaceOf(t *testing.T) {
	for _, c := range []struct {
		uri      string
		template bool
		want     space
	}{
		{"notes://work/a", false, space{"notes", "notes://work"}},
		{"notes://work", false, space{"notes", "notes://work"}},
		{"NOTES://work?q", false, space{"notes", "notes://work"}},
		{"file:///x", false, space{"file", "file://"}},
		{"urn:isbn:1", false, space{"urn", "urn:isbn:1"}},
		{"ui://app/{view}", true, space{"ui", "ui://app"}},
		{"ui://app#{frag}", true, space{"ui", "ui://app"}},
		{"notes://{name}", true, space{scheme: "notes"}},
		{"notes://s{+rest}", true, space{scheme: "notes"}},
		{"notes:{+path}", true, space{scheme: "notes"}},
		{"notes:/x/{y}", true, space{scheme: "notes"}},
	} {
		if got := spaceOf(c.uri, c.template); got != c.want {
			t.Errorf("spaceOf(%q, %v) = %+v; want %+v", c.uri, c.template, got, c.want)
		}
	}
}

// serving is a stand-in module serving the given resources and templates
// (those with a "{").
func serving(path string, uris ...string) *Module {
	m := fake(path, path)
	for _, u := range uris {
		if strings.Contains(u, "{") {
			m.templates = append(m.templates, &Template{Module: m, Spec: abi.ResourceTemplate{URITemplate: u}, Match: uritemplate.MustNew(u)})
		} else {
			m.resources = append(m.resources, &Resource{Module: m, Spec: abi.Resource{URI: u}})
		}
	}
	return m
}

// TestNoModuleServesAnothersURIs: a template or resource that could match
// a URI another module serves is not served, whichever of the two is the
// template, and the file whose name sorts first keeps its own.
func TestNoModuleServesAnothersURIs(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b    []string // a.wasm's and b.wasm's
		refused []string // b's items not served
		probe   string   // a URI of a's that b's would have matched
	}{
		{"a template capturing another's template", []string{"notes://{name}"}, []string{"notes://s{+rest}", "mine://{x}"}, []string{"notes://s{+rest}"}, "notes://secret"},
		{"a template capturing another's resource", []string{"notes://secret"}, []string{"notes://s{+rest}"}, []string{"notes://s{+rest}"}, "notes://secret"},
		{"a resource under another's template", []string{"notes://{name}"}, []string{"notes://secret"}, []string{"notes://secret"}, ""},
		{"a template reaching into another's authority", []string{"ui://a/view.html"}, []string{"ui://{+path}"}, []string{"ui://{+path}"}, "ui://a/view.html"},
		{"a template in another's authority", []string{"ui://a/{+view}"}, []string{"ui://a/x/{y}", "ui://b/{y}"}, []string{"ui://a/x/{y}"}, "ui://a/x/1"},
		{"the same URI", []string{"a://one"}, []string{"a://one", "b://two"}, []string{"a://one"}, "a://one"},
		{"schemes compare ignoring case", []string{"notes://{name}"}, []string{"NOTES://work/x"}, []string{"NOTES://work/x"}, ""},
		{"a URI without authority", []string{"urn:isbn:1"}, []string{"urn:isbn:2", "urn:{+id}"}, []string{"urn:{+id}"}, "urn:isbn:1"},
		{"authorities of one scheme", []string{"ui://a/view.html", "ui://a/{x}"}, []string{"ui://b/view.html", "ui://ab/{x}"}, nil, "ui://a/x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// b first in the directory listing: plan orders by file name.
			cat := catalogOf(t, policyRead{}, serving("b.wasm", c.b...), serving("a.wasm", c.a...))
			servedFrom := map[[2]string]bool{}
			for _, r := range cat.Resources {
				servedFrom[[2]string{r.Module.Path, r.Spec.URI}] = true
			}
			for _, tm := range cat.Templates {
				servedFrom[[2]string{tm.Module.Path, tm.Spec.URITemplate}] = true
			}
			for _, u := range c.a {
				if !servedFrom[[2]string{"a.wasm", u}] {
					t.Errorf("a.wasm's %s is not served; the first file keeps its own", u)
				}
			}
			var refused []string
			for _, u := range c.b {
				if !servedFrom[[2]string{"b.wasm", u}] {
					refused = append(refused, u)
				}
			}
			if strings.Join(refused, " ") != strings.Join(c.refused, " ") {
				t.Errorf("b.wasm's refused items = %v; want %v", refused, c.refused)
			}
			if len(cat.Errors) != len(c.refused) {
				t.Fatalf("errors = %v; want one per refused item", cat.Errors)
			}
			for i, e := range cat.Errors {
				if e.Path != "b.wasm" || !strings.Contains(e.Error(), c.refused[i]) || !strings.Contains(e.Error(), "a.wasm serves") {
					t.Errorf("error = %v; want b.wasm's, naming %s and a.wasm", e, c.refused[i])
				}
			}
			if c.probe == "" {
				return
			}
			switch rd, ok := cat.FindRead(c.probe); {
			case !ok:
				t.Errorf("%s is not served", c.probe)
			case rd.Resource != nil && rd.Resource.Module.Path != "a.wasm":
				t.Errorf("%s is read from %s's resource", c.probe, rd.Resource.Module.Path)
			case rd.Template != nil && rd.Template.Module.Path != "a.wasm":
				t.Errorf("%s is read by %s's template %s", c.probe, rd.Template.Module.Path, rd.Template.Spec.URITemplate)
			}
		})
	}
}
