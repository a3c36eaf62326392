package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// The lean call path answers the tools/call a client sends most, a
// 2026-07-28 call over stdio whose _meta holds only the revision and the
// client's capabilities, without the SDK: decoded once, straight into the
// dispatcher, and answered as the SDK would answer it, byte for byte.
// Anything else (another _meta key, a progress token, a task, a tool that
// asks the client, may run as a task, or that the SDK refused, a session the SDK has not yet
// taken a request of) goes to the SDK as before. FuzzLeanCalls proves the
// answers the same.

// leanMeta is the _meta of a call the lean path takes: these two keys.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// leanTools are the tools the SDK serves, by name: the catalog's less
// those the SDK refused, as of the last sync.
type leanTools map[string]leanTool

// leanTool is a tool the SDK serves: its spec, and whether its input
// schema binds arguments to Mcp-Param-* header fields (x-mcp-header,
// SEP-2243), which the SDK checks against each call's arguments over HTTP.
type leanTool struct {
	spec         abi.Tool
	paramHeaders bool
}

// leanCall is a tools/call the lean path answers.
type leanCall struct {
	spec abi.Tool
	// paramHeaders: the call's header fields are checked against its
	// arguments (leanTool).
	paramHeaders bool
	args         json.RawMessage
	// msg is the request as the SDK would get it, for the SDK to answer
	// after all (stdio).
	msg []byte
}

// parseLeanCall returns the call params hold, if the lean path answers it
// exactly as the SDK would: members name, arguments (an object) and _meta
// only, each once; _meta with exactly the revision 2026-07-28 and client
// capabilities the SDK decodes; a tool the SDK serves that neither asks
// the client nor may run as a task (whose calls the task store takes).
func parseLeanCall(params []byte, tools leanTools) (leanCall, bool) {
	members, ok := guard.Members(params)
	if !ok || len(members) > 3 || members["_meta"] == nil || members["name"] == nil {
		return leanCall{}, false
	}
	var name string
	if json.Unmarshal(members["name"], &name) != nil {
		return leanCall{}, false
	}
	args := members["arguments"]
	if len(members) == 3 && (args == nil || args[0] != '{') {
		return leanCall{}, false
	}
	meta, ok := guard.Members(members["_meta"])
	if !ok || len(meta) != 2 || string(meta[metaProtocolVersion]) != `"`+modernVersion+`"` {
		return leanCall{}, false
	}
	caps := meta[metaClientCapabilities]
	var c mcp.ClientCapabilities
	if caps == nil || caps[0] != '{' || json.Unmarshal(caps, &c) != nil {
		return leanCall{}, false
	}
	tool, ok := tools[name]
	if !ok || len(tool.spec.Client) > 0 || tool.spec.Tasks() != abi.TaskForbidden {
		return leanCall{}, false
	}
	return leanCall{spec: tool.spec, paramHeaders: tool.paramHeaders, args: args}, true
}

// leanResult encodes res, the dispatcher's result of a call, as the SDK
// answers a 2026-07-28 call: content never null, the server's
// implementation in _meta unless the result names one, and resultType
// "complete".
func leanResult(res *mcp.CallToolResult, impl *mcp.Implementation) (json.RawMessage, error) {
	out := *res
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	meta := map[string]any{}
	for k, v := range out.Meta {
		meta[k] = v
	}
	if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
		meta[mcp.MetaKeyServerInfo] = impl
	}
	out.Meta = meta
	data, err := json.Marshal(&out)
	if err != nil {
		return nil, err
	}
	// The SDK's CallToolResult marshals its result type, which only it can
	// set, after every other member it has here.
	return append(data[:len(data)-1], `,"resultType":"complete"}`...), nil
}

// leanCalls are a connection's calls on the lean path in flight, by the
// id the SDK would know them by, so that a cancellation reaches them.
type leanCalls struct {
	mu     sync.Mutex
	cancel map[jsonrpc.ID]context.CancelFunc
}

func (l *leanCalls) add(id jsonrpc.ID, cancel context.CancelFunc) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel == nil {
		l.cancel = map[jsonrpc.ID]context.CancelFunc{}
	}
	l.cancel[id] = cancel
}

// forget forgets the call under id. It is called before the id is free
// for another request, which may then take the id's place.
func (l *leanCalls) forget(id jsonrpc.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.cancel, id)
}

// cancelledID is the request a notifications/cancelled with params names:
// its member requestId, found as the SDK finds it, by its exact name
// (encoding/json would take "RequestId" too), as the SDK decodes it.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	requestID, ok := guard.Member(params, "requestId")
	if !ok {
		return jsonrpc.ID{}, false
	}
	id, err := sdkID(requestID)
	return id, err == nil
}

