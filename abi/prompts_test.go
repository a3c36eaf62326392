package abi

import (
	"fmt"
	"strings"
	"testing"
)

func withPrompts(prompts ...string) string {
	return `{"abi":1,"prompts":[` + strings.Join(prompts, ",") + `]}`
}

func TestParseManifestPrompts(t *testing.T) {
	m, err := ParseManifest([]byte(withPrompts(
		`{"name":"summarise","title":"Summarise","description":"Summarises a text.","arguments":[{"name":"text","description":"the text","required":true},{"name":"style"}],
		  "messages":[{"role":"user","content":{"type":"text","text":"Summarise {{text}} in {{style}} style; {{ text }} stays."}},{"role":"assistant","content":{"type":"text","text":"Sure."}}]}`,
		`{"name":"live","arguments":[{"name":"id","required":true}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Prompts) != 2 || len(m.Prompts[0].Messages) != 2 || m.Prompts[1].Messages != nil || !m.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts = %+v", m.Prompts)
	}
	got := m.Prompts[0].Messages[0].Content.Expand(map[string]string{"text": "{{style}}"})
	if want := "Summarise {{style}} in  style; {{ text }} stays."; got != want {
		t.Errorf("Expand = %q; want %q (one pass, absent optional arguments empty)", got, want)
	}
}

func TestParseManifestRefusesPrompts(t *testing.T) {
	many := func(n int, f func(i int) string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = f(i)
		}
		return strings.Join(items, ",")
	}
	msg := func(role, typ, text string) string {
		return fmt.Sprintf(`{"role":%q,"content":{"type":%q,"text":%q}}`, role, typ, text)
	}
	tests := []struct {
		name, input, want string
	}{
		{"bad name", withPrompts(`{"name":"a b"}`), "name must match"},
		{"duplicate", withPrompts(`{"name":"p"}`, `{"name":"p"}`), `prompt "p" is declared twice`},
		{"too many", withPrompts(many(MaxPrompts+1, func(i int) string { return fmt.Sprintf(`{"name":"p%d"}`, i) })), "257 prompts"},
		{"bad argument name", withPrompts(`{"name":"p","arguments":[{"name":"{x}"}]}`), "argument 0: name must match"},
		{"duplicate argument", withPrompts(`{"name":"p","arguments":[{"name":"x"},{"name":"x"}]}`), `argument "x" is declared twice`},
		{"too many arguments", withPrompts(`{"name":"p","arguments":[` + many(MaxPromptArguments+1, func(i int) string { return fmt.Sprintf(`{"name":"a%d"}`, i) }) + `]}`), "65 arguments"},
		{"bad role", withPrompts(`{"name":"p","messages":[` + msg("system", "text", "hi") + `]}`), `"role" must be "user" or "assistant", not "system"`},
		{"not text", withPrompts(`{"name":"p","messages":[` + msg("user", "image", "") + `]}`), "not type \"image\""},
		{"undeclared placeholder", withPrompts(`{"name":"p","messages":[` + msg("user", "text", "{{who}}") + `]}`), "{{who}} names no argument"},
		{"too many messages", withPrompts(`{"name":"p","messages":[` + many(MaxMessages+1, func(int) string { return msg("user", "text", "x") }) + `]}`), "101 messages"},
		{"too long", withPrompts(`{"name":"p","messages":[` + msg("user", "text", strings.Repeat("x", MaxStatic)) + "," + msg("user", "text", "x") + `]}`), "over the 262144-byte limit"},
		{"unknown field", withPrompts(`{"name":"p","template":"x"}`), `unknown field "template" in the prompt`},
		{"unknown argument field", withPrompts(`{"name":"p","arguments":[{"name":"x","type":"string"}]}`), `unknown field "type" in the prompt argument`},
		{"unknown content field", withPrompts(`{"name":"p","messages":[{"role":"user","content":{"type":"text","text":"x","data":"y"}}]}`), `unknown field "data" in the prompt content`},
		{"reserved tool name", withTools(toolJSON(EntryGetPrompt, "")), "is reserved"},
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

func TestParseManifestCompletions(t *testing.T) {
	m, err := ParseManifest([]byte(`{"abi":1,"prompts":[{"name":"p","arguments":[{"name":"city","completions":["paris","park"]}]}],
		"resourceTemplates":[{"uriTemplate":"a://{id}/{part}","name":"t","completions":{"id":["1","2"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !m.DeclaresCompletions() || len(m.Prompts[0].Arguments[0].Completions) != 2 || len(m.ResourceTemplates[0].Completions["id"]) != 2 {
		t.Errorf("manifest = %+v", m)
	}
	if m, err := ParseManifest([]byte(withPrompts(`{"name":"p","arguments":[{"name":"x"}]}`))); err != nil || m.DeclaresCompletions() {
		t.Errorf("a manifest without completions: %v, declares them: %v", err, err == nil && m.DeclaresCompletions())
	}
	values := func(n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("%q", fmt.Sprint(i))
		}
		return strings.Join(vs, ",")
	}
	for input, want := range map[string]string{
		withPrompts(`{"name":"p","arguments":[{"name":"x","completions":[` + values(MaxCompletions+1) + `]}]}`):                         "1001 values, over the limit of 1000",
		withPrompts(`{"name":"p","arguments":[{"name":"x","completions":["` + strings.Repeat("v", MaxText+1) + `"]}]}`):                 `"completions" is 257 bytes`,
		withPrompts(`{"name":"p","arguments":[{"name":"x","completions":["a\nb"]}]}`):                                                   "without control characters",
		`{"abi":1,"resourceTemplates":[{"uriTemplate":"a://{id}","name":"t","completions":{"other":["1"]}}]}`:                           `names "other", which is not a variable`,
		`{"abi":1,"resourceTemplates":[{"uriTemplate":"a://{id}","name":"t","completions":{"id":[` + values(MaxCompletions+1) + `]}}]}`: `variable "id": "completions" lists 1001 values`,
	} {
		if _, err := ParseManifest([]byte(input)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v; want an error containing %q", err, want)
		}
	}
}
