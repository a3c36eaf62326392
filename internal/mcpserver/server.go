// Package mcpserver binds a host to the Model Context Protocol: it registers
// every catalog tool with the official MCP Go SDK and serves the SDK over
// stdio and Streamable HTTP, with a guard in front of each transport that
// answers malformed JSON-RPC itself.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// Name is the server's name in serverInfo.
const Name = "wasmcp"

// instructions tell a client what kind of server this is; models read them.
const instructions = "Tools served by wasmcp run as WebAssembly modules in a sandbox with time, memory and output limits. A failed tool call returns isError with a message explaining the cause."

// Server is an MCP server for a host's tools.
type Server struct {
	mcp    *mcp.Server
	log    *slog.Logger
	budget *semaphore.Weighted // bytes of requests held at once
	// budgetSize is the budget's size, for the messages that name it.
	budgetSize int64
	// subs bounds and follows resource subscriptions.
	subs *subscriptions
	// states signs and checks the requestStates of tools that ask the
	// client on 2026-07-28.
	states *stateSigner
	// tasks runs and keeps the tool calls made as tasks.
	tasks *taskStore
	// version counts the catalogs the SDK has served, for the list
	// answers connections keep (listAnswers).
	version catalogVersion
	// sdkOnly leaves every request to the SDK: the other side of the
	// tests that compare the lean paths' answers with the SDK's.
	sdkOnly bool

	// calls runs what the lean call path takes (leancall.go), impl is the
	// server's implementation it names in results, and lean the tools it
	// may run: the SDK's, less those it refused (refused, which only sync
	// touches).
	calls   Caller
	impl    *mcp.Implementation
	lean    atomic.Pointer[leanTools]
	refused map[string]bool
}

// Options configure New.
type Options struct {
	// Version is the server's version in serverInfo.
	Version string
	Logger  *slog.Logger
	// ListChanged says that the tool set may change while the server runs
	// (the directory is watched): the tools, resources and prompts
	// capabilities then promise their list_changed notifications, and
	// clients get them.
	ListChanged bool
	// RequestBudget bounds the bytes of request bodies the server holds at
	// once, over every transport (default DefaultRequestBudget; at least
	// MaxMessageSize, so that any one request fits). Over HTTP, a request
	// that would pass it is refused before its body is read; over stdio,
	// no more input is read until answers give some back.
	RequestBudget int64
	// PollInterval, when set, ends the response stream of a 2025-11-25
	// session's request over Streamable HTTP each time the request has run
	// this long, and the client resumes it (see pollStreams). Zero keeps
	// each stream open until its answer.
	PollInterval time.Duration
	// RequestStateKey signs the requestState of 2026-07-28 calls whose
	// tools ask the client, so that any replica with the same key takes
	// them back; at least MinStateKey bytes. Empty: a random key of this
	// process's own, which holds only with one replica.
	RequestStateKey []byte
	// Tasks bound the tool calls run as tasks (MCP 2025-11-25).
	Tasks TaskOptions
	// ReplicaID, when set, begins every 2025-11-25 session id and every
	// task id this server makes, followed by a dot and the random part: a
	// load balancer in front of replicas routes a session's requests, and
	// a task's, to the one that holds it by that prefix (deploy/nginx),
	// since only that one has it.
	ReplicaID string
}

// DefaultRequestBudget is the request budget of a zero
// Options.RequestBudget: 8 requests of the largest size at once.
const DefaultRequestBudget = 8 * MaxMessageSize

// Caller runs tool calls, resource reads, prompt requests and completions;
// dispatch.Dispatcher is the one used.
type Caller interface {
	// Call runs a call of the named tool with its arguments, sending the
	// tool's reports to rep and its asks of the client to ask. It fails
	// for a tool that does not exist, and with sandbox.ErrInputRequired
	// when ask ended the run.
	Call(ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter, ask sandbox.Asker) (*mcp.CallToolResult, error)
	// Read reads the resource at uri, a declared resource's or one a
	// template matches. Its errors are the JSON-RPC errors of the read.
	Read(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
	// GetPrompt gets the named prompt with its arguments, sending the
	// module's asks of the client to ask. Its errors are the JSON-RPC
	// errors of the request, and sandbox.ErrInputRequired when ask ended
	// the run.
	GetPrompt(ctx context.Context, name string, args map[string]string, ask sandbox.Asker) (*mcp.GetPromptResult, error)
	// Complete answers completion/complete. Its errors are the JSON-RPC
	// errors of the request.
	Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error)
}

