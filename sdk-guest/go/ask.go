package guest

import (
	"encoding/json"
	"fmt"
)

// A tool may ask the client that called it for something while it runs:
// the user's input (Elicit, ElicitURL), a model's completion
// (CreateMessage), or the client's roots (ListRoots). Each needs the tool
// to declare the client capability in its manifest ("client":
// ["elicitation"], "sampling", "roots"), and the call fails before the
// tool runs when the client lacks it. A call may ask at most 16 times.
//
// On MCP 2026-07-28 the host ends the run at an ask it has no answer for
// yet, asks the client, and runs the tool again from the start with the
// answers so far: so a tool must ask the same things in the same order
// each time, and do nothing it cannot do twice before its last ask.

// Elicitation answers: what the user did with an elicitation.
const (
	Accept  = "accept"
	Decline = "decline"
	Cancel  = "cancel"
)

// ElicitResult is the user's answer to an elicitation (MCP's ElicitResult).
type ElicitResult struct {
	// Action is Accept, Decline or Cancel.
	Action string `json:"action"`
	// Content is what the user entered, for an accepted form, by the
	// schema's property names.
	Content map[string]any `json:"content,omitempty"`
}

// AskError is an ask the host did not send, or the client did not answer:
// Code is one of the result codes (ErrDenied: the tool or the client did
// not declare the capability), Message says why.
type AskError struct {
	Code    int32
	Message string
}

func (e *AskError) Error() string { return e.Message }

// Elicitation asks the user something through the client: to fill in a
// form (Schema), or to visit a URL (URL and ElicitationID).
type Elicitation struct {
	// ID names the ask within its call: on 2026-07-28, the key of its
	// input request. Empty: "ask-N" for the call's Nth ask.
	ID string `json:"-"`
	// Message says what for.
	Message string `json:"message"`
	// Schema is what to enter: a flat JSON Schema object of primitive
	// properties, as MCP's requestedSchema.
	Schema any `json:"requestedSchema,omitempty"`
	// URL is where to go instead, for what must not pass through the
	// client (a sign-in, a payment), and ElicitationID names it.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitationId,omitempty"`
}

