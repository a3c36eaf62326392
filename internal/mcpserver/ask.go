package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// A tool that asks the client (docs/abi.md, "Asking the client") declares
// the client capabilities it needs in its manifest. A call from a client
// that did not declare one of them is refused before the tool runs; each
// ask is checked again against what both declared, so that the host never
// sends a request the client did not say it takes. On 2025-11-25 the ask
// is sent on the session while the guest waits (sessionAsker); on
// 2026-07-28 the call ends with an InputRequiredResult, and the retried
// call answers the asks of a fresh run from what requestState recorded
// (replayAsker, state.go).

// missingCapabilities are the capabilities of need that caps lacks.
func missingCapabilities(need []string, caps *mcp.ClientCapabilities) []string {
	var missing []string
	for _, c := range need {
		if !declares(caps, c) {
			missing = append(missing, c)
		}
	}
	return missing
}

// declares says whether caps has the client capability named c, as
// abi's Client constants name them.
func declares(caps *mcp.ClientCapabilities, c string) bool {
	if caps == nil {
		return false
	}
	switch c {
	case abi.ClientElicitation:
		return caps.Elicitation != nil
	case abi.ClientSampling:
		return caps.Sampling != nil
	case abi.ClientRoots:
		return caps.RootsV2 != nil
	}
	return false
}

// missingError is the answer to a call whose tool needs capabilities the
// client did not declare: on 2026-07-28, the MissingRequiredClientCapability
// error (-32021, which the SDK sends with HTTP 400), whose data names them;
// on 2025-11-25, which has no such error, a tool error the model can read.
func missingError(tool string, missing []string, modern bool) (*mcp.CallToolResult, error) {
	text := fmt.Sprintf("tool %s needs the client capabilities %s, which the client did not declare; call it from a client that supports them and declares them", tool, strings.Join(missing, ", "))
	if !modern {
		text = fmt.Sprintf("tool %s needs the client capabilities %s, which the client did not declare when it initialized the session; call it from a client that supports them and declares them", tool, strings.Join(missing, ", "))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}, nil
	}
	required := map[string]map[string]any{}
	for _, c := range missing {
		required[c] = map[string]any{}
	}
	data, err := json.Marshal(map[string]any{"requiredCapabilities": required})
	if err != nil {
		return nil, err
	}
	return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: text, Data: data}
}

// askable checks one ask against what the tool declared (need) and what
// the client declared (caps), and decodes its params as the MCP request
// they are meant to be. A refusal is an *sandbox.AskError for the guest.
func askable(need []string, caps *mcp.ClientCapabilities, capability, method string, params json.RawMessage) (mcp.InputRequest, error) {
	if !slices.Contains(need, capability) {
		return nil, &sandbox.AskError{Code: abi.ErrDenied, Text: fmt.Sprintf(`the tool may not ask the client for %s: its manifest does not declare "client": [%q]`, capability, capability)}
	}
	if !declares(caps, capability) {
		return nil, &sandbox.AskError{Code: abi.ErrDenied, Text: fmt.Sprintf("the client did not declare the %s capability", capability)}
	}
	invalid := func(err error) error {
		return &sandbox.AskError{Code: abi.ErrInvalid, Text: fmt.Sprintf("the request is not %s's params: %v", method, err)}
	}
	switch method {
	case "elicitation/create":
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		if p.Mode == "" {
			p.Mode = "form"
			if p.URL != "" {
				p.Mode = "url"
			}
		}
		e := caps.Elicitation
		switch {
		case p.Mode != "form" && p.Mode != "url":
			return nil, invalid(fmt.Errorf(`mode is %q; it is "form" or "url"`, p.Mode))
		case p.Mode == "url" && (p.URL == "" || p.ElicitationID == ""):
			return nil, invalid(errors.New(`a "url" elicitation needs url and elicitationId`))
		case p.Mode == "url" && e.URL == nil:
			return nil, &sandbox.AskError{Code: abi.ErrDenied, Text: `the client did not declare "url" elicitation`}
		case p.Mode == "form" && e.Form == nil && e.URL != nil:
			return nil, &sandbox.AskError{Code: abi.ErrDenied, Text: `the client did not declare "form" elicitation`}
		}
		return &p, nil
	case "sampling/createMessage":
		var p mcp.CreateMessageWithToolsParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		if len(p.Messages) == 0 {
			return nil, invalid(errors.New("it has no messages"))
		}
		return &p, nil
	case "roots/list":
		var p mcp.ListRootsParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		return &p, nil
	}
	return nil, fmt.Errorf("no such ask: %s", method)
}

// sessionAsker sends a tool's asks on its 2025-11-25 session, while the
// guest waits.
type sessionAsker struct {
	// ctx is the call's request context, whose values route the asks on
	// the call's own stream.
	ctx     context.Context
	session *mcp.ServerSession
	caps    *mcp.ClientCapabilities
	need    []string
}

// Ask implements sandbox.Asker. The wait ends with the run (ctx): its time
// limit, or the client's cancellation. An answer that comes later is the
// SDK's to drop.
func (a *sessionAsker) Ask(ctx context.Context, capability, method string, params json.RawMessage) (json.RawMessage, error) {
	req, err := askable(a.need, a.caps, capability, method, params)
	if err != nil {
		return nil, err
	}
	send, cancel := context.WithCancelCause(a.ctx)
	defer cancel(nil)
	defer context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })()
	var res any
	switch p := req.(type) {
	case *mcp.ElicitParams:
		res, err = a.session.Elicit(send, p)
	case *mcp.CreateMessageWithToolsParams:
		res, err = a.session.CreateMessageWithTools(send, p)
	case *mcp.ListRootsParams:
		res, err = a.session.ListRoots(send, p)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, &sandbox.AskError{Code: abi.ErrNetwork, Text: "the client answered with an error: " + err.Error()}
	}
	return json.Marshal(res)
}