// New returns an MCP server that serves the tools, resources and prompts
// of the registry's catalog, runs their calls, reads and requests with
// calls, and follows the registry's reloads. An item the SDK refuses (it
// panics on some schemas) is skipped and logged, never fatal.
func New(reg *registry.Registry, calls Caller, opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	budget := opts.RequestBudget
	if budget <= 0 {
		budget = DefaultRequestBudget
	}
	budget = max(budget, MaxMessageSize)
	s := &Server{log: log, budget: semaphore.NewWeighted(budget), budgetSize: budget, states: newStateSigner(opts.RequestStateKey),
		calls: calls, impl: &mcp.Implementation{Name: Name, Title: "wasmcp", Version: opts.Version}, refused: map[string]bool{}}
	// The SDK declares the completions capability when, and only when, a
	// completion handler is set, and fixes both when the server is made.
	// So the tool directory at start decides (design.md, "Resources and
	// prompts").
	var handler func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	completions := declaresCompletions(reg.Current())
	if completions {
		handler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return calls.Complete(ctx, req.Params)
		}
	}
	s.subs = newSubscriptions(reg.Current, func() iter.Seq[*mcp.ServerSession] { return s.mcp.Sessions() }, log)
	s.mcp = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions:       instructions,
		GetSessionID:       sessionIDs(opts.ReplicaID),
		CompletionHandler:  handler,
		SubscribeHandler:   s.subs.subscribe,
		UnsubscribeHandler: s.subs.unsubscribe,
		Logger:             sdkLogger(log),
		// Logging carries tools' log calls. The SDK answers prompts/list and
		// resources/list whatever is declared (with empty lists when no
		// module declares any), and 2026-07-28 requires a method that is
		// answered to be declared, so both always are.
		Capabilities: &mcp.ServerCapabilities{
			Tools:   &mcp.ToolCapabilities{ListChanged: opts.ListChanged},
			Logging: &mcp.LoggingCapabilities{},
			Prompts: &mcp.PromptCapabilities{ListChanged: opts.ListChanged},
			// Subscriptions are served whether or not the directory is
			// watched; without a watch no resource changes.
			Resources: &mcp.ResourceCapabilities{ListChanged: opts.ListChanged, Subscribe: true},
		},
	})
	// Each middleware added wraps those before it: the task fields are
	// added to the SDK's answers first, and the cache hints of an older
	// session taken out of the whole.
	s.tasks = newTaskStore(calls, reg.Current, opts.Tasks)
	s.tasks.replica, s.tasks.states = opts.ReplicaID, s.states
	s.mcp.AddReceivingMiddleware(s.tasks.serverDirected)
	s.mcp.AddReceivingMiddleware(taskFields(reg.Current))
	s.mcp.AddReceivingMiddleware(withoutLegacyCacheHints)
	if opts.PollInterval > 0 {
		s.mcp.AddReceivingMiddleware(pollStreams(opts.PollInterval))
	}
	s.sync(calls, nil, reg.Current())
	reg.OnChange(func(c registry.Change) {
		s.sync(calls, c.Old, c.New)
		s.version.bump()
		// In the background: the SDK writes each notification in turn, and a
		// stalled client must not hold up the reload.
		if uris := s.subs.changed(c.Old, c.New); len(uris) > 0 {
			go s.notifyUpdated(uris)
		}
		if !completions && declaresCompletions(c.New) && !declaresCompletions(c.Old) {
			log.Warn("completions declared after start are not served: the completions capability is fixed when the server starts; restart it to serve them")
		}
	})
	return s
}

// sessionIDs makes the session ids of a replica: the SDK's own, random
// and unguessable, after the replica's id.
func sessionIDs(replica string) func() string {
	if replica == "" {
		return rand.Text
	}
	return func() string { return replica + "." + rand.Text() }
}