// Elicit asks the user, through the client, what e says, and returns
// what they did.
func Elicit(e Elicitation) (*ElicitResult, error) {
	params := struct {
		Mode string `json:"mode"`
		Elicitation
	}{"form", e}
	if e.URL != "" {
		params.Mode = "url"
	}
	var r ElicitResult
	if err := askHost(hostElicit, e.ID, params, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// SamplingMessage is one message of a sampling request or its answer.
type SamplingMessage struct {
	Role    string         `json:"role"` // "user" or "assistant"
	Content map[string]any `json:"content"`
}

// TextMessage is a SamplingMessage of text.
func TextMessage(role, text string) SamplingMessage {
	return SamplingMessage{Role: role, Content: map[string]any{"type": "text", "text": text}}
}

// SamplingRequest asks the client's model for a completion (MCP's
// CreateMessageRequest params).
type SamplingRequest struct {
	// ID names the ask, as Elicitation.ID does.
	ID           string            `json:"-"`
	Messages     []SamplingMessage `json:"messages"`
	MaxTokens    int               `json:"maxTokens"`
	SystemPrompt string            `json:"systemPrompt,omitempty"`
}

// SamplingResult is the model's answer.
type SamplingResult struct {
	Role       string         `json:"role"`
	Content    map[string]any `json:"content"`
	Model      string         `json:"model"`
	StopReason string         `json:"stopReason,omitempty"`
}

// Text is the answer's text, if it is text.
func (r *SamplingResult) Text() string {
	s, _ := r.Content["text"].(string)
	return s
}

// CreateMessage asks the client to sample its model. MCP 2026-07-28
// deprecates sampling (SEP-2577); it still works where clients offer it.
func CreateMessage(req SamplingRequest) (*SamplingResult, error) {
	var r SamplingResult
	if err := askHost(hostCreateMessage, req.ID, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Root is one of the client's roots: a directory or file it works in.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ListRoots asks the client for its roots; id names the ask, as
// Elicitation.ID does. MCP 2026-07-28 deprecates roots (SEP-2577); it
// still works where clients offer them.
func ListRoots(id string) ([]Root, error) {
	var r struct {
		Roots []Root `json:"roots"`
	}
	if err := askHost(hostListRoots, id, struct{}{}, &r); err != nil {
		return nil, err
	}
	return r.Roots, nil
}

// askHost sends params through f, as the ask id, and decodes the
// client's answer into out.
func askHost(f func([]byte) (int32, []byte), id string, params, out any) error {
	data, err := json.Marshal(struct {
		ID     string `json:"id,omitempty"`
		Params any    `json:"params"`
	}{id, params})
	if err != nil {
		return err
	}
	code, answer := f(data)
	if code != Ok {
		var a struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(answer, &a) != nil || a.Error == "" {
			a.Error = (&HostError{Code: code}).Error()
		}
		return &AskError{Code: code, Message: a.Error}
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("wasmcp host: unreadable answer from the client: %v", err)
	}
	return nil
}

// Asking is one ask of AskAll: an Elicitation, a SamplingRequest or a
// RootsRequest.
type Asking interface {
	asking() askWire
}

// RootsRequest asks for the client's roots in AskAll; ID names the ask.
type RootsRequest struct {
	ID string
}

// askWire is one ask of ask_all's request.
type askWire struct {
	Method string `json:"method"`
	ID     string `json:"id,omitempty"`
	Params any    `json:"params"`
}

func (e Elicitation) asking() askWire {
	mode := "form"
	if e.URL != "" {
		mode = "url"
	}
	return askWire{"elicitation/create", e.ID, struct {
		Mode string `json:"mode"`
		Elicitation
	}{mode, e}}
}

func (r SamplingRequest) asking() askWire { return askWire{"sampling/createMessage", r.ID, r} }

func (r RootsRequest) asking() askWire { return askWire{"roots/list", r.ID, struct{}{}} }

// Answer is the client's answer to one ask of AskAll, or why there is
// none.
type Answer struct {
	raw json.RawMessage
	// Err is set for an ask that brought no answer.
	Err *AskError
}

// Decode reads the answer into v: an *ElicitResult, a *SamplingResult,
// or a struct with the roots' "roots". An ask without one returns its Err.
func (a Answer) Decode(v any) error {
	if a.Err != nil {
		return a.Err
	}
	if err := json.Unmarshal(a.raw, v); err != nil {
		return fmt.Errorf("wasmcp host: unreadable answer from the client: %v", err)
	}
	return nil
}

// AskAll asks the client several things at once and returns each answer
// by its ask's id (each needs one: "ask-N" for an ask without). On MCP
// 2026-07-28 the asks still without an answer go to the client together,
// in one InputRequiredResult. The error is for a request the host refused
// whole; an ask that alone brought no answer has its Answer.Err.
func AskAll(asks ...Asking) (map[string]Answer, error) {
	wire := make([]askWire, len(asks))
	for i, a := range asks {
		wire[i] = a.asking()
	}
	data, err := json.Marshal(wire)
	if err != nil {
		return nil, err
	}
	code, answer := hostAskAll(data)
	var got map[string]json.RawMessage
	if err := json.Unmarshal(answer, &got); err != nil || got == nil {
		return nil, &AskError{Code: code, Message: (&HostError{Code: code}).Error()}
	}
	// A refusal of the whole request is {"error": "…"}; an ask's answer
	// is an object, even under the id "error".
	var whole string
	if json.Unmarshal(got["error"], &whole) == nil && whole != "" {
		return nil, &AskError{Code: code, Message: whole}
	}
	out := make(map[string]Answer, len(got))
	for id, raw := range got {
		var failed struct {
			Error string `json:"error"`
			Code  int32  `json:"code"`
		}
		if json.Unmarshal(raw, &failed) == nil && failed.Code != Ok && failed.Error != "" {
			out[id] = Answer{Err: &AskError{Code: failed.Code, Message: failed.Error}}
			continue
		}
		out[id] = Answer{raw: raw}
	}
	return out, nil
}
