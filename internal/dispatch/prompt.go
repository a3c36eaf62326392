package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// GetPrompt gets the named prompt with its arguments (mcpserver.Caller).
// A prompt declared with messages is served from them; any other is got
// by running its module's prompts/get entry point exactly as a tool call
// runs. Arguments the prompt does not declare, and required ones left
// out, are JSON-RPC -32602; every other failure is -32603 with a message
// that says what went wrong. ask, if not nil, sends the module's asks of
// the client, and ErrInputRequired says that it ended the run.
func (d *Dispatcher) GetPrompt(ctx context.Context, name string, args map[string]string, ask sandbox.Asker) (*mcp.GetPromptResult, error) {
	cat, p, ok := d.reg.AcquirePrompt(name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
	}
	if p.Entry != nil {
		defer p.Entry.Module.Release()
	}
	if err := checkPromptArguments(p.Spec, args); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if args == nil {
		args = map[string]string{}
	}
	if p.Entry == nil {
		return expand(p.Spec, args), nil
	}
	stdin, err := json.Marshal(map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, fmt.Errorf("encoding the prompt request: %w", err)
	}
	entry := p.Entry.Module.Stem + " " + abi.EntryGetPrompt
	start := time.Now()
	res, outcome := d.call(ctx, cat, p.Entry, stdin, &serverLog{log: d.log, tool: entry}, ask)
	d.logCall(entry, outcome, time.Since(start), stdin)
	if outcome.kind == string(sandbox.InputRequired) {
		return nil, ErrInputRequired
	}
	if res.IsError {
		return nil, promptError(name, p.Entry.Module, resultText(res))
	}
	got, err := promptResult(res.StructuredContent, d.log, entry)
	if err != nil {
		return nil, promptError(name, p.Entry.Module, fmt.Sprintf("what %s wrote is not a prompt: %v", abi.EntryGetPrompt, err))
	}
	return got, nil
}

// checkPromptArguments requires the arguments a prompt declares required,
// and refuses those it does not declare, naming what it takes.
func checkPromptArguments(p abi.Prompt, args map[string]string) error {
	var declared, missing []string
	for _, a := range p.Arguments {
		declared = append(declared, a.Name)
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	takes := "it takes no arguments"
	if len(declared) > 0 {
		takes = "its arguments are " + strings.Join(declared, ", ")
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !slices.Contains(declared, name) {
			return fmt.Errorf("prompt %q has no argument %q; %s", p.Name, name, takes)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("prompt %q needs the argument(s) %s, which the request lacks", p.Name, strings.Join(missing, ", "))
	}
	return nil
}

// expand serves a prompt declared with messages.
func expand(p abi.Prompt, args map[string]string) *mcp.GetPromptResult {
	res := &mcp.GetPromptResult{Description: p.Description}
	for _, m := range p.Messages {
		res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: m.Content.Expand(args)}})
	}
	return res
}

func promptError(name string, m *registry.Module, why string) error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("getting prompt %q failed: module %s: %s", name, m.Stem, why),
	}
}

// promptResult checks what a module's prompts/get wrote:
// {"description"?, "messages": [{"role", "content"}]}, each role user or
// assistant and each content a block a tool result may carry, rebuilt as a
// tool result's are (decodeContent), so that the module sets nothing that
// is the server's to say.
func promptResult(out any, log *slog.Logger, entry string) (*mcp.GetPromptResult, error) {
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var answer struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := dec.Decode(&answer); err != nil {
		return nil, fmt.Errorf(`it must be {"description", "messages": [{"role", "content"}]}: %v`, err)
	}
	switch n := len(answer.Messages); {
	case n == 0:
		return nil, fmt.Errorf(`"messages" is empty or missing: a prompt has at least one`)
	case n > abi.MaxMessages:
		return nil, fmt.Errorf(`"messages" holds %d items, over the limit of %d`, n, abi.MaxMessages)
	}
	res := &mcp.GetPromptResult{Description: answer.Description}
	var dropped []string
	for i, m := range answer.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, fmt.Errorf(`message %d: "role" must be "user" or "assistant", not %q`, i, m.Role)
		}
		if len(m.Content) == 0 {
			return nil, fmt.Errorf(`message %d has no "content"`, i)
		}
		content, err := decodeContent(json.RawMessage("["+string(m.Content)+"]"), &dropped)
		switch {
		case err != nil:
			return nil, fmt.Errorf("message %d: %v", i, err)
		case len(content) != 1:
			return nil, fmt.Errorf("message %d: its content must be one content block (text, image, audio, resource_link or resource)", i)
		}
		res.Messages = append(res.Messages, &mcp.PromptMessage{Role: mcp.Role(m.Role), Content: content[0]})
	}
	if len(dropped) > 0 {
		log.Warn("dropped what a prompt may not set", "entry", entry, "members", names(dropped), "count", len(dropped))
	}
	return res, nil
}
