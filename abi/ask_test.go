package abi

import (
	"strings"
	"testing"
)

func TestToolClientCapabilities(t *testing.T) {
	m, err := ParseManifest([]byte(withTools(toolJSON("confirm", `"client":["elicitation","sampling","roots"]`))))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Tools[0].Client, " "); got != "elicitation sampling roots" {
		t.Errorf("client = %q", got)
	}
	for _, tc := range []struct{ client, want string }{
		{`["email"]`, `"client" names "email"`},
		{`["roots","roots"]`, `names "roots" twice`},
		{`"elicitation"`, "not valid JSON"},
	} {
		_, err := ParseManifest([]byte(withTools(toolJSON("confirm", `"client":`+tc.client))))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("client %s: error %v; want one with %q", tc.client, err, tc.want)
		}
	}
}

func TestCheckAsksNeedsADeclaredCapability(t *testing.T) {
	m, err := ParseManifest([]byte(withTools(okTool, toolJSON("confirm", `"client":["elicitation"]`))))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckAsks([]string{"log", "http_request", "elicit", "ask_response"}, false); err != nil {
		t.Errorf("elicit with elicitation declared: %v", err)
	}
	err = m.CheckAsks([]string{"elicit", "create_message"}, false)
	if err == nil || !strings.Contains(err.Error(), `imports wasmcp.create_message, which asks the client for sampling, but no tool or prompt of its manifest declares "client": ["sampling"]`) {
		t.Errorf("create_message without sampling: %v", err)
	}
}

func TestPromptClientCapabilities(t *testing.T) {
	m, err := ParseManifest([]byte(`{"abi":1,"prompts":[{"name":"ask","client":["roots"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckAsks([]string{"list_roots"}, false); err != nil {
		t.Errorf("list_roots with a prompt declaring roots: %v", err)
	}
	_, err = ParseManifest([]byte(`{"abi":1,"prompts":[{"name":"fixed","client":["roots"],"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}]}`))
	if err == nil || !strings.Contains(err.Error(), `"client" is for a prompt its module gets`) {
		t.Errorf("a template prompt with client: %v", err)
	}
}

func TestCheckAsksAllNeedsSomeCapability(t *testing.T) {
	none, err := ParseManifest([]byte(withTools(okTool)))
	if err != nil {
		t.Fatal(err)
	}
	if err := none.CheckAsks([]string{AskAll}, false); err == nil || !strings.Contains(err.Error(), "imports wasmcp.ask_all, which asks the client, but no tool or prompt of its manifest declares what it may ask for") {
		t.Errorf("ask_all with nothing declared: %v", err)
	}
	some, err := ParseManifest([]byte(withTools(toolJSON("confirm", `"client":["roots"]`))))
	if err != nil {
		t.Fatal(err)
	}
	if err := some.CheckAsks([]string{AskAll}, false); err != nil {
		t.Errorf("ask_all with roots declared: %v", err)
	}
	// A language runtime imports ask_all for every tool it carries; only
	// the single functions, which no runtime imports, stay checked.
	if err := none.CheckAsks([]string{AskAll, "ask_response"}, true); err != nil {
		t.Errorf("a runtime's ask_all with nothing declared: %v", err)
	}
	if err := none.CheckAsks([]string{"elicit"}, true); err == nil {
		t.Error("a runtime's elicit with nothing declared was taken")
	}
}
