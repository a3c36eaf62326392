package guest

import (
	"errors"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

func TestEntryNamesAreTheABIs(t *testing.T) {
	if EntryReadResource != abi.EntryReadResource || EntryGetPrompt != abi.EntryGetPrompt || EntryComplete != abi.EntryComplete {
		t.Errorf("entry points %q, %q, %q; abi has %q, %q, %q", EntryReadResource, EntryGetPrompt, EntryComplete, abi.EntryReadResource, abi.EntryGetPrompt, abi.EntryComplete)
	}
}

var entryTools = []Tool{
	Resources(func(req ReadRequest) (*ReadResult, error) {
		switch req.URI {
		case "a://empty":
			return &ReadResult{Contents: []Contents{{}}}, nil
		case "a://none":
			return &ReadResult{}, nil
		case "a://bytes":
			return &ReadResult{Contents: []Contents{{MIMEType: "image/png", Blob: []byte{0, 1, 2}}}}, nil
		}
		return &ReadResult{Contents: []Contents{{URI: req.URI, Text: "item " + req.Arguments["id"]}}}, nil
	}),
	Prompts(func(req PromptRequest) (*PromptResult, error) {
		if req.Name != "greet" {
			return nil, errors.New("no such prompt")
		}
		return &PromptResult{Description: "d", Messages: []PromptMessage{{Role: "user", Content: TextContent("hello " + req.Arguments["who"])}}}, nil
	}),
	Completions(func(req CompleteRequest) (*CompleteResult, error) {
		if req.Ref.Name == "none" {
			return &CompleteResult{}, nil
		}
		return &CompleteResult{Values: []string{req.Ref.Type + " " + req.Argument.Name + " " + req.Argument.Value + " " + req.Context.Arguments["other"]}, Total: 5, HasMore: true}, nil
	}),
}

func TestCompletions(t *testing.T) {
	for stdin, want := range map[string]string{
		`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"city","value":"pa"},"context":{"arguments":{"other":"x"}}}`: `{"values":["ref/prompt city pa x"],"total":5,"hasMore":true}`,
		`{"ref":{"type":"ref/prompt","name":"none"},"argument":{"name":"city","value":""}}`:                                      `{"values":[]}`,
	} {
		code, out, errOut := invoke(t, entryTools, stdin, EntryComplete)
		if code != ExitOK || strings.TrimSpace(out) != want {
			t.Errorf("%s: got %d %s %q; want %s", stdin, code, out, errOut, want)
		}
	}
}

func TestResources(t *testing.T) {
	for stdin, want := range map[string]string{
		`{"uri":"a://items/7","arguments":{"id":"7"}}`: `{"contents":[{"uri":"a://items/7","text":"item 7"}]}`,
		`{"uri":"a://empty","arguments":{}}`:           `{"contents":[{"text":""}]}`,
		`{"uri":"a://bytes","arguments":{}}`:           `{"contents":[{"mimeType":"image/png","blob":"AAEC"}]}`,
	} {
		code, out, errOut := invoke(t, entryTools, stdin, EntryReadResource)
		if code != ExitOK || strings.TrimSpace(out) != want {
			t.Errorf("%s: got %d %s %q; want %s", stdin, code, out, errOut, want)
		}
	}
	if code, _, errOut := invoke(t, entryTools, `{"uri":"a://none"}`, EntryReadResource); code != ExitError || !strings.Contains(errOut, "no contents") {
		t.Errorf("a read without contents: %d %q", code, errOut)
	}
}

func TestPrompts(t *testing.T) {
	code, out, errOut := invoke(t, entryTools, `{"name":"greet","arguments":{"who":"Ada"}}`, EntryGetPrompt)
	if want := `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hello Ada"}}]}`; code != ExitOK || strings.TrimSpace(out) != want {
		t.Errorf("got %d %s %q; want %s", code, out, errOut, want)
	}
	if code, _, errOut := invoke(t, entryTools, `{"name":"other"}`, EntryGetPrompt); code != ExitError || !strings.Contains(errOut, "no such prompt") {
		t.Errorf("an unknown prompt: %d %q", code, errOut)
	}
}
