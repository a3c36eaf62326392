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
// functions of abi.AskFunctions, and ask_all) and brings back the client's
// answers. It is called on the guest's goroutine, which waits for it.
type Asker interface {
	// Ask sends the asks, one or more, and returns an answer for each, in
	// their order. ctx ends with the run (its time limit, or the caller's
	// cancellation). An answer's Err is an *AskError, or any other error
	// for an ask the client did not answer; the error is ErrInputRequired
	// to end the run, or ctx's.
	Ask(ctx context.Context, asks []Ask) ([]Answer, error)
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

// Answer is the client's answer to one ask: its result as JSON, or why
// there is none.
type Answer struct {
	JSON json.RawMessage
	Err  error
}

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

// askRequest is the JSON a guest passes to an ask function (without a
// method) or, in a list, to ask_all (with one).
type askRequest struct {
	Method string          `json:"method,omitempty"`
	ID     string          `json:"id,omitempty"`
	Params json.RawMessage `json:"params"`
}

// askID is the rule for a guest's names of its asks.
var askID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// askAnswer is the answer to an ask that got none from the client; in
// ask_all's answer, with its code.
type askAnswer struct {
	Error string `json:"error"`
	Code  int32  `json:"code,omitempty"`
}

// askHost is the host function name, ask_all or one of abi.AskFunctions.
func (st *runState) askHost(ctx context.Context, name string, mem guestMemory, ptr, n, lenPtr uint32) int32 {
	if name == abi.AskAll {
		return st.askAll(ctx, mem, ptr, n, lenPtr)
	}
	return st.askClient(ctx, name, mem, ptr, n, lenPtr)
}

// askClient is each function of abi.AskFunctions: it reads the guest's
// request, has the run's Asker send it, and keeps the answer for
// ask_response, writing its length at lenPtr.
func (st *runState) askClient(ctx context.Context, name string, mem guestMemory, ptr, n, lenPtr uint32) int32 {
	method := abi.AskFunctions[name].Method
	view, code := st.askView(mem, ptr, n, lenPtr)
	if code != abi.Ok {
		return code
	}
	var req askRequest
	if err := strictJSON(view, &req); err != nil || req.Method != "" {
		return st.holdAnswer(mem, lenPtr, abi.ErrInvalid, askAnswer{Error: `the request is not {"id": …, "params": {…}}, with ` + method + "'s params as MCP defines them"})
	}
	req.Method = method
	answers, refused := st.send(ctx, []askRequest{req})
	if refused != nil {
		return st.holdAnswer(mem, lenPtr, refused.Code, askAnswer{Error: refused.Text})
	}
	if answers == nil {
		return abi.ErrLimit // stopped
	}
	a := answers[0]
	if a.code != abi.Ok {
		return st.holdAnswer(mem, lenPtr, a.code, askAnswer{Error: a.text})
	}
	return st.hold(&st.asked, mem, lenPtr, abi.Ok, a.json)
}

// askAll is wasmcp.ask_all: several asks at once, a JSON list of
// {"method", "id", "params"}, whose answer is an object of each ask's
// answer by its id (one that got none: {"error", "code"}). It returns Ok
// when every ask has an answer, and otherwise the first one's code.
func (st *runState) askAll(ctx context.Context, mem guestMemory, ptr, n, lenPtr uint32) int32 {
	view, code := st.askView(mem, ptr, n, lenPtr)
	if code != abi.Ok {
		return code
	}
	var reqs []askRequest
	if err := strictJSON(view, &reqs); err != nil || len(reqs) == 0 {
		return st.holdAnswer(mem, lenPtr, abi.ErrInvalid, askAnswer{Error: `the request is not a list of {"method": …, "id": …, "params": {…}}`})
	}
	answers, refused := st.send(ctx, reqs)
	if refused != nil {
		return st.holdAnswer(mem, lenPtr, refused.Code, askAnswer{Error: refused.Text})
	}
	if answers == nil {
		return abi.ErrLimit // stopped
	}
	out := make(map[string]json.RawMessage, len(answers))
	code = abi.Ok
	for _, a := range answers {
		if a.code == abi.Ok {
			out[a.id] = a.json
			continue
		}
		if code == abi.Ok {
			code = a.code
		}
		b, err := json.Marshal(askAnswer{Error: a.text, Code: a.code})
		if err != nil {
			return abi.ErrInvalid
		}
		out[a.id] = b
	}
	b, err := json.Marshal(out)
	switch {
	case err != nil:
		return abi.ErrInvalid
	case len(b) > abi.MaxAnswerLen:
		return st.holdAnswer(mem, lenPtr, abi.ErrNetwork, askAnswer{Error: fmt.Sprintf("the client's answers come to %s, over the %s they may have together", bytesText(uint64(len(b))), bytesText(abi.MaxAnswerLen))})
	}
	return st.hold(&st.asked, mem, lenPtr, code, b)
}

// askView reads an ask's request out of guest memory, and checks where its
// answer's length goes.
func (st *runState) askView(mem guestMemory, ptr, n, lenPtr uint32) ([]byte, int32) {
	switch {
	case st == nil || mem == nil:
		return nil, abi.ErrDenied
	case n > abi.MaxAskLen:
		return nil, abi.ErrTooLong
	}
	view, ok := mem.Read(ptr, n)
	if !ok {
		return nil, abi.ErrFault
	}
	if _, ok := mem.Read(lenPtr, 4); !ok {
		return nil, abi.ErrFault
	}
	return view, abi.Ok
}

// strictJSON decodes one JSON value into v, refusing unknown members and
// anything after it.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the request")
	}
	return nil
}

