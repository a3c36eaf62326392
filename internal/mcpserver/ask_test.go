package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// An ask whose params break what the revision requires of the request is
// refused to the tool, with the reason, before it reaches the client.
func TestAskParamsAreChecked(t *testing.T) {
	caps := &mcp.ClientCapabilities{
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
		Sampling:    &mcp.SamplingCapabilities{},
	}
	need := []string{abi.ClientElicitation, abi.ClientSampling}
	elicit := func(params string) sandbox.Ask {
		return sandbox.Ask{Method: "elicitation/create", Capability: abi.ClientElicitation, ID: "a", Params: json.RawMessage(params)}
	}
	sample := func(params string) sandbox.Ask {
		return sandbox.Ask{Method: "sampling/createMessage", Capability: abi.ClientSampling, ID: "a", Params: json.RawMessage(params)}
	}
	for _, c := range []struct {
		name string
		ask  sandbox.Ask
		code int32
		want string
	}{
		{"a form without its schema", elicit(`{"message":"ok?"}`), abi.ErrInvalid, "needs requestedSchema"},
		{"a url elicitation without its id", elicit(`{"mode":"url","message":"go","url":"https://example.com/a"}`), abi.ErrInvalid, "url and elicitationId"},
		{"url elicitation the client did not declare", elicit(`{"mode":"url","message":"go","url":"https://example.com/a","elicitationId":"e"}`), abi.ErrDenied, `"url" elicitation`},
		{"sampling without maxTokens", sample(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`), abi.ErrInvalid, "maxTokens"},
		{"sampling without messages", sample(`{"maxTokens":10}`), abi.ErrInvalid, "no messages"},
		{"roots, not declared by the tool", sandbox.Ask{Method: "roots/list", Capability: abi.ClientRoots, Params: json.RawMessage(`{}`)}, abi.ErrDenied, "manifest does not declare"},
	} {
		_, err := askable(need, caps, c.ask)
		var ae *sandbox.AskError
		if !errors.As(err, &ae) || ae.Code != c.code || !strings.Contains(ae.Text, c.want) {
			t.Errorf("%s: %v; want code %d saying %q", c.name, err, c.code, c.want)
		}
	}
	for _, ask := range []sandbox.Ask{
		elicit(`{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}`),
		sample(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`),
	} {
		if _, err := askable(need, caps, ask); err != nil {
			t.Errorf("%s %s: %v", ask.Method, ask.Params, err)
		}
	}
}
