package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// A tool whose manifest says execution.askFirst gathers its input by
// SEP-2322's rounds before it becomes a task of the extension (SEP-2663's
// MRTR → task composition): each round runs the module from the start,
// its asks answered from the requestState's record and the round's
// inputResponses, and a round whose run makes an ask with no answer ends
// with the InputRequiredResult, as a plain call's does. The round whose
// run takes an answer the client gave in it, and so has got past the asks
// the client was last shown, is the one that becomes the task: the call
// answers with the CreateTaskResult while the run goes on as the task,
// whose later asks wait in it (input_required, taskAsker). A run that ends
// first, without an ask it had no answer to, is a task that has ended.
// docs/design.md ("Tasks") says why the choice is made so.

// gathering is the Asker of an askFirst tool's run: replay's until the run
// takes an answer from the round's inputResponses, then's (the task's)
// from then on. Ask is called by the run alone, one at a time.
type gathering struct {
	replay *replayAsker
	then   sandbox.Asker
	// became is closed when the call becomes the task.
	became chan struct{}
	task   bool
}

// Ask implements sandbox.Asker.
func (g *gathering) Ask(ctx context.Context, asks []sandbox.Ask) ([]sandbox.Answer, error) {
	if g.task {
		return g.then.Ask(ctx, asks)
	}
	given := g.replay.fromGiven
	answers, err := g.replay.Ask(ctx, asks)
	if err == nil && g.replay.fromGiven > given {
		g.task = true
		close(g.became)
	}
	return answers, err
}

// askFirst answers call, of the askFirst tool spec, from a client that
// declares the extension, with its task for owner: an InputRequiredResult
// while the run asks what the client has not answered, and the
// CreateTaskResult of the round whose run got past its asks. The task is
// reserved before the requestState is opened, which spends it, so that a
// call the store has no room for spends nothing: a "required" tool's is
// refused, an "optional" one's answered by plain, as a plain call.
func (s *taskStore) askFirst(ctx context.Context, call *mcp.CallToolRequest, owner string, spec abi.Tool, plain func() (mcp.Result, error)) (mcp.Result, error) {
	name, caps := call.Params.Name, call.ClientCapabilities()
	c := taskCall{owner: owner, tool: name, args: call.Params.Arguments, ttl: s.taskTTL(), modern: true, need: spec.Client, caps: caps}
	t, _, refusal := s.reserve(c)
	switch {
	case refusal != "" && spec.Tasks() == abi.TaskRequired:
		return nil, &jsonrpc.Error{Code: guard.CodeInternalError, Message: "task not created: " + refusal}
	case refusal != "":
		return plain()
	}
	what := "tool " + name
	replay, args, err := s.states.replayOf(askCall{ctx: ctx, what: what, need: spec.Client, session: call.Session, caps: caps,
		args: call.Params.Arguments, state: call.Params.RequestState, responses: call.Params.InputResponses})
	if err != nil {
		s.unreserve(owner, t)
		return nil, err
	}
	g := &gathering{replay: replay, became: make(chan struct{})}
	c.gather = g
	s.run(t, c)
	select {
	case <-g.became:
	case <-t.returned:
		// A run that ended before it asked took none of the state's
		// answers, which stay good for a retry.
		s.states.unspent(replay)
		if replay.pending != nil {
			s.drop(owner, t)
			state, err := s.states.sealRun(what, args, replay)
			res, err := callAnswer(nil, replay.pending, state, err)
			if err != nil {
				return nil, err
			}
			return &typedResult{res}, nil
		}
	case <-ctx.Done():
		s.drop(owner, t)
		return nil, fmt.Errorf("the call ended before its run became a task: %w", context.Cause(ctx))
	}
	return &createTaskResult{CallToolResult: &mcp.CallToolResult{}, task: extensionOf(s.state(t), "task")}, nil
}

// typedResult is a tools/call result made before the SDK's tool handler,
// with the resultType that handler gives the results it returns
// (input_required or complete) in a field of its own, which nothing else
// can set.
type typedResult struct{ *mcp.CallToolResult }

// MarshalJSON encodes the result with its resultType first.
func (r *typedResult) MarshalJSON() ([]byte, error) {
	b, err := r.CallToolResult.MarshalJSON()
	if err != nil {
		return nil, err
	}
	rt := `{"resultType":"complete",`
	if r.InputRequests != nil {
		rt = `{"resultType":"input_required",`
	}
	// The SDK's encoding is an object that has members (content, at least).
	return append([]byte(rt), b[1:]...), nil
}
