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
// the client capabilities it may ask for in its manifest. A call from a
// client that declared none of them is refused before the tool runs; each
// ask is checked again against what both declared, so that the host never
// sends a request the client did not say it takes. On 2025-11-25 the ask
// is sent on the session while the guest waits (sessionAsker); on
// 2026-07-28 the call ends with an InputRequiredResult, and the retried
// call answers the asks of a fresh run from what requestState recorded
// (replayAsker, state.go).

// lacks says whether a client with caps can answer none of the asks of a
// tool that needs the capabilities need, and so must be refused: a tool
// that may ask for several runs for a client with one of them, and gets
// code 7 for an ask the client cannot take.
func lacks(need []string, caps *mcp.ClientCapabilities) bool {
	return len(need) > 0 && !slices.ContainsFunc(need, func(c string) bool { return declares(caps, c) })
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

// missingText says that what needs one of the capabilities need, which
// the client did not declare.
func missingText(what string, need []string) string {
	return fmt.Sprintf("%s needs the client capability %s, which the client did not declare; call it from a client that supports it and declares it", what, strings.Join(need, " or "))
}

// missingCapability is 2026-07-28's answer to a request whose module
// needs capabilities the client did not declare: the
// MissingRequiredClientCapability error (-32021, which the SDK sends with
// HTTP 400), whose data names them. 2025-11-25 has no such error.
func missingCapability(what string, need []string) error {
	required := map[string]map[string]any{}
	for _, c := range need {
		required[c] = map[string]any{}
	}
	data, err := json.Marshal(map[string]any{"requiredCapabilities": required})
	if err != nil {
		return err
	}
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: missingText(what, need), Data: data}
}

// askable checks one ask against what the tool declared (need) and what
// the client declared (caps), and decodes its params as the MCP request
// they are meant to be. A refusal is an *sandbox.AskError for the guest.
func askable(need []string, caps *mcp.ClientCapabilities, ask sandbox.Ask) (mcp.InputRequest, error) {
	capability, method, params := ask.Capability, ask.Method, ask.Params
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
		case p.Mode == "form" && p.RequestedSchema == nil:
			// The revision requires it, and a client that checks refuses
			// the request: better the tool hears why from the server.
			return nil, invalid(errors.New(`a form elicitation needs requestedSchema, the object schema of what to ask for ({"type": "object", "properties": {...}})`))
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
		if p.MaxTokens <= 0 {
			return nil, invalid(errors.New("maxTokens, which the revision requires, is missing or not positive"))
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

// Ask implements sandbox.Asker, sending the asks in turn. The wait ends
// with the run (ctx): its time limit, or the client's cancellation. An
// answer that comes later is the SDK's to drop.
func (a *sessionAsker) Ask(ctx context.Context, asks []sandbox.Ask) ([]sandbox.Answer, error) {
	answers := make([]sandbox.Answer, len(asks))
	for i, ask := range asks {
		b, err := a.ask(ctx, ask)
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		answers[i] = sandbox.Answer{JSON: b, Err: err}
	}
	return answers, nil
}

func (a *sessionAsker) ask(ctx context.Context, ask sandbox.Ask) (json.RawMessage, error) {
	req, err := askable(a.need, a.caps, ask)
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
		return nil, &sandbox.AskError{Code: abi.ErrNetwork, Text: "the client answered with an error: " + err.Error()}
	}
	return json.Marshal(res)
}

// askCall is one request whose module may ask the client: a tools/call or
// a prompts/get.
type askCall struct {
	// ctx is the request's context; what names the request
	// ("tools/call NAME"), and need the capabilities its module declares.
	ctx  context.Context
	what string
	need []string
	// session, caps and the rest are the request's.
	session   *mcp.ServerSession
	caps      *mcp.ClientCapabilities
	args      json.RawMessage
	state     string
	responses mcp.InputResponseMap
}

// askFailure is how a request that asks failed where a tools/call answers
// with a tool error (isError) and another request with the JSON-RPC
// error code.
type askFailure struct {
	code int64
	text string
}

func (f *askFailure) Error() string { return f.text }

// asking runs the request c through do, with the Asker its revision needs.
// On 2026-07-28 a run that must ask first returns the input requests of an
// InputRequiredResult and its requestState, which records the answers so
// far. The error is a JSON-RPC error, an *askFailure, or do's.
func (s *Server) asking(c askCall, do func(sandbox.Asker) error) (mcp.InputRequestMap, string, error) {
	modern := stateless(c.session)
	if lacks(c.need, c.caps) {
		if modern {
			return nil, "", missingCapability(c.what, c.need)
		}
		return nil, "", &askFailure{code: jsonrpc.CodeInvalidParams, text: missingText(c.what, c.need) + " when it initialized the session"}
	}
	if !modern {
		return nil, "", do(&sessionAsker{ctx: c.ctx, session: c.session, caps: c.caps, need: c.need})
	}
	a, args, err := s.states.replayOf(c)
	if err != nil {
		return nil, "", err
	}
	err = do(a)
	s.states.unspent(a)
	if !errors.Is(err, sandbox.ErrInputRequired) {
		return nil, "", err
	}
	state, err := s.states.sealRun(c.what, args, a)
	if err != nil {
		return nil, "", err
	}
	return a.pending, state, nil
}

// replayOf is the replayAsker of c, a 2026-07-28 request, and the digest
// of its arguments: c's inputResponses checked, and its requestState
// opened, which spends it. Its errors are JSON-RPC errors.
func (s *stateSigner) replayOf(c askCall) (*replayAsker, string, error) {
	invalid := func(format string, args ...any) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
	}
	args, err := digest(c.args)
	if err != nil {
		return nil, "", invalid("the arguments are not JSON: %v", err)
	}
	// Before the state is opened, which spends it.
	for id, resp := range c.responses {
		if b, err := json.Marshal(resp); err != nil || len(b) > abi.MaxAnswerLen {
			return nil, "", invalid("inputResponses[%q] is %d bytes, over the %d KiB an answer may have", id, len(b), abi.MaxAnswerLen>>10)
		}
	}
	a := &replayAsker{need: c.need, caps: c.caps, recorded: map[string]answer{}, given: c.responses}
	if c.state != "" {
		st, err := s.open(c.state, c.what, args)
		if err != nil {
			return nil, "", invalid("%v", err)
		}
		for _, r := range st.Answers {
			a.recorded[r.ID] = r
		}
		a.opened = st.Nonce
	}
	return a, args, nil
}

// sealRun is the requestState of the InputRequiredResult of a, a run of
// the request what (of arguments of digest args) that its asks ended: the
// answers it took.
func (s *stateSigner) sealRun(what, args string, a *replayAsker) (string, error) {
	state, err := s.seal(&askState{For: what, Args: args, Answers: a.used})
	if err != nil {
		return "", &askFailure{code: jsonrpc.CodeInternalError, text: fmt.Sprintf("%s cannot go on: %v", what, err)}
	}
	return state, nil
}

// stateless says whether a session speaks 2026-07-28, where the server
// sends no requests of its own, as the SDK decides it.
func stateless(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p == nil || p.ProtocolVersion >= modernVersion
}
