package abi

import (
	"encoding/json"
	"strings"
	"testing"
)

// appManifest is a module with a tool whose interface is its ui:// resource;
// tool and resource are spliced with the test's own members.
func appManifest(toolExtra, resourceExtra string) string {
	return `{"abi":1,
		"tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}` + toolExtra + `}],
		"resources":[{"uri":"ui://t/view.html","name":"view","mimeType":"text/html;profile=mcp-app","text":"<p>hi</p>"` + resourceExtra + `},
			{"uri":"docs://plain","name":"plain","mimeType":"text/plain","text":"x"}]}`
}

func TestMetaAccepted(t *testing.T) {
	for name, data := range map[string]string{
		"namespaced keys": appManifest(`,"_meta":{"example.com/owner":"team-a","a.b-c.d/x_y.z":{"n":1},"openai/outputTemplate":"ui://t/view.html"}`, ""),
		"a tool's interface": appManifest(`,"_meta":{"ui":{"resourceUri":"ui://t/view.html","visibility":["model","app"]}}`,
			`,"_meta":{"ui":{"prefersBorder":true,"csp":{"connectDomains":[]}}}`),
		"tool icons": appManifest(`,"icons":[{"src":"data:image/png;base64,AA==","mimeType":"image/png","sizes":["16x16"]}]`, ""),
		"prompt and template": `{"abi":1,"prompts":[{"name":"p","_meta":{"example.com/k":1}}],
			"resourceTemplates":[{"uriTemplate":"a://{id}","name":"t","_meta":{"example.com/k":[1]}}]}`,
	} {
		m, err := ParseManifest([]byte(data))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "a tool's interface" {
			var ui ToolUI
			if json.Unmarshal(m.Tools[0].Meta[UIKey], &ui) != nil || ui.ResourceURI != "ui://t/view.html" {
				t.Errorf("_meta.ui = %+v", ui)
			}
		}
	}
}

func TestMetaRefused(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"no prefix", appManifest(`,"_meta":{"owner":"x"}`, ""), "has no prefix"},
		{"MCP's prefix", appManifest(`,"_meta":{"io.modelcontextprotocol/related-task":{}}`, ""), "reserved for MCP"},
		{"MCP's prefix, any case", appManifest(`,"_meta":{"dev.MCP.tools/x":1}`, ""), "reserved for MCP"},
		{"bad label", appManifest(`,"_meta":{"-a.b/x":1}`, ""), "not a prefix"},
		{"bad name", appManifest(`,"_meta":{"a.b/x-":1}`, ""), "not a prefix"},
		{"too large", appManifest(`,"_meta":{"a.b/x":"`+strings.Repeat("x", MaxMeta)+`"}`, ""), "over the limit"},
		{"interface not a ui:// URI", appManifest(`,"_meta":{"ui":{"resourceUri":"docs://plain"}}`, ""), "must be a ui:// URI"},
		{"another module's interface", appManifest(`,"_meta":{"ui":{"resourceUri":"ui://other/view.html"}}`, ""), "not a resource this module declares"},
		{"the flat MCP Apps key", appManifest(`,"_meta":{"ui/resourceUri":"ui://t/view.html"}`, ""), `prefix "ui/"`},
		{"another module's interface by another kit's key", appManifest(`,"_meta":{"openai/outputTemplate":"ui://victim/app"}`, ""), "not a resource this module declares"},
		{"interface not HTML", strings.Replace(appManifest(`,"_meta":{"ui":{"resourceUri":"ui://t/view.html"}}`, ""), "text/html;profile=mcp-app", "text/plain", 1), "has MIME type"},
		{"unknown ui member", appManifest(`,"_meta":{"ui":{"resourceUri":"ui://t/view.html","resourceURI":"x"}}`, ""), "unknown field"},
		{"bad visibility", appManifest(`,"_meta":{"ui":{"resourceUri":"ui://t/view.html","visibility":["user"]}}`, ""), "may hold"},
		{"repeated visibility", appManifest(`,"_meta":{"ui":{"resourceUri":"ui://t/view.html","visibility":["app","app"]}}`, ""), "at most once"},
		{"ui on a plain resource", strings.Replace(appManifest("", ""), `"text":"x"`, `"text":"x","_meta":{"ui":{}}`, 1), "ui:// resources only"},
		{"ui on a prompt", `{"abi":1,"prompts":[{"name":"p","_meta":{"ui":{}}}]}`, "no meaning on a prompt"},
		{"bad tool icon", appManifest(`,"icons":[{"src":"http://x/i.png"}]`, ""), "https: or data:"},
		{"unknown icon member", appManifest(`,"icons":[{"src":"data:,x","size":"1"}]`, ""), "unknown field"},
	} {
		_, err := ParseManifest([]byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
}
