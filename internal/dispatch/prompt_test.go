package dispatch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
)

func promptFixture(t *testing.T) *fixture {
	t.Helper()
	args := []abi.PromptArgument{{Name: "who", Required: true}, {Name: "mood"}}
	return newFixture(t, map[string]module{
		// trap fails if it runs: its template must not run it.
		"trap": {wat: "trap", manifest: abi.Manifest{ABI: abi.Version, Prompts: []abi.Prompt{{
			Name: "greet", Description: "Greets someone.", Arguments: args,
			Messages: []abi.PromptMessage{
				{Role: "user", Content: abi.TextContent{Type: "text", Text: "Greet {{who}}, {{mood}}."}},
				{Role: "assistant", Content: abi.TextContent{Type: "text", Text: "Hello!"}},
			},
		}}}},
		"prompt": {wat: "prompt", manifest: abi.Manifest{ABI: abi.Version, Prompts: []abi.Prompt{{Name: "live", Arguments: args}}}},
		"echo":   {wat: "echo", manifest: abi.Manifest{ABI: abi.Version, Prompts: []abi.Prompt{{Name: "echo"}}}},
		"fail":   {wat: "fail", manifest: abi.Manifest{ABI: abi.Version, Prompts: []abi.Prompt{{Name: "fail"}}}},
	}, Options{})
}

func promptErr(t *testing.T, d *Dispatcher, name string, args map[string]string) *jsonrpc.Error {
	t.Helper()
	res, err := d.GetPrompt(context.Background(), name, args, nil)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("GetPrompt(%s) = %v, %v; want a JSON-RPC error", name, res, err)
	}
	return rpc
}

func TestGetPromptExpandsATemplateWithoutRunning(t *testing.T) {
	f := promptFixture(t)
	res, err := f.d.GetPrompt(context.Background(), "greet", map[string]string{"who": "Ada"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Description != "Greets someone." || len(res.Messages) != 2 || res.Messages[1].Role != "assistant" {
		t.Fatalf("result = %+v", res)
	}
	if got := res.Messages[0].Content.(*mcp.TextContent).Text; got != "Greet Ada, ." {
		t.Errorf("text = %q", got)
	}
	if n := f.log.count("call"); n != 0 {
		t.Errorf("%d runs for a template; want none", n)
	}
}

func TestGetPromptArgumentsAreChecked(t *testing.T) {
	f := promptFixture(t)
	for _, name := range []string{"greet", "live"} {
		if e := promptErr(t, f.d, name, map[string]string{"mood": "warmly"}); e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, `needs the argument(s) who`) {
			t.Errorf("%s without who: %v", name, e)
		}
		if e := promptErr(t, f.d, name, map[string]string{"who": "Ada", "age": "36"}); e.Code != jsonrpc.CodeInvalidParams || !strings.Contains(e.Message, `has no argument "age"; its arguments are who, mood`) {
			t.Errorf("%s with age: %v", name, e)
		}
	}
	if e := promptErr(t, f.d, "nope", nil); e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown prompt: %v", e)
	}
}

func TestGetPromptRunsTheModule(t *testing.T) {
	f := promptFixture(t)
	res, err := f.d.GetPrompt(context.Background(), "live", map[string]string{"who": "Ada"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, ok := res.Messages[0].Content.(*mcp.TextContent)
	if res.Description != "from the module" || len(res.Messages) != 1 || !ok || text.Text != "got by the module" {
		t.Fatalf("result = %+v", res)
	}
	if text.Meta != nil {
		t.Errorf("the module set _meta %v, which is not its to set", text.Meta)
	}
	if got := f.log.last("call")["tool"]; got != "prompt prompts/get" {
		t.Errorf("the run is logged as %q", got)
	}
}

func TestGetPromptFailures(t *testing.T) {
	f := promptFixture(t)
	if e := promptErr(t, f.d, "fail", nil); e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, `getting prompt "fail" failed: module fail`) || !strings.Contains(e.Message, "the widget is broken") {
		t.Errorf("a failing module: %v", e)
	}
	// echo writes back its stdin, {"arguments":{},"name":"echo"}.
	if e := promptErr(t, f.d, "echo", nil); e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, `what prompts/get wrote is not a prompt`) || !strings.Contains(e.Message, `unknown field "arguments"`) {
		t.Errorf("a module that writes no prompt: %v", e)
	}
}

func TestPromptResultIsChecked(t *testing.T) {
	msg := func(role string, content any) map[string]any { return map[string]any{"role": role, "content": content} }
	text := map[string]any{"type": "text", "text": "t"}
	tests := []struct {
		name string
		out  any
		want string
	}{
		{"no messages", map[string]any{}, `"messages" is empty or missing`},
		{"bad role", map[string]any{"messages": []any{msg("system", text)}}, `"role" must be "user" or "assistant", not "system"`},
		{"no content", map[string]any{"messages": []any{map[string]any{"role": "user"}}}, `message 0 has no "content"`},
		{"bad content", map[string]any{"messages": []any{msg("user", map[string]any{"type": "video"})}}, "message 0:"},
		{"unknown member", map[string]any{"messages": []any{msg("user", text)}, "resultType": "input_required"}, `unknown field "resultType"`},
		{"too many", map[string]any{"messages": make([]any, abi.MaxMessages+1)}, "over the limit of 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := promptResult(tt.out, nil, "x")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
	got, err := promptResult(map[string]any{"messages": []any{
		msg("user", map[string]any{"type": "image", "data": "AAEC", "mimeType": "image/png"}),
		msg("assistant", map[string]any{"type": "resource", "resource": map[string]any{"uri": "a://b", "text": "t"}}),
	}}, nil, "x")
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("promptResult = %+v, %v", got, err)
	}
	if img, ok := got.Messages[0].Content.(*mcp.ImageContent); !ok || string(img.Data) != "\x00\x01\x02" {
		t.Errorf("image = %+v", got.Messages[0].Content)
	}
	if r, ok := got.Messages[1].Content.(*mcp.EmbeddedResource); !ok || r.Resource.URI != "a://b" {
		t.Errorf("resource = %+v", got.Messages[1].Content)
	}
}