// sync brings the SDK's tools, resources, resource templates and prompts
// from old to new: those that are gone are removed, those that are new or changed (a
// new module version makes new values) are added. The SDK tells clients,
// once per burst.
func (s *Server) sync(calls Caller, old, new *registry.Catalog) {
	var (
		oldTools     []*registry.Tool
		oldResources []*registry.Resource
		oldTemplates []*registry.Template
		oldPrompts   []*registry.Prompt
	)
	if old != nil {
		oldTools, oldResources, oldTemplates, oldPrompts = old.Tools, old.Resources, old.Templates, old.Prompts
	}
	syncList(s, "tool", oldTools, new.Tools, func(t *registry.Tool) string { return t.Spec.Name }, new.Lookup,
		s.mcp.RemoveTools, func(t *registry.Tool) {
			spec := t.Spec
			required := spec.Tasks() == abi.TaskRequired
			// Refused until the SDK has taken it: AddTool panics on what
			// it refuses.
			s.refused[spec.Name] = true
			s.mcp.AddTool(Tool(spec), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if required {
					// Only where no session's transport answered first
					// (taskStore.handles): a 2026-07-28 request.
					return nil, &jsonrpc.Error{Code: guard.CodeMethodNotFound, Message: requiredRefusal(spec.Name)}
				}
				return s.call(ctx, calls, spec, req)
			})
			delete(s.refused, spec.Name)
		})
	lean := leanToolsOf(new, s.refused)
	s.lean.Store(&lean)
	read := func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return calls.Read(ctx, req.Params.URI)
	}
	syncList(s, "resource", oldResources, new.Resources, func(r *registry.Resource) string { return r.Spec.URI }, new.Resource,
		s.mcp.RemoveResources, func(r *registry.Resource) { s.mcp.AddResource(Resource(r.Spec), read) })
	syncList(s, "resource template", oldTemplates, new.Templates, func(t *registry.Template) string { return t.Spec.URITemplate }, new.Template,
		s.mcp.RemoveResourceTemplates, func(t *registry.Template) { s.mcp.AddResourceTemplate(ResourceTemplate(t.Spec), read) })
	syncList(s, "prompt", oldPrompts, new.Prompts, func(p *registry.Prompt) string { return p.Spec.Name }, new.Prompt,
		s.mcp.RemovePrompts, func(p *registry.Prompt) {
			spec := p.Spec
			s.mcp.AddPrompt(Prompt(spec), func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return s.getPrompt(ctx, calls, spec, req)
			})
		})
}

// call runs a tools/call of the tool spec. A tool that asks the client is
// refused to a client that lacks what it needs, and its asks go on the
// session (2025-11-25) or into an InputRequiredResult (2026-07-28).
func (s *Server) call(ctx context.Context, calls Caller, spec abi.Tool, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	rep := newClientReporter(ctx, req, spec.Name)
	if len(spec.Client) == 0 {
		return calls.Call(ctx, spec.Name, req.Params.Arguments, rep, nil)
	}
	var res *mcp.CallToolResult
	requests, state, err := s.asking(askCall{
		ctx: ctx, what: "tool " + spec.Name, need: spec.Client,
		session: req.Session, caps: req.ClientCapabilities(),
		args: req.Params.Arguments, state: req.Params.RequestState, responses: req.Params.InputResponses,
	}, func(ask sandbox.Asker) (err error) {
		res, err = calls.Call(ctx, spec.Name, req.Params.Arguments, rep, ask)
		return err
	})
	return callAnswer(res, requests, state, err)
}

// callAnswer is the answer to a tools/call whose module may ask (see
// Server.asking): the tool error of an *askFailure, an InputRequiredResult
// of requests and state, or the call's result.
func callAnswer(res *mcp.CallToolResult, requests mcp.InputRequestMap, state string, err error) (*mcp.CallToolResult, error) {
	var failed *askFailure
	switch {
	case errors.As(err, &failed):
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: failed.text}}, IsError: true}, nil
	case err != nil:
		return nil, err
	case requests != nil:
		return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, nil
	}
	return res, nil
}

// getPrompt runs a prompts/get of the prompt spec, whose module may ask
// the client as a tool does (call).
func (s *Server) getPrompt(ctx context.Context, calls Caller, spec abi.Prompt, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	if len(spec.Client) == 0 {
		return calls.GetPrompt(ctx, spec.Name, req.Params.Arguments, nil)
	}
	args, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return nil, err
	}
	var res *mcp.GetPromptResult
	requests, state, err := s.asking(askCall{
		ctx: ctx, what: "prompt " + spec.Name, need: spec.Client,
		session: req.Session, caps: req.ClientCapabilities(),
		args: args, state: req.Params.RequestState, responses: req.Params.InputResponses,
	}, func(ask sandbox.Asker) (err error) {
		res, err = calls.GetPrompt(ctx, spec.Name, req.Params.Arguments, ask)
		return err
	})
	var failed *askFailure
	switch {
	case errors.As(err, &failed):
		return nil, &jsonrpc.Error{Code: failed.code, Message: failed.text}
	case err != nil:
		return nil, err
	case requests != nil:
		return &mcp.GetPromptResult{InputRequests: requests, RequestState: state}, nil
	}
	return res, nil
}