// sent is what became of one ask.
type sent struct {
	id   string
	code int32
	json []byte // the answer, for code Ok
	text string // why there is none, otherwise
}

// send checks the asks and has the run's Asker send them. A request the
// guest got wrong is refused whole (refused); a run that must end now
// (ErrInputRequired, or asks past abi.MaxAsks) is stopped, and send
// returns neither answers nor a refusal: st.halt is set, and the engine
// ends the guest as the host function returns.
func (st *runState) send(ctx context.Context, reqs []askRequest) (answers []sent, refused *AskError) {
	asks := make([]Ask, len(reqs))
	ids := slices.Clone(st.askIDs)
	for i, req := range reqs {
		capability, ok := abi.AskMethods[req.Method]
		params := bytes.TrimSpace(req.Params)
		switch {
		case !ok:
			return nil, &AskError{Code: abi.ErrInvalid, Text: fmt.Sprintf("%q is not a method the host asks a client: ask for elicitation/create, sampling/createMessage or roots/list", req.Method)}
		case len(params) == 0 || params[0] != '{':
			return nil, &AskError{Code: abi.ErrInvalid, Text: "the request's params are not a JSON object: give " + req.Method + "'s params, as MCP defines them"}
		case req.ID != "" && !askID.MatchString(req.ID):
			return nil, &AskError{Code: abi.ErrInvalid, Text: fmt.Sprintf("the request's id %q does not match %s", req.ID, askID)}
		}
		if req.ID == "" {
			req.ID = fmt.Sprintf("ask-%d", st.asks+i+1)
		}
		if slices.Contains(ids, req.ID) {
			return nil, &AskError{Code: abi.ErrInvalid, Text: fmt.Sprintf("the id %q names another ask of this call; give each ask its own", req.ID)}
		}
		ids = append(ids, req.ID)
		asks[i] = Ask{Method: req.Method, Capability: capability, ID: req.ID, Params: bytes.Clone(params)}
	}
	if st.asks+len(asks) > abi.MaxAsks {
		st.stop(errAskLimit)
		return nil, nil
	}
	st.asks += len(asks)
	st.askIDs = ids
	if st.ask == nil {
		return nil, &AskError{Code: abi.ErrDenied, Text: "nothing can ask a client here: the tool's start-up, and what runs outside a client's call, cannot ask"}
	}
	got, err := st.ask.Ask(ctx, asks)
	switch {
	case errors.Is(err, ErrInputRequired):
		st.stop(errInputRequired)
		return nil, nil
	case err != nil:
		return nil, &AskError{Code: abi.ErrNetwork, Text: "the client did not answer: " + err.Error()}
	case len(got) != len(asks):
		return nil, &AskError{Code: abi.ErrNetwork, Text: "the client did not answer every ask"}
	}
	answers = make([]sent, len(asks))
	for i, a := range got {
		var refusal *AskError
		answers[i] = sent{id: asks[i].ID, code: abi.Ok, json: a.JSON}
		switch {
		case errors.As(a.Err, &refusal):
			answers[i] = sent{id: asks[i].ID, code: refusal.Code, text: refusal.Text}
		case a.Err != nil:
			answers[i] = sent{id: asks[i].ID, code: abi.ErrNetwork, text: "the client did not answer: " + a.Err.Error()}
		case len(a.JSON) > abi.MaxAnswerLen:
			answers[i] = sent{id: asks[i].ID, code: abi.ErrNetwork, text: fmt.Sprintf("the client's answer of %s is over the %s an answer may have", bytesText(uint64(len(a.JSON))), bytesText(abi.MaxAnswerLen))}
		}
	}
	return answers, nil
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
