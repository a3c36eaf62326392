package abi

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

// okResource is a resource object that passes every rule.
const okResource = `{"uri":"invoices://all","name":"invoices","mimeType":"application/json"}`

// okTemplate is a resource template object that passes every rule.
const okTemplate = `{"uriTemplate":"invoices://{id}","name":"invoice"}`

// withResources is a manifest of no tools and the given resources and
// templates (each a JSON array's members).
func withResources(resources, templates string) string {
	return `{"abi":1,"resources":[` + resources + `],"resourceTemplates":[` + templates + `]}`
}

func TestParseManifestResources(t *testing.T) {
	m, err := ParseManifest([]byte(withResources(
		`{"uri":"invoices://all","name":"invoices","title":"All invoices","description":"every invoice","mimeType":"application/json","size":12,
		  "annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2026-01-12T15:00:58Z"},
		  "icons":[{"src":"data:image/png;base64,AA==","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}],"text":"[1,2]"},
		 {"uri":"invoices://logo","name":"logo","blob":"AAEC"},
		 {"uri":"invoices://live","name":"live"}`,
		okTemplate)))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tools) != 0 || len(m.Resources) != 3 || len(m.ResourceTemplates) != 1 {
		t.Fatalf("got %d tools, %d resources, %d templates", len(m.Tools), len(m.Resources), len(m.ResourceTemplates))
	}
	all, logo, live := m.Resources[0], m.Resources[1], m.Resources[2]
	if !all.Static() || *all.Text != "[1,2]" || *all.Annotations.Priority != 0.5 || all.Icons[0].Theme != "dark" {
		t.Errorf("all = %+v", all)
	}
	if !logo.Static() || string(logo.Blob) != "\x00\x01\x02" {
		t.Errorf("logo's blob = %q", logo.Blob)
	}
	if live.Static() {
		t.Error("a resource without text or blob is static")
	}
	// An empty text is contents too.
	m, err = ParseManifest([]byte(withResources(`{"uri":"a:b","name":"n","text":""}`, "")))
	if err != nil || !m.Resources[0].Static() {
		t.Errorf("empty text: %v, static %v", err, err == nil && m.Resources[0].Static())
	}
}

func TestParseManifestRefusesResources(t *testing.T) {
	long := strings.Repeat("a", MaxURI)
	big := strings.Repeat("x", MaxStatic+1)
	many := func(n int, f func(i int) string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = f(i)
		}
		return strings.Join(items, ",")
	}
	tests := []struct {
		name, input, want string
	}{
		{"nothing declared", `{"abi":1,"resources":[],"resourceTemplates":[]}`, "declares no tools, resources, resource templates or prompts"},
		{"no uri", withResources(`{"name":"n"}`, ""), `"uri" must be absolute`},
		{"relative uri", withResources(`{"uri":"invoices/all","name":"n"}`, ""), `"uri" must be absolute`},
		{"bad uri", withResources(`{"uri":"a://%zz","name":"n"}`, ""), `"uri" is not a URI`},
		{"control character", withResources(`{"uri":"a:b\u0000","name":"n"}`, ""), "without control characters"},
		{"long uri", withResources(`{"uri":"a:`+long+`","name":"n"}`, ""), "over the limit of 2048"},
		{"no name", withResources(`{"uri":"a:b"}`, ""), `"name" is required`},
		{"blank name", withResources(`{"uri":"a:b","name":"  "}`, ""), `"name" is required`},
		{"long title", withResources(`{"uri":"a:b","name":"n","title":"`+strings.Repeat("t", MaxText+1)+`"}`, ""), `"title" is 257 bytes`},
		{"bad mime type", withResources(`{"uri":"a:b","name":"n","mimeType":"json"}`, ""), "is not a MIME type"},
		{"negative size", withResources(`{"uri":"a:b","name":"n","size":-1}`, ""), "must not be negative"},
		{"text and blob", withResources(`{"uri":"a:b","name":"n","text":"t","blob":"AA=="}`, ""), "not both"},
		{"blob not base64", withResources(`{"uri":"a:b","name":"n","blob":"not base64!"}`, ""), "illegal base64"},
		{"text too big", withResources(`{"uri":"a:b","name":"n","text":"`+big+`"}`, ""), "over the 262144-byte limit of static contents"},
		{"blob too big", withResources(`{"uri":"a:b","name":"n","blob":"`+base64.StdEncoding.EncodeToString([]byte(big))+`"}`, ""), "once decoded, over the 262144-byte limit"},
		{"duplicate uri", withResources(okResource+","+okResource, ""), `resource "invoices://all" is declared twice`},
		{"too many resources", withResources(many(MaxResources+1, func(i int) string { return fmt.Sprintf(`{"uri":"a:%d","name":"n"}`, i) }), ""), "257 resources, over the limit of 256"},
		{"unknown field", withResources(`{"uri":"a:b","name":"n","mimetype":"text/plain"}`, ""), `unknown field "mimetype" in the resource`},
		{"repeated field", withResources(`{"uri":"a:b","name":"n","uri":"a:c"}`, ""), `field "uri" appears twice`},
		{"bad audience", withResources(`{"uri":"a:b","name":"n","annotations":{"audience":["robot"]}}`, ""), `not "robot"`},
		{"bad priority", withResources(`{"uri":"a:b","name":"n","annotations":{"priority":2}}`, ""), "from 0 to 1"},
		{"bad lastModified", withResources(`{"uri":"a:b","name":"n","annotations":{"lastModified":"yesterday"}}`, ""), "ISO 8601"},
		{"unknown annotation", withResources(`{"uri":"a:b","name":"n","annotations":{"readOnlyHint":true}}`, ""), `unknown field "readOnlyHint" in the resource annotations`},
		{"icon from a file", withResources(`{"uri":"a:b","name":"n","icons":[{"src":"file:///etc/passwd"}]}`, ""), "https: or data: URI"},
		{"icon theme", withResources(`{"uri":"a:b","name":"n","icons":[{"src":"https://x/i.png","theme":"blue"}]}`, ""), `"theme" must be`},
		{"unknown icon field", withResources(`{"uri":"a:b","name":"n","icons":[{"src":"https://x/i.png","size":"1"}]}`, ""), `unknown field "size" in the icon`},
		{"too many icons", withResources(`{"uri":"a:b","name":"n","icons":[`+many(MaxIcons+1, func(int) string { return `{"src":"https://x/i.png"}` })+`]}`, ""), "17 icons"},
		{"bad template", withResources("", `{"uriTemplate":"a://{id","name":"n"}`), "not an RFC 6570 URI template"},
		{"template without variables", withResources("", `{"uriTemplate":"a://b","name":"n"}`), "has no variables"},
		{"template without scheme", withResources("", `{"uriTemplate":"{scheme}://b","name":"n"}`), "must start with a URI scheme"},
		{"template without name", withResources("", `{"uriTemplate":"a://{id}"}`), `"name" is required`},
		{"template with contents", withResources("", `{"uriTemplate":"a://{id}","name":"n","text":"t"}`), `unknown field "text" in the resource template`},
		{"duplicate template", withResources("", okTemplate+","+okTemplate), `resource template "invoices://{id}" is declared twice`},
		{"too many templates", withResources("", many(MaxResources+1, func(i int) string { return fmt.Sprintf(`{"uriTemplate":"a:%d/{x}","name":"n"}`, i) })), "257 resource templates"},
		{"reserved tool name", withTools(toolJSON(EntryReadResource, "")), "is reserved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
}
