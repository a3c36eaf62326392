package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
)

// The 2026-07-28 tasks extension (SEP-2663): the server decides which
// calls run as tasks, answers them with a CreateTaskResult
// (resultType "task"), and the client polls with tasks/get, which inlines
// the result, and may send tasks/update and tasks/cancel. tasks/result and
// tasks/list are gone (the SDK answers them -32601, as the extension
// requires).

// tasksExtension is the extension's name in capabilities' extensions.
const tasksExtension = "io.modelcontextprotocol/tasks"

// statelessOwner owns the tasks of 2026-07-28 over HTTP. That revision
// has no session, and the server has no identity of a client but its
// bearer token, which every client shares: a task is found through its id
// alone, which only its creator was given and no one can guess (rand.Text:
// 130 random bits), as the extension means it to be ("a durable handle"
// that survives a client's restart). Kept apart from every session's, and
// bounded by the store's bound alone (TaskOptions.Total): all of these
// clients share it, so one that keeps that many tasks running has the
// next refused for every other, which only the operator's bounds
// (--max-tasks, a token per trusted client set) can answer.
const statelessOwner = "2026-07-28 over HTTP"

// extensionTaskMethods are the extension's methods the router answers.
var extensionTaskMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// declaresTasks reports whether a client's capabilities declare the
// extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