// syncList is sync for one kind of item, each known by its key. An item
// the SDK refuses (it panics on some schemas and URIs) is skipped and
// logged, never fatal.
func syncList[T comparable](s *Server, kind string, old, new []T, key func(T) string, lookup func(string) (T, bool), remove func(...string), add func(T)) {
	var gone []string
	for _, v := range old {
		if _, ok := lookup(key(v)); !ok {
			gone = append(gone, key(v))
		}
	}
	if len(gone) > 0 {
		remove(gone...)
		s.log.Info(kind+"s removed", kind+"s", gone)
	}
	prev := make(map[string]T, len(old))
	for _, v := range old {
		prev[key(v)] = v
	}
	for _, v := range new {
		if p, ok := prev[key(v)]; ok && p == v {
			continue
		}
		if err := recovered(func() { add(v) }); err != nil {
			s.log.Warn("skipping a "+kind+" the MCP SDK refuses", kind, key(v), "reason", err)
			remove(key(v))
		}
	}
}

// recovered runs f, turning a panic into an error.
func recovered(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	f()
	return nil
}

// Tool converts a manifest's tool to the SDK's description of it.
func Tool(s abi.Tool) *mcp.Tool {
	t := &mcp.Tool{
		Name:        s.Name,
		Title:       s.Title,
		Description: s.Description,
		InputSchema: s.InputSchema,
		Icons:       icons(s.Icons),
		Meta:        meta(s.Meta),
	}
	if len(s.OutputSchema) > 0 {
		t.OutputSchema = s.OutputSchema
	}
	if a := s.Annotations; a != nil {
		t.Annotations = &mcp.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    deref(a.ReadOnlyHint),
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  deref(a.IdempotentHint),
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return t
}

// Resource converts a manifest's resource to the SDK's description of it.
// A resource whose contents are in the manifest has their size, unless the
// manifest says otherwise.
func Resource(r abi.Resource) *mcp.Resource {
	size := r.Size
	switch {
	case size != 0:
	case r.Text != nil:
		size = int64(len(*r.Text))
	default:
		size = int64(len(r.Blob))
	}
	return &mcp.Resource{
		URI:         r.URI,
		Name:        r.Name,
		Title:       r.Title,
		Description: r.Description,
		MIMEType:    r.MIMEType,
		Size:        size,
		Annotations: annotations(r.Annotations),
		Icons:       icons(r.Icons),
		Meta:        meta(r.Meta),
	}
}

// ResourceTemplate converts a manifest's resource template to the SDK's
// description of it.
func ResourceTemplate(t abi.ResourceTemplate) *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{
		URITemplate: t.URITemplate,
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		MIMEType:    t.MIMEType,
		Annotations: annotations(t.Annotations),
		Icons:       icons(t.Icons),
		Meta:        meta(t.Meta),
	}
}

// Prompt converts a manifest's prompt to the SDK's description of it.
func Prompt(p abi.Prompt) *mcp.Prompt {
	out := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Icons: icons(p.Icons), Meta: meta(p.Meta)}
	for _, a := range p.Arguments {
		out.Arguments = append(out.Arguments, &mcp.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	return out
}

// meta passes a manifest's _meta on as the module wrote it.
func meta(m abi.Meta) mcp.Meta {
	if m == nil {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func annotations(a *abi.ResourceAnnotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{LastModified: a.LastModified}
	if a.Priority != nil {
		out.Priority = *a.Priority
	}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, mcp.Role(r))
	}
	return out
}

func icons(in []abi.Icon) []mcp.Icon {
	var out []mcp.Icon
	for _, i := range in {
		out = append(out, mcp.Icon{Source: i.Src, MIMEType: i.MIMEType, Sizes: i.Sizes, Theme: mcp.IconTheme(i.Theme)})
	}
	return out
}

func deref(b *bool) bool { return b != nil && *b }

// quieter drops records below min. The SDK logs every stateless request's
// temporary session at Info; those lines would drown the server's own.
type quieter struct {
	slog.Handler
	min slog.Level
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(as), q.min}
}

func (q quieter) WithGroup(name string) slog.Handler {
	return quieter{q.Handler.WithGroup(name), q.min}
}

// sdkLogger is the logger handed to the SDK: warnings and errors only.
func sdkLogger(log *slog.Logger) *slog.Logger {
	return slog.New(quieter{log.Handler(), slog.LevelWarn})
}
