// Package host runs tool calls: it checks arguments against the tool's
// inputSchema, waits for a free slot, runs the module in the sandbox and
// turns what the module produced, or how it failed, into an MCP tool result.
//
// Every failure of a tool is a result with isError set and a message meant
// for the model that made the call; Call returns a Go error only when the
// tool does not exist.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/policy"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/schema"
)

// StderrTail is how much of a failed tool's stderr goes into the error text:
// enough for a message and a little context, not a log dump.
const StderrTail = 2048

// DefaultConcurrency is the default bound on calls running at once: each run
// is CPU-bound, so more than a couple per core only adds latency.
func DefaultConcurrency() int { return 2 * runtime.GOMAXPROCS(0) }

// Options configure a Host.
type Options struct {
	// Concurrency bounds calls running at once; 0 means DefaultConcurrency.
	Concurrency int
	// QueueTimeout bounds how long a call waits for a slot before it is
	// answered "busy".
	QueueTimeout time.Duration
	Logger       *slog.Logger
	// Observer is told about every call; nil means observe.Nop.
	Observer observe.Observer
	// LogArguments adds each call's arguments to its log line. They may
	// hold whatever a user told the model, so they are left out unless an
	// operator asks.
	LogArguments bool
	// Policy grants tools files, environment, network and secrets; nil
	// grants nothing.
	Policy *policy.Policy
	// LookupEnv reads the server's environment for grants that pass a
	// variable on; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Prewarm keeps up to this many instances started ahead of their calls,
	// one per recently called tool (0: none). See prewarm.go.
	Prewarm int
}

// Host runs calls against a catalog, which Reload may replace while calls
// run.
type Host struct {
	engine       *sandbox.Engine
	catalog      atomic.Pointer[registry.Catalog]
	slots        chan struct{}
	queueTimeout time.Duration
	log          *slog.Logger
	observer     observe.Observer
	logArgs      bool
	policy       *policy.Policy
	lookupEnv    func(string) (string, bool)
	prewarm      *prewarm
	waiting      atomic.Int32 // calls waiting for a run slot

	reloadMu sync.Mutex // one reload at a time
	onChange []func(old, new *registry.Catalog)
}

// New returns a Host for the catalog's tools.
func New(engine *sandbox.Engine, cat *registry.Catalog, opts Options) *Host {
	n := opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	obs := opts.Observer
	if obs == nil {
		obs = observe.Nop{}
	}
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	h := &Host{engine: engine, slots: make(chan struct{}, n), queueTimeout: opts.QueueTimeout, log: log, observer: obs,
		logArgs: opts.LogArguments, policy: opts.Policy, lookupEnv: lookupEnv}
	h.prewarm = newPrewarm(h, opts.Prewarm)
	h.catalog.Store(cat)
	return h
}

// Close ends the instances prepared ahead of calls. Call it before closing
// the engine.
func (h *Host) Close() { h.prewarm.close() }

// Catalog returns the tools the host serves now.
func (h *Host) Catalog() *registry.Catalog { return h.catalog.Load() }

// OnChange registers f to be called after each reload that put a new
// catalog in service, with the catalog it replaced.
func (h *Host) OnChange(f func(old, new *registry.Catalog)) {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	h.onChange = append(h.onChange, f)
}

// Reload reads the tool directory again (see registry.Reload) and puts the
// result in service. Calls already running finish on the modules they
// started with; modules no longer served are freed when their last run
// ends.
func (h *Host) Reload(ctx context.Context, dir string, opts registry.Options) error {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	old := h.catalog.Load()
	cat, unused, err := registry.Reload(old, dir, opts)
	h.observer.Reloaded(err)
	if err != nil {
		return err
	}
	h.catalog.Store(cat)
	h.prewarm.forget(unused)
	registry.Retire(unused)
	h.observer.Loaded(len(cat.Modules), len(cat.Errors))
	h.warm(ctx, cat)
	for _, f := range h.onChange {
		f(old, cat)
	}
	return nil
}

// Warm compiles the catalog's modules in the background (registry.Warm),
// so that first calls rarely wait for the compiler, and then prepares
// instances ahead for as many tools as the prewarm budget allows (see
// prewarm.ahead), so that first calls do not pay a guest's start-up
// either. It returns at once, with a channel closed when it is done; it
// stops early when ctx ends. Reload warms the catalog it puts in service.
func (h *Host) Warm(ctx context.Context) <-chan struct{} { return h.warm(ctx, h.catalog.Load()) }

func (h *Host) warm(ctx context.Context, cat *registry.Catalog) <-chan struct{} {
	done := make(chan struct{})
	compiled := cat.Warm(ctx, h.log)
	go func() {
		defer close(done)
		start := time.Now()
		<-compiled
		prepared := h.prewarm.ahead(ctx, cat)
		if ctx.Err() == nil {
			h.log.Info("warm-up done", "modules", len(cat.Modules), "prepared", prepared, "duration", time.Since(start))
		}
	}()
	return done
}

// ErrUnknownTool is returned by Call for a name no module provides.
var ErrUnknownTool = errors.New("unknown tool")

