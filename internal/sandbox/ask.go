package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/wasmcp/wasmcp/abi"
)

// Asker sends what a guest asks of the client that called it (the
// functions of abi.AskFunctions) and brings back the client's answer. It
// is called on the guest's goroutine, which waits for it.
type Asker interface {
	// Ask sends the ask and returns the client's result as JSON. ctx ends
	// with the run (its time limit, or the caller's cancellation). An
	// error is an *AskError, ErrInputRequired, or any other error for a
	// client that could not be asked or did not answer.
	Ask(ctx context.Context, ask Ask) (json.RawMessage, error)
}

// Ask is one ask of the client.
type Ask struct {
	// Method is the MCP request, and Capability the client capability it
	// needs (abi.AskFunctions).
	Method, Capability string
	// ID names the ask within its call, unique in it: the guest's name
	// for it, or "ask-N" for the run's Nth ask.
	ID string
	// Params is the request's params, a JSON object.
	Params json.RawMessage
}

// askRequest is the JSON a guest passes to an ask function.
type askRequest struct {
	ID     string          `json:"id,omitempty"`
	Params json.RawMessage `json:"params"`
}

// askID is the rule for a guest's names of its asks.
var askID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ErrInputRequired, returned by an Asker, ends the run at once, before the
// guest runs another instruction: the client is to be asked once the call
// has ended (2026-07-28's InputRequiredResult), and the run's Failure is
// of Kind InputRequired.
var ErrInputRequired = errors.New("the tool needs the client's input to go on")

// AskError is an ask an Asker refused, or that the client answered with an
// error: the guest gets Code, and an answer whose "error" is Text.
type AskError struct {
	Code int32
	Text string
}

func (e *AskError) Error() string { return e.Text }

var (
	errInputRequired = errors.New("input required")
	errAskLimit      = errors.New("ask limit")
)

// askAnswer is the answer to an ask that got none from the client.
type askAnswer struct {
	Error string `json:"error"`
}

// askClient is each function of abi.AskFunctions: it reads the guest's
// request, has the run's Asker send it, and keeps the answer for
// ask_response, writing its length at lenPtr. A run that must end now
// (ErrInputRequired, or an ask past abi.MaxAsks) is stopped: st.halt is
// set, and the engine ends the guest as the function returns.
func (st *runState) askClient(ctx context.Context, name string, mem guestMemory, ptr, n, lenPtr uint32) int32 {
	ask := abi.AskFunctions[name]
	if st == nil || mem == nil {
		return abi.ErrDenied
	}
	if n > abi.MaxAskLen {
		return abi.ErrTooLong
	}
	view, ok := mem.Read(ptr, n)
	if !ok {
		return abi.ErrFault
	}
	if _, ok := mem.Read(lenPtr, 4); !ok {
		return abi.ErrFault
	}
	var req askRequest
	dec := json.NewDecoder(bytes.NewReader(view))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return st.holdAnswer(mem, lenPtr, abi.ErrInvalid, askAnswer{Error: `the request is not {"id": …, "params": {…}}, with ` + ask.Method + "'s params as MCP defines them"})
	}
	params := bytes.TrimSpace(req.Params)
	switch {
	case len(params) == 0 || params[0] != '{':
		return st.holdAnswer(mem, lenPtr, abi.ErrInvalid, askAnswer{Error: "the request's params are not a JSON object: give " + ask.Method + "'s params, as MCP defines them"})
	case req.ID != "" && !askID.MatchString(req.ID):
		return st.holdAnswer(mem, lenPtr, abi.ErrInvalid, askAnswer{Error: fmt.Sprintf("the request's id %q does not match %s", req.ID, askID)})
	}
	if st.asks >= abi.MaxAsks {
		st.stop(errAskLimit)
		return abi.ErrLimit
	}
	st.asks++
	if req.ID == "" {
		req.ID = fmt.Sprintf("ask-%d", st.asks)
	}
	if slices.Contains(st.askIDs, req.ID) {
		return st.holdAnswer(mem, lenPtr, abi.ErrInvalid, askAnswer{Error: fmt.Sprintf("the id %q names an earlier ask of this call; give each ask its own", req.ID)})
	}
	st.askIDs = append(st.askIDs, req.ID)
	if st.ask == nil {
		return st.holdAnswer(mem, lenPtr, abi.ErrDenied, askAnswer{Error: "nothing can ask a client here: the tool's start-up, and what runs outside a client's call, cannot ask"})
	}
	answer, err := st.ask.Ask(ctx, Ask{Method: ask.Method, Capability: ask.Capability, ID: req.ID, Params: bytes.Clone(params)})
	var refused *AskError
	switch {
	case errors.Is(err, ErrInputRequired):
		st.stop(errInputRequired)
		return abi.ErrLimit
	case errors.As(err, &refused):
		return st.holdAnswer(mem, lenPtr, refused.Code, askAnswer{Error: refused.Text})
	case err != nil:
		return st.holdAnswer(mem, lenPtr, abi.ErrNetwork, askAnswer{Error: "the client did not answer: " + err.Error()})
	case len(answer) > abi.MaxAnswerLen:
		return st.holdAnswer(mem, lenPtr, abi.ErrNetwork, askAnswer{Error: fmt.Sprintf("the client's answer of %s is over the %s an answer may have", bytesText(uint64(len(answer))), bytesText(abi.MaxAnswerLen))})
	}
	return st.hold(&st.asked, mem, lenPtr, abi.Ok, answer)
}

// holdAnswer keeps a an answer the host made for ask_response.
func (st *runState) holdAnswer(mem guestMemory, lenPtr uint32, code int32, a askAnswer) int32 {
	b, err := json.Marshal(a)
	if err != nil {
		return abi.ErrInvalid
	}
	return st.hold(&st.asked, mem, lenPtr, code, b)
}

// stop ends the run now, for why: the engine stops the guest as the host
// function that called stop returns.
func (st *runState) stop(why error) {
	st.halt = why
	st.cancel(why)
}

// askResponse is wasmcp.ask_response: it copies the waiting answer of the
// last ask into the guest's buffer, and forgets it.
func (st *runState) askResponse(mem guestMemory, ptr, n uint32) int32 {
	if st == nil {
		return abi.ErrInvalid
	}
	return take(&st.asked, mem, ptr, n)
}
