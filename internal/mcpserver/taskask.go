package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// A task of the extension may ask the client (SEP-2663 with SEP-2322's
// shapes): while its run waits in a host ask, the task is input_required
// and tasks/get shows the asks as its inputRequests; tasks/update's
// inputResponses answer them, and once every ask of the wait has its
// answer the run goes on and the task is working again. The wait is the
// run's: its time limit counts it, and a run whose asks are not answered
// in time ends as any run past its limit, with a tool error. A 2025-11-25
// task does not ask (legacyTaskAsks).

// inputWait is a run's wait for the client's answers to its asks.
type inputWait struct {
	// asks are the run's asks, answers their answers, in their order, and
	// index the place of each ask waited for, by id. Guarded by the
	// store's mu until answered is closed.
	asks    []sandbox.Ask
	answers []sandbox.Answer
	index   map[string]int
	// requests are the asks still unanswered, by id, as tasks/get shows
	// them.
	requests mcp.InputRequestMap
	// answered is closed once every ask has its answer.
	answered chan struct{}
}

// taskAsker is the Asker of a task of the extension: need are the
// capabilities the tool declares, caps the client's, as it declared them
// in the request that made the task.
type taskAsker struct {
	store *taskStore
	t     *task
	need  []string
	caps  *mcp.ClientCapabilities
}

// Ask implements sandbox.Asker. The asks the tool and the client allow
// wait for tasks/update; the others are refused at once, as on a plain
// call. ctx ends with the run: its time limit, or the task's cancel.
func (a *taskAsker) Ask(ctx context.Context, asks []sandbox.Ask) ([]sandbox.Answer, error) {
	w := &inputWait{asks: asks, answers: make([]sandbox.Answer, len(asks)), index: map[string]int{},
		requests: mcp.InputRequestMap{}, answered: make(chan struct{})}
	for i, ask := range asks {
		req, err := askable(a.need, a.caps, ask)
		if err != nil {
			w.answers[i].Err = err
			continue
		}
		w.requests[ask.ID], w.index[ask.ID] = req, i
	}
	if len(w.requests) == 0 {
		return w.answers, nil
	}
	if !a.store.awaitInput(a.t, w) {
		// The task ended, by its cancel, which ends ctx.
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	select {
	case <-w.answered:
		return w.answers, nil
	case <-ctx.Done():
		a.store.inputEnded(a.t, w)
		return nil, context.Cause(ctx)
	}
}

// awaitInput has t wait for w, unless t has ended, and reports whether
// it does.
func (s *taskStore) awaitInput(t *task, w *inputWait) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !t.running() {
		return false
	}
	t.status, t.input, t.updated = taskInputRequired, w, time.Now()
	return true
}

// inputEnded ends t's wait w, which its run gave up.
func (s *taskStore) inputEnded(t *task, w *inputWait) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.input == w {
		t.status, t.input, t.updated = taskWorking, nil, time.Now()
	}
}

// update answers the asks t waits for with responses, by id. A response
// to no ask of the wait is ignored, as the extension has unknown keys
// ignored; one that cannot answer its ask refuses the whole update, so
// that the client hears why and nothing is half taken.
func (s *taskStore) update(t *task, responses map[string]json.RawMessage) *jsonrpc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := t.input
	if w == nil {
		return nil
	}
	taken := map[string]sandbox.Answer{}
	for id, raw := range responses {
		req, waiting := w.requests[id]
		if !waiting {
			continue
		}
		a, err := inputAnswer(id, w.asks[w.index[id]].Method, req, raw)
		if err != nil {
			return err
		}
		taken[id] = a
	}
	for id, a := range taken {
		w.answers[w.index[id]] = a
		delete(w.requests, id)
	}
	if len(taken) > 0 {
		t.updated = time.Now()
	}
	if len(w.requests) == 0 {
		t.status, t.input = taskWorking, nil
		close(w.answered)
	}
	return nil
}

// inputAnswer is raw, the client's response to the ask id of method,
// whose request is req, as the run's answer. A form's content that does
// not conform to the schema asked for is the ask's error, as on a plain
// call.
func inputAnswer(id, method string, req mcp.InputRequest, raw json.RawMessage) (sandbox.Answer, *jsonrpc.Error) {
	invalid := func(format string, args ...any) *jsonrpc.Error {
		return &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: fmt.Sprintf("invalid params: inputResponses[%q] ", id) + fmt.Sprintf(format, args...)}
	}
	if len(raw) > abi.MaxAnswerLen {
		return sandbox.Answer{}, invalid("is %d bytes, over the %d KiB an answer may have", len(raw), abi.MaxAnswerLen>>10)
	}
	one, err := json.Marshal(map[string]json.RawMessage{id: raw})
	if err != nil {
		return sandbox.Answer{}, invalid("is not JSON: %v", err)
	}
	var decoded mcp.InputResponseMap
	if err := json.Unmarshal(one, &decoded); err != nil {
		return sandbox.Answer{}, invalid("is not an answer to %s: %v", method, err)
	}
	resp := decoded[id]
	if !answersTo(method, resp) {
		return sandbox.Answer{}, invalid("is not an answer to %s, which the task asked under that id", method)
	}
	if err := conforms(req, resp); err != nil {
		return sandbox.Answer{Err: err}, nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return sandbox.Answer{}, invalid("cannot be encoded: %v", err)
	}
	return sandbox.Answer{JSON: b}, nil
}

// inputRequests are the asks t waits for, as tasks/get shows them; s.mu
// is held.
func (t *task) inputRequests() mcp.InputRequestMap {
	if t.input == nil {
		return nil
	}
	return maps.Clone(t.input.requests)
}

// legacyTaskAsks is the Asker of a 2025-11-25 task, which refuses every
// ask. That revision has a task's asks go to the client through the
// client's tasks/result, which the server answers itself, apart from the
// SDK that sends requests to clients; and the session outside a request
// (an HTTP session's GET stream) may have no one reading it.
type legacyTaskAsks struct{}

// legacyTaskAskText is what a 2025-11-25 task's ask is told.
const legacyTaskAskText = "a 2025-11-25 task cannot ask the client: on 2025-11-25 a call of the tool made without \"task\" can, and on 2026-07-28 a task's asks go to the client through the tasks extension"

// Ask implements sandbox.Asker.
func (legacyTaskAsks) Ask(_ context.Context, asks []sandbox.Ask) ([]sandbox.Answer, error) {
	answers := make([]sandbox.Answer, len(asks))
	for i := range answers {
		answers[i].Err = &sandbox.AskError{Code: abi.ErrDenied, Text: legacyTaskAskText}
	}
	return answers, nil
}