// Call runs one tool call. args is the call's "arguments" JSON; empty or
// null means {}. rep, if not nil, receives the tool's log and progress
// reports; they also go to the server's log at debug level.
func (h *Host) Call(ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter) (*mcp.CallToolResult, error) {
	t, err := h.acquireTool(name)
	if err != nil {
		return nil, err
	}
	defer t.Module.Release()
	start := time.Now()
	h.observer.CallStarted(name)
	res, outcome := h.call(ctx, t, args, &serverLog{log: h.log, tool: name, next: rep})
	d := time.Since(start)
	h.observer.CallFinished(observe.Call{Tool: name, Outcome: outcome.kind, Duration: d, QueueWait: outcome.queued, PeakMemory: outcome.peak})
	h.logCall(name, outcome, d, args)
	return res, nil
}

// logCall writes a call's log line. Typed attributes, unlike key-value
// pairs, box nothing, so the line costs no allocation of its own whether or
// not the handler writes it. They live on the stack, in this frame rather
// than Call's, which stays under every run for the run's whole length.
func (h *Host) logCall(name string, o outcome, d time.Duration, args json.RawMessage) {
	attrs := append(make([]slog.Attr, 0, 5),
		slog.String("tool", name),
		slog.String("outcome", o.kind),
		slog.Duration("duration", d),
		slog.Int64("peak_memory", o.peak))
	if h.logArgs {
		attrs = append(attrs, slog.String("arguments", string(args)))
	}
	h.log.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}

// acquireTool finds a tool and holds its module for the call. A module
// freed by a reload between the lookup and the hold means its successor is
// in service: the lookup is simply repeated.
func (h *Host) acquireTool(name string) (*registry.Tool, error) {
	for {
		t, ok := h.catalog.Load().Lookup(name)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnknownTool, name)
		}
		if t.Module.Acquire() {
			return t, nil
		}
	}
}

// outcome is what the call log records.
type outcome struct {
	kind   string
	peak   int64
	queued time.Duration
}

func (h *Host) call(ctx context.Context, t *registry.Tool, args json.RawMessage, rep sandbox.Reporter) (*mcp.CallToolResult, outcome) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	// A module still compiling is waited for before a run slot is taken:
	// compiling has bounds and a concurrency of its own, and must not
	// keep other tools from running.
	prog, err := t.Module.Compiled(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return errorResult("the call was cancelled by the client"), outcome{kind: string(sandbox.Cancelled)}
		}
		return errorResult(fmt.Sprintf("%s cannot run: module %s failed to compile: %v", t.Spec.Name, t.Module.Stem, err)), outcome{kind: observe.CompileFailed}
	}

	queueStart := time.Now()
	release, err := h.acquire(ctx)
	queued := time.Since(queueStart)
	switch {
	case errors.Is(err, errCancelled):
		return errorResult(err.Error()), outcome{kind: string(sandbox.Cancelled), queued: queued}
	case err != nil:
		return errorResult(err.Error()), outcome{kind: observe.Busy, queued: queued}
	}
	// The slot passes to the preparation of the tool's next instance, if
	// any, so that the call's answer does not wait for it and preparing
	// stays within the concurrency bound.
	var next func()
	defer func() {
		if next == nil {
			release()
			return
		}
		go func() { next(); release() }()
	}()

	// Arguments are checked in the slot: a validation is bounded (see
	// schema.MaxWork), and so the bound on calls at once bounds how many
	// run together too.
	violations, err := t.Input.Validate(args)
	if err != nil {
		return errorResult(fmt.Sprintf("invalid arguments for %s: %v", t.Spec.Name, err)), outcome{kind: observe.InvalidArguments, queued: queued}
	}
	if len(violations) > 0 {
		return errorResult(violationText("invalid arguments for "+t.Spec.Name, violations)), outcome{kind: observe.InvalidArguments, queued: queued}
	}

	r, perm := h.runFor(t)
	if len(perm.Missing) > 0 {
		h.log.Warn("permissions not granted", "tool", t.Spec.Name, "missing", perm.Missing)
	}
	r.Stdin, r.Reporter = args, rep
	if len(perm.HTTP.Rules) > 0 {
		r.HTTP = egress.NewClient(perm.HTTP, egress.DefaultLimits(), net.DefaultResolver)
	}
	h.log.Debug("run started", "tool", t.Spec.Name)
	var run sandbox.Outcome
	if p := h.prewarm.take(t); p != nil {
		h.log.Debug("using a prepared instance", "tool", t.Spec.Name)
		run = p.Start(ctx, r.Stdin, r.Reporter, r.HTTP)
		t.Module.Release()
	} else {
		run = prog.Run(ctx, r)
	}
	// Only a tool that just ran cleanly gets an instance ahead: one that
	// failed or was cancelled may well fail again, and should not hold a
	// slot meanwhile.
	if run.Failure == nil && h.prewarm.wanted(t) {
		next = func() { h.prewarm.refill(t, prog, r) }
	}
	if len(run.Denials) > 0 {
		h.log.Warn("permission denied", "tool", t.Spec.Name, "denied", run.Denials)
	}
	if run.Failure != nil {
		if run.Failure.Cause != nil {
			// What the engine said is for the operator, never the model.
			h.log.Debug("run failed", "tool", t.Spec.Name, "kind", run.Failure.Kind, "cause", run.Failure.Cause)
		}
		return denied(errorResult(failureText(t.Spec.Name, run)), perm.Missing, run.Denials), outcome{kind: string(run.Failure.Kind), peak: run.PeakMemory, queued: queued}
	}
	res, err := Result(t, run.Stdout, h.log)
	if err != nil {
		return errorResult(fmt.Sprintf("%s returned an unusable result: %v", t.Spec.Name, err)), outcome{kind: observe.BadOutput, peak: run.PeakMemory, queued: queued}
	}
	kind := observe.OK
	if res.IsError {
		kind = observe.ToolError
		res = denied(res, perm.Missing, run.Denials)
	}
	return res, outcome{kind: kind, peak: run.PeakMemory, queued: queued}
}