// cancelCall cancels the call under id, if one runs.
func (l *leanCalls) cancelCall(id jsonrpc.ID) {
	l.mu.Lock()
	cancel := l.cancel[id]
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// leanHTTP answers a 2026-07-28 tools/call over HTTP, whose id the SDK
// would get as wireID, on the lean path if it takes it: the call is run
// straight on the dispatcher, and its answer framed as the SDK framed its
// answer to a call of the same tool with the same header fields (frames:
// status, header fields, the event around the message). A call of a tool
// whose frame is not known yet goes to the SDK, which makes it known, and
// so does a call of a tool that binds arguments to header fields: the
// frame is the same for every call with the same header fields, but
// whether the SDK takes the call depends on its arguments too.
func (rt *router) leanHTTP(w http.ResponseWriter, r *http.Request, v guard.Verdict, wireID json.RawMessage, sdkReq func() *http.Request) {
	if rt.srv.sdkOnly {
		rt.stateless.ServeHTTP(w, sdkReq())
		return
	}
	call, ok := parseLeanCall(v.Params, *rt.srv.lean.Load())
	if !ok || call.paramHeaders {
		rt.stateless.ServeHTTP(w, sdkReq())
		return
	}
	k := httpListKey(v.Method+" "+call.spec.Name, nil, r)
	frame, ok := rt.frames.get(k)
	if !ok {
		rec := &listRecorder{ResponseWriter: w, version: rt.frames.version.current()}
		rt.stateless.ServeHTTP(rec, sdkReq())
		if a, ok := rec.answer(); ok {
			rt.frames.keep(k, a)
		}
		return
	}
	ctx := r.Context()
	res, err := rt.srv.calls.Call(ctx, call.spec.Name, call.args, &clientReporter{ctx: ctx, tool: call.spec.Name}, nil)
	if err != nil {
		// The tool went with a reload since it was looked up, and did
		// not run: the SDK says so as it says it.
		rt.stateless.ServeHTTP(w, sdkReq())
		return
	}
	// wireID is plain (PlainID), or the router's substitute: the SDK would
	// write it back as it is.
	data, err := leanMessage(wireID, res, rt.srv.impl)
	if err != nil || ctx.Err() != nil {
		return
	}
	frame.write(w, data)
}

// leanMessage is the response to the request whose id is id, as it is to
// be written, and whose call gave res, as the SDK encodes it: the SDK's
// envelope holds the members in this order, and the result, compact
// already, as it is.
func leanMessage(id json.RawMessage, res *mcp.CallToolResult, impl *mcp.Implementation) ([]byte, error) {
	result, err := leanResult(res, impl)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	return guard.ResultResponse(id, result), nil
}

// runLean runs call, a request the SDK would know by id and the client
// wrote with clientID, and writes its answer as the SDK would: a result,
// or the error of a call that could not run; nothing once the call was
// cancelled.
func (c *stdioConn) runLean(ctx context.Context, cancel context.CancelFunc, id jsonrpc.ID, clientID json.RawMessage, call leanCall) {
	defer cancel()
	// A 2026-07-28 call's log level is its _meta's, and the lean path
	// takes none that has one: as the SDK does, it sends no logs, and
	// without a progress token no progress.
	rep := &clientReporter{ctx: ctx, tool: call.spec.Name}
	callThen(c.srv.calls, ctx, call.spec.Name, call.args, rep, func(res *mcp.CallToolResult, err error) {
		c.lean.forget(id)
		if err != nil {
			// The tool went with a reload since it was looked up, and did
			// not run: the SDK says so as it says it, and answers as for
			// any request it takes.
			if m, err := jsonrpc.DecodeMessage(call.msg); err == nil && c.hand(m) {
				return
			}
		}
		// Whether to answer is decided before the call counts as
		// answered: from then on the end of input may cancel ctx, which
		// must not drop an answer the call already has.
		drop := err != nil || ctx.Err() != nil
		c.ids.answered(id)
		r := c.calls.answered(id)
		defer c.calls.written(r)
		if drop {
			return
		}
		data, err := leanMessage(clientID, res, c.srv.impl)
		if err != nil {
			return
		}
		c.write(append(data, '\n'))
	})
}

// answeringCaller is a Caller that hands a call's result on before it
// logs the call (dispatch.Dispatcher.CallThen).
type answeringCaller interface {
	CallThen(ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter, ask sandbox.Asker, answer func(*mcp.CallToolResult, error))
}

// callThen runs the call through calls and hands its result to answer,
// before calls logs it if calls can.
func callThen(calls Caller, ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter, answer func(*mcp.CallToolResult, error)) {
	if c, ok := calls.(answeringCaller); ok {
		c.CallThen(ctx, name, args, rep, nil, answer)
		return
	}
	answer(calls.Call(ctx, name, args, rep, nil))
}

// leanToolsOf is the lean tools of catalog c, less refused.
func leanToolsOf(c *registry.Catalog, refused map[string]bool) leanTools {
	tools := make(leanTools, len(c.Tools))
	for _, t := range c.Tools {
		if !refused[t.Spec.Name] {
			tools[t.Spec.Name] = leanTool{spec: t.Spec, paramHeaders: bindsHeaders(t.Spec.InputSchema)}
		}
	}
	return tools
}

// headerProperty is what bindsHeaders reads of a schema's properties.
type headerProperty struct {
	XMCPHeader json.RawMessage           `json:"x-mcp-header"`
	Properties map[string]headerProperty `json:"properties"`
}

// bindsHeaders reports whether an input schema may bind a property, at any
// depth of properties, to a header field, as the SDK finds its
// x-mcp-header annotations; a schema it cannot read is taken to, so that
// its calls are left to the SDK.
func bindsHeaders(schema json.RawMessage) bool {
	var s headerProperty
	if json.Unmarshal(schema, &s) != nil {
		return true
	}
	var binds func(map[string]headerProperty) bool
	binds = func(props map[string]headerProperty) bool {
		for _, p := range props {
			if p.XMCPHeader != nil || binds(p.Properties) {
				return true
			}
		}
		return false
	}
	return binds(s.Properties)
}