// missingTasksExtension is the -32021 error of a request that needs the
// extension from a client that did not declare it.
func missingTasksExtension(what string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    mcp.CodeMissingRequiredClientCapabilities,
		Message: what + " needs the tasks extension, which the client did not declare: add \"" + tasksExtension + "\": {} to the extensions of the clientCapabilities in the request's _meta",
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}`),
	}
}

// extensionTask is the extension's Task, with what tasks/get inlines
// (DetailedTask) and the result type: "task" for a CreateTaskResult,
// "complete" for tasks/get.
type extensionTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
	// InputRequests are the asks an input_required task waits for.
	InputRequests mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Meta          mcp.Meta            `json:"_meta,omitempty"`
}

// detailed is t as tasks/get gives it: the result of a completed task, the
// error of a failed one, the asks of an input_required one.
func (s *taskStore) detailed(t *task) extensionTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := extensionOf(s.stateLocked(t), "complete")
	switch t.status {
	case taskCompleted:
		out.Result = t.result
	case taskFailed:
		out.Error = t.err
	case taskInputRequired:
		out.InputRequests = t.inputRequests()
	}
	return out
}

// extensionOf is st as the extension has it, with resultType.
func extensionOf(st taskState, resultType string) extensionTask {
	return extensionTask{
		ResultType: resultType, TaskID: st.TaskID, Status: st.Status, StatusMessage: st.StatusMessage,
		CreatedAt: st.CreatedAt, LastUpdatedAt: st.LastUpdatedAt, TTLMs: st.TTL, PollIntervalMs: st.PollInterval,
	}
}

// createTaskResult is a CreateTaskResult in the SDK's tools/call path. It
// embeds the SDK's result type so that the SDK takes it as its own, and
// encodes as the task alone.
type createTaskResult struct {
	*mcp.CallToolResult
	task extensionTask
}

// MarshalJSON encodes the task, with the _meta the SDK set (its
// serverInfo) on the embedded result.
func (r *createTaskResult) MarshalJSON() ([]byte, error) {
	t := r.task
	t.Meta = r.GetMeta()
	return json.Marshal(t)
}

// serverDirected runs as tasks the 2026-07-28 calls of tools whose
// manifest says they may run long (execution.taskSupport), for clients
// that declare the extension; the extension leaves the choice to the
// server, and the manifest is the author's word for it. A "required"
// tool's call from a client without the extension is refused with -32021,
// as the extension says. When the store has no room, an "optional" tool's
// call runs as a plain call (the extension allows a plain result), and a
// "required" one's is refused. An askFirst tool's call gathers its
// answers before it becomes a task (see askFirst).
func (s *taskStore) serverDirected(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || method != "tools/call" || !stateless(call.Session) {
			return next(ctx, method, req)
		}
		owner := extensionOwner(ctx, call)
		if owner == "" {
			return next(ctx, method, req)
		}
		tool, ok := s.tools().Lookup(call.Params.Name)
		if !ok || tool.Spec.Tasks() == abi.TaskForbidden {
			return next(ctx, method, req)
		}
		required := tool.Spec.Tasks() == abi.TaskRequired
		caps := call.ClientCapabilities()
		if !declaresTasks(caps) {
			if required {
				return nil, missingTasksExtension(fmt.Sprintf("tool %q, which runs only as a task,", call.Params.Name))
			}
			return next(ctx, method, req)
		}
		if need := tool.Spec.Client; lacks(need, caps) {
			// As a plain call of the tool is refused.
			return nil, missingCapability("tool "+call.Params.Name, need)
		}
		if tool.Spec.AsksFirst() {
			return s.askFirst(ctx, call, owner, tool.Spec, func() (mcp.Result, error) { return next(ctx, method, req) })
		}
		_, state, refusal := s.start(taskCall{owner: owner, tool: call.Params.Name, args: call.Params.Arguments, ttl: s.taskTTL(), modern: true,
			need: tool.Spec.Client, caps: caps})
		switch {
		case refusal != "" && required:
			return nil, &jsonrpc.Error{Code: guard.CodeInternalError, Message: "task not created: " + refusal}
		case refusal != "":
			return next(ctx, method, req)
		}
		return &createTaskResult{CallToolResult: &mcp.CallToolResult{}, task: extensionOf(state, "task")}, nil
	}
}

// connectionOwnerKey is the context key of the owner of a stdio
// connection's tasks, which ServeStdio gives the SDK's session, and so
// every request of it.
type connectionOwnerKey struct{}

// extensionOwner is the owner of the tasks a 2026-07-28 call makes: its
// stdio connection's, or statelessOwner over HTTP; "" where the call
// came some other way, which makes no tasks.
func extensionOwner(ctx context.Context, call *mcp.CallToolRequest) string {
	if owner, ok := ctx.Value(connectionOwnerKey{}).(string); ok {
		return owner
	}
	if call.Extra != nil && call.Extra.Header != nil {
		return statelessOwner
	}
	return ""
}

// extensionRequest is what a request of the extension carries: the task
// it names, a tasks/update's answers, and the _meta that 2026-07-28
// requires.
type extensionRequest struct {
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	Meta           struct {
		ProtocolVersion    string                  `json:"io.modelcontextprotocol/protocolVersion"`
		ClientCapabilities *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
	} `json:"_meta"`
}

// answerExtension answers a tasks/get, tasks/update or tasks/cancel of the
// extension, with params, for owner. The SDK does not know these methods,
// so what it checks of every 2026-07-28 request, whatever the transport,
// is checked here first (see checkExtension). Both acknowledgements are
// empty results: an update's answers go to the asks its task waits for
// (see taskStore.update), and what the task does next is for tasks/get to
// tell; a cancel of a task that has ended changes nothing, and
// cancellation is cooperative.
func (s *taskStore) answerExtension(owner, method string, params json.RawMessage) (any, *jsonrpc.Error) {
	var p extensionRequest
	if err := unmarshalParams(params, &p); err != nil {
		return nil, err
	}
	if err := checkExtension(method, &p); err != nil {
		return nil, err
	}
	t, err := s.find(owner, p.TaskID, true)
	if err != nil {
		return nil, err
	}
	switch method {
	case "tasks/get":
		return s.detailed(t), nil
	case "tasks/update":
		if err := s.update(t, p.InputResponses); err != nil {
			return nil, err
		}
	case "tasks/cancel":
		s.mu.Lock()
		if t.running() {
			s.cancelLocked(t, "The task was cancelled by request.")
		}
		s.mu.Unlock()
	}
	return struct {
		ResultType string `json:"resultType"`
	}{"complete"}, nil
}

// checkExtension checks p, the params of a request of method, as the SDK
// checks every 2026-07-28 request: the _meta the revision requires, of a
// revision that has the extension, from a client that declares it.
func checkExtension(method string, p *extensionRequest) *jsonrpc.Error {
	switch v := p.Meta.ProtocolVersion; {
	case v == "":
		return &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: `invalid params: _meta must name "io.modelcontextprotocol/protocolVersion"`}
	case v < modernVersion || !slices.Contains(mcp.SupportedProtocolVersions(), v):
		data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: []string{modernVersion}, Requested: v})
		return &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion,
			Message: fmt.Sprintf("protocol version %q is not supported for %s: it belongs to the tasks extension of %s", v, method, modernVersion), Data: data}
	case p.Meta.ClientCapabilities == nil:
		return &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: `invalid params: _meta must hold "io.modelcontextprotocol/clientCapabilities"`}
	case !declaresTasks(p.Meta.ClientCapabilities):
		return missingTasksExtension(method)
	}
	return nil
}

// answerExtensionTask answers v, a request of the tasks extension over
// HTTP, as answerExtension does, once the headers are checked against the
// body as the SDK checks them: the MCP-Protocol-Version header against
// the request's _meta, and the Mcp-Method and Mcp-Name headers (SEP-2243;
// Mcp-Name is the taskId). Errors go with the HTTP statuses SEP-2575
// gives them.
func (rt *router) answerExtensionTask(w http.ResponseWriter, r *http.Request, id json.RawMessage, v guard.Verdict) {
	var p extensionRequest
	if err := unmarshalParams(v.Params, &p); err != nil {
		writeRPCError(w, http.StatusBadRequest, errorResponse(id, err))
		return
	}
	header := r.Header.Get("Mcp-Protocol-Version")
	refuse := func(status int, code int64, message string) {
		writeRPCError(w, status, errorResponse(id, &jsonrpc.Error{Code: code, Message: message}))
	}
	switch {
	case header == "":
		refuse(http.StatusBadRequest, mcp.CodeHeaderMismatch, "the MCP-Protocol-Version header is required on a request whose _meta names a protocol version")
		return
	case p.Meta.ProtocolVersion != "" && header != p.Meta.ProtocolVersion:
		refuse(http.StatusBadRequest, mcp.CodeHeaderMismatch, fmt.Sprintf("the MCP-Protocol-Version header %q does not match the request's _meta protocol version %q", header, p.Meta.ProtocolVersion))
		return
	case r.Header.Get("Mcp-Method") != v.Method:
		refuse(http.StatusBadRequest, mcp.CodeHeaderMismatch, fmt.Sprintf("the Mcp-Method header %q does not match the request's method %q", r.Header.Get("Mcp-Method"), v.Method))
		return
	case r.Header.Get("Mcp-Name") != p.TaskID:
		refuse(http.StatusBadRequest, mcp.CodeHeaderMismatch, fmt.Sprintf("the Mcp-Name header %q does not match the request's taskId %q", r.Header.Get("Mcp-Name"), p.TaskID))
		return
	}
	result, rpcErr := rt.tasks.answerExtension(statelessOwner, v.Method, v.Params)
	if rpcErr != nil {
		writeRPCError(w, http.StatusBadRequest, errorResponse(id, rpcErr))
		return
	}
	out, err := json.Marshal(result)
	if err != nil {
		refuse(http.StatusInternalServerError, guard.CodeInternalError, fmt.Sprintf("encoding the result: %v", err))
		return
	}
	writeRPCError(w, http.StatusOK, guard.ResultResponse(id, out))
}

// errorResponse is the JSON-RPC error response to id, with the error's
// data.
func errorResponse(id json.RawMessage, e *jsonrpc.Error) []byte {
	out, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	if err != nil {
		return guard.ErrorResponse(id, int(e.Code), e.Message)
	}
	return out
}

// taskTTL is how long a task of the extension is kept: the client names
// none (the server decides), so the default, within the operator's bound.
func (s *taskStore) taskTTL() time.Duration { return min(DefaultTaskTTL, s.opts.MaxTTL) }