// runFor is what a call of t is started with, bar its arguments, reporter
// and HTTP client: the same for every call of t while the policy stands, so
// an instance can be prepared with it ahead of the call.
func (h *Host) runFor(t *registry.Tool) (sandbox.Run, policy.Effective) {
	perm := h.policy.For(t.Module.Stem, t.Module.SHA256, t.Spec.Name, t.Module.Manifest.Permissions, h.lookupEnv)
	r := sandbox.Run{
		Args:   []string{t.Module.Stem, t.Spec.Name},
		Limits: t.Module.Limits,
		Env:    perm.Env,
	}
	for _, m := range perm.Mounts {
		r.Mounts = append(r.Mounts, sandbox.Mount{Host: m.Host, Guest: m.Guest, Write: m.Write})
	}
	return r, perm
}

// serverLog copies a tool's reports into the server's log, then passes them
// on. Reports are the tool's words, so they are logged at debug level with
// the tool's name, never mistaken for the server's own.
type serverLog struct {
	log  *slog.Logger
	tool string
	next sandbox.Reporter
}

func (s *serverLog) Log(level int32, msg string) {
	s.log.Debug("tool log", "tool", s.tool, "level", abi.LevelNames[level], "message", msg)
	if s.next != nil {
		s.next.Log(level, msg)
	}
}

func (s *serverLog) Progress(progress, total float64, msg string) {
	s.log.Debug("tool progress", "tool", s.tool, "progress", progress, "total", total, "message", msg)
	if s.next != nil {
		s.next.Progress(progress, total, msg)
	}
}

// tryAcquire takes a run slot if one is free.
func (h *Host) tryAcquire() (release func(), ok bool) {
	select {
	case h.slots <- struct{}{}:
		return h.releaseSlot, true
	default:
		return nil, false
	}
}

func (h *Host) releaseSlot() { <-h.slots }

// acquire waits for a run slot, at most the queue timeout.
func (h *Host) acquire(ctx context.Context) (release func(), err error) {
	if release, ok := h.tryAcquire(); ok {
		return release, nil
	}
	// Counted, so that the warm-up starts no preparation meanwhile.
	h.waiting.Add(1)
	defer h.waiting.Add(-1)
	timer := time.NewTimer(h.queueTimeout)
	defer timer.Stop()
	select {
	case h.slots <- struct{}{}:
		return h.releaseSlot, nil
	case <-timer.C:
		return nil, fmt.Errorf("the server is busy: all %d run slots stayed in use for %s; try again shortly", cap(h.slots), h.queueTimeout)
	case <-ctx.Done():
		return nil, errCancelled
	}
}

// errCancelled is a call cancelled while it waited for a run slot.
var errCancelled = errors.New("the call was cancelled by the client")

// denied adds to a failed call's result what permissions it lacked and how
// an operator grants them: the model can pass that on, where a bare
// "permission denied" would leave everyone guessing.
func denied(res *mcp.CallToolResult, missing, denials []string) *mcp.CallToolResult {
	if len(missing) == 0 && len(denials) == 0 {
		return res
	}
	var b strings.Builder
	b.WriteString("permissions this call lacked (the server's operator grants them in its policy file):")
	for _, d := range append(slices.Clone(denials), missing...) {
		b.WriteString("\n- ")
		b.WriteString(d)
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: b.String()})
	return res
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

func violationText(head string, vs []schema.Violation) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteString(":")
	for _, v := range vs {
		b.WriteString("\n- ")
		b.WriteString(v.String())
	}
	return b.String()
}

func failureText(tool string, run sandbox.Outcome) string {
	tail := tailText(run.Stderr, StderrTail)
	switch {
	case tail == "":
		return tool + " failed: " + run.Failure.Detail
	case run.Failure.Kind == sandbox.Exit:
		// A tool that exits non-zero has usually explained why on stderr;
		// that explanation leads.
		return fmt.Sprintf("%s failed (exit status %d): %s", tool, run.Failure.ExitCode, tail)
	}
	return tool + " failed: " + run.Failure.Detail + "\nstderr:\n" + tail
}

// tailText returns the last n bytes of b as trimmed, valid UTF-8.
func tailText(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
}
