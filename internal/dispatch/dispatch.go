// Package dispatch runs tool calls. A call finds its tool in the
// registry's catalog, waits for the tool's module to compile, takes a run
// slot, checks its arguments against the tool's inputSchema, runs the
// module in the sandbox (on an instance prepared ahead, when there is one)
// and turns what the module produced, or how it failed, into an MCP tool
// result. It also decides what is prepared ahead, and when: after a clean
// call, for the tool's next one, and after a start or a reload, for the
// largest modules no call has reached yet.
//
// Every failure of a tool is a result with isError set and a message meant
// for the model that made the call; Call returns a Go error only when the
// tool does not exist.
package dispatch

import (
	"cmp"
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
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/policy"
	"github.com/wasmcp/wasmcp/internal/prewarm"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/schema"
	"github.com/wasmcp/wasmcp/internal/slots"
)

// StderrTail is how much of a failed tool's stderr goes into the error text:
// enough for a message and a little context, not a log dump.
const StderrTail = 2048

// DefaultConcurrency is the default bound on calls running at once: each run
// is CPU-bound, so more than a couple per core only adds latency.
func DefaultConcurrency() int { return 2 * runtime.GOMAXPROCS(0) }

// Options configure a Dispatcher.
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
	// LookupEnv reads the server's environment for grants that pass a
	// variable on; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Prewarm keeps up to this many instances started ahead of their calls
	// (0: none), holding together at most the memory that Concurrency
	// calls may: so preparing ahead never holds more than the calls
	// themselves. See package prewarm.
	Prewarm int
}

// Dispatcher runs calls on the tools of a registry's catalog in service.
type Dispatcher struct {
	reg       *registry.Registry
	slots     *slots.Slots
	pool      *prewarm.Pool
	log       *slog.Logger
	observer  observe.Observer
	logArgs   bool
	lookupEnv func(string) (string, bool)
	budget    int // of instances prepared ahead

	// life ends when the dispatcher closes: the warm-ups it starts after
	// reloads run on it.
	life    context.Context
	end     context.CancelFunc
	warming sync.WaitGroup
}

// New returns a Dispatcher for the registry's tools. It follows the
// registry's reloads: the instances prepared for modules a reload retired
// (all of them, when the policy changed) are discarded, and the new
// catalog is warmed.
func New(reg *registry.Registry, opts Options) *Dispatcher {
	n := opts.Concurrency
	if n <= 0 {
		n = DefaultConcurrency()
	}
	d := &Dispatcher{reg: reg, slots: slots.New(n, opts.QueueTimeout), log: opts.Logger, observer: opts.Observer,
		logArgs: opts.LogArguments, lookupEnv: opts.LookupEnv, budget: opts.Prewarm}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.observer == nil {
		d.observer = observe.Nop{}
	}
	if d.lookupEnv == nil {
		d.lookupEnv = os.LookupEnv
	}
	d.pool = prewarm.New(opts.Prewarm, int64(n)*reg.Ceilings().Memory, d.log, func(t *registry.Tool) bool {
		served, ok := reg.Current().Lookup(t.Spec.Name)
		return ok && served == t
	})
	d.life, d.end = context.WithCancel(context.Background())
	reg.OnChange(d.changed)
	return d
}

func (d *Dispatcher) changed(c registry.Change) {
	if c.PolicyChanged() {
		d.pool.ForgetAll()
	} else {
		d.pool.Forget(c.Unused)
	}
	d.warm(c.New)
}

// Close stops warming and ends the instances prepared ahead of calls. Call
// it before closing the engine.
func (d *Dispatcher) Close() {
	d.end()
	d.warming.Wait()
	d.pool.Close()
}

// Warm compiles the catalog in service in the background (Catalog.Warm),
// so that first calls rarely wait for the compiler, then prepares
// instances ahead for as many of its tools as the prewarm budget allows
// (ahead), so that first calls do not pay a guest's start-up either. It
// returns at once, with a channel closed when it is done. A reload warms
// the catalog it puts in service on its own.
func (d *Dispatcher) Warm() <-chan struct{} { return d.warm(d.reg.Current()) }

func (d *Dispatcher) warm(cat *registry.Catalog) <-chan struct{} {
	done := make(chan struct{})
	compiled := cat.Warm(d.life, d.log)
	d.warming.Add(1)
	go func() {
		defer d.warming.Done()
		defer close(done)
		start := time.Now()
		<-compiled
		prepared := d.ahead(d.life, cat)
		if d.life.Err() == nil {
			d.log.Info("warm-up done", "modules", len(cat.Modules), "prepared", prepared, "duration", time.Since(start))
		}
	}()
	return done
}

// ahead prepares instances for tools no call has prepared yet, once the
// warm-up has compiled cat, so that the first call after a start or a
// reload finds one too. It tries at most as many tools as the budget
// holds, fills only the room left in it, and never takes an instance from
// a tool a call has prepared. Its order is the largest module first,
// because a module's size is a fair guide to what its start-up costs: a
// Go guest, which starts a runtime in every instance, is megabytes; a C,
// Rust or WAT guest, which starts in microseconds, is kilobytes. Ties go by
// file, then tool name.
//
// Calls come first. Each preparation takes a run slot only while one is
// free and no call waits for one; otherwise the pass ends, and the calls
// that run prepare their own next instances. So a call waits for the
// warm-up at most one guest's start-up, as it may for a refill. A tool
// granted a writable directory is left for its first call: preparing runs
// the guest's start-up, and until a call comes no one has asked for
// anything to be written. (Nothing else a prepared guest does reaches
// outside it: its output is discarded and it has no HTTP client until its
// call.)
func (d *Dispatcher) ahead(ctx context.Context, cat *registry.Catalog) int {
	tools := slices.Clone(cat.Tools) // sorted by name
	slices.SortStableFunc(tools, func(a, b *registry.Tool) int {
		return cmp.Or(cmp.Compare(b.Module.Size, a.Module.Size), strings.Compare(a.Module.Path, b.Module.Path))
	})
	prepared, tried := 0, 0
	for _, t := range tools {
		if ctx.Err() != nil || !d.pool.Room() || tried == d.budget {
			break
		}
		if !d.pool.Wanted(t) {
			continue
		}
		prog, err := t.Module.Compiled(ctx)
		if err != nil {
			continue
		}
		r, _ := d.runFor(cat, t)
		if slices.ContainsFunc(r.Mounts, func(m sandbox.Mount) bool { return m.Write }) {
			continue
		}
		slot := d.slots.TryAcquire()
		if slot == nil {
			break
		}
		tried++
		d.log.Debug("preparing an instance ahead", "tool", t.Spec.Name)
		if d.pool.Prepare(t, prog, r, false) {
			prepared++
		}
		slot.Release()
	}
	return prepared
}

// refill prepares t's next instance, in the slot its call handed over,
// and releases the slot when done.
func (d *Dispatcher) refill(t *registry.Tool, prog *sandbox.Compiled, r sandbox.Run, slot *slots.Slot) {
	defer slot.Release()
	d.pool.Prepare(t, prog, r, true)
}

// ErrUnknownTool is returned by Call for a name no module provides.
var ErrUnknownTool = registry.ErrUnknownTool

// ErrInputRequired is returned by Call when the call's Asker ended the run
// with sandbox.ErrInputRequired: the Asker holds what to ask the client.
var ErrInputRequired = sandbox.ErrInputRequired

// Call runs one tool call. args is the call's "arguments" JSON; empty or
// null means {}. rep, if not nil, receives the tool's log and progress
// reports, from a goroutine of their own (see notifier): it may block
// without holding up the tool, which never waits for a client. Call
// returns once those reports are delivered, or dropped after notifyGrace.
// They also go to the server's log at debug level. ask, if not nil, sends
// the tool's asks of the client; nil refuses them.
func (d *Dispatcher) Call(ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter, ask sandbox.Asker) (*mcp.CallToolResult, error) {
	var res *mcp.CallToolResult
	var err error
	d.CallThen(ctx, name, args, rep, ask, func(r *mcp.CallToolResult, e error) { res, err = r, e })
	return res, err
}

// CallThen is Call, which hands what Call returns to answer, and writes
// the call's log line only once answer returns: a caller that writes its
// answer in answer does not keep it waiting for the log's write, a sixth
// of a small call's round trip over stdio when stderr is a file. The
// call is counted (Observer.CallFinished) before answer, so that what a
// client reads of the server's metrics after its answer has its call.
func (d *Dispatcher) CallThen(ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter, ask sandbox.Asker, answer func(*mcp.CallToolResult, error)) {
	cat, t, err := d.reg.Acquire(name)
	if err != nil {
		answer(nil, err)
		return
	}
	defer t.Module.Release()
	start := time.Now()
	d.observer.CallStarted(name)
	var n *notifier
	if rep != nil {
		n = newNotifier(rep)
		rep = n
	}
	res, outcome := d.call(ctx, cat, t, args, &serverLog{log: d.log, tool: name, next: rep}, ask)
	if n != nil {
		// The run slot is free by now: only this call's answer waits.
		// Progress reports left out are the usual course with a tool
		// that reports faster than a client reads; log messages are not.
		logs, progress := n.finish(notifyGrace)
		level := slog.LevelDebug
		if logs > 0 {
			level = slog.LevelWarn
		}
		if logs+progress > 0 {
			d.log.Log(context.Background(), level, "notifications dropped: the client took them more slowly than the tool sent them", "tool", name, "logs", logs, "progress", progress)
		}
	}
	dur := time.Since(start)
	d.observer.CallFinished(observe.Call{Tool: name, Outcome: outcome.kind, Duration: dur, QueueWait: outcome.queued, PeakMemory: outcome.peak})
	if outcome.kind == string(sandbox.InputRequired) {
		answer(nil, ErrInputRequired)
	} else {
		answer(res, nil)
	}
	d.logCall(name, outcome, dur, args)
}

// logCall writes a call's log line. Typed attributes, unlike key-value
// pairs, box nothing, so the line costs no allocation of its own whether or
// not the handler writes it. They live on the stack, in this frame rather
// than Call's, which stays under every run for the run's whole length.
func (d *Dispatcher) logCall(name string, o outcome, dur time.Duration, args json.RawMessage) {
	attrs := append(make([]slog.Attr, 0, 5),
		slog.String("tool", name),
		slog.String("outcome", o.kind),
		slog.Duration("duration", dur),
		slog.Int64("peak_memory", o.peak))
	if d.logArgs {
		attrs = append(attrs, slog.String("arguments", string(args)))
	}
	d.log.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}

// outcome is what the call log records.
type outcome struct {
	kind   string
	peak   int64
	queued time.Duration
}

func (d *Dispatcher) call(ctx context.Context, cat *registry.Catalog, t *registry.Tool, args json.RawMessage, rep sandbox.Reporter, ask sandbox.Asker) (*mcp.CallToolResult, outcome) {
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
	slot, err := d.slots.Acquire(ctx)
	queued := time.Since(queueStart)
	switch {
	case errors.Is(err, slots.ErrCancelled):
		return errorResult(err.Error()), outcome{kind: string(sandbox.Cancelled), queued: queued}
	case err != nil:
		return errorResult(err.Error()), outcome{kind: observe.Busy, queued: queued}
	}
	// The call holds the slot until it returns, unless it hands the slot
	// to the preparation of the tool's next instance (refill), which
	// releases it when done: so the answer does not wait for that, and
	// preparing stays within the bound on runs.
	defer func() {
		if slot != nil {
			slot.Release()
		}
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

	r, perm := d.runFor(cat, t)
	// A manifest may ask for a great deal: what it lacks is reported as
	// boundedly as a run's denials are.
	var missing sandbox.Denials
	for _, m := range perm.Missing {
		missing.Add(m)
	}
	if !missing.Empty() {
		d.log.Warn("permissions not granted", "tool", t.Spec.Name, "missing", missing.Kept, "more", missing.More)
	}
	r.Stdin, r.Reporter, r.Asker = args, rep, ask
	if len(perm.HTTP.Rules) > 0 {
		r.HTTP = egress.NewClient(perm.HTTP, egress.DefaultLimits(), net.DefaultResolver)
	}
	d.log.Debug("run started", "tool", t.Spec.Name)
	var run sandbox.Outcome
	if p := d.pool.Await(ctx, t); p != nil {
		d.log.Debug("using a prepared instance", "tool", t.Spec.Name)
		run = p.Start(ctx, r)
		t.Module.Release()
	} else {
		run = prog.Run(ctx, r)
	}
	// Only a tool that just ran cleanly gets an instance ahead: one that
	// failed or was cancelled may well fail again, and should not hold a
	// slot meanwhile.
	if run.Failure == nil && d.pool.Wanted(t) {
		go d.refill(t, prog, r, slot)
		slot = nil
	}
	if !run.Denials.Empty() {
		d.log.Warn("permission denied", "tool", t.Spec.Name, "denied", run.Denials.Kept, "more", run.Denials.More)
	}
	if run.Failure != nil {
		if run.Failure.Cause != nil {
			// What the engine said is for the operator, never the model.
			d.log.Debug("run failed", "tool", t.Spec.Name, "kind", run.Failure.Kind, "cause", run.Failure.Cause)
		}
		return denied(errorResult(failureText(t.Spec.Name, run)), missing, run.Denials), outcome{kind: string(run.Failure.Kind), peak: run.PeakMemory, queued: queued}
	}
	res, err := Result(t, run.Stdout, d.log)
	if err != nil {
		return errorResult(fmt.Sprintf("%s returned an unusable result: %v", t.Spec.Name, err)), outcome{kind: observe.BadOutput, peak: run.PeakMemory, queued: queued}
	}
	// The output limit bounds the answer as the SDK will encode it too:
	// encoding multiplies it, six times for control characters, and the
	// SDK holds it, and copies of it, until it is sent.
	size, err := encodedSize(res)
	switch {
	case err != nil:
		return errorResult(fmt.Sprintf("%s returned an unusable result: %v", t.Spec.Name, err)), outcome{kind: observe.BadOutput, peak: run.PeakMemory, queued: queued}
	case int64(size) > t.Module.Limits.Output:
		return errorResult(answerTooLong(t.Spec.Name, size, t.Module.Limits.Output)), outcome{kind: string(sandbox.OutputLimit), peak: run.PeakMemory, queued: queued}
	}
	kind := observe.OK
	if res.IsError {
		kind = observe.ToolError
		res = denied(res, missing, run.Denials)
	}
	return res, outcome{kind: kind, peak: run.PeakMemory, queued: queued}
}

// runFor is what a call of t is started with, bar its arguments, reporter
// and HTTP client: the same for every call of t while the policy stands, so
// an instance can be prepared with it ahead of the call.
func (d *Dispatcher) runFor(cat *registry.Catalog, t *registry.Tool) (sandbox.Run, policy.Effective) {
	perm := cat.Policy.For(t.Module.Stem, t.Module.SHA256, t.Spec.Name, t.Module.Manifest.Permissions, d.lookupEnv)
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

// denied adds to a failed call's result what permissions it lacked and how
// an operator grants them: the model can pass that on, where a bare
// "permission denied" would leave everyone guessing. What the run was
// denied comes first, then what the manifest asks for and the policy does
// not grant.
func denied(res *mcp.CallToolResult, missing, denials sandbox.Denials) *mcp.CallToolResult {
	if denials.Empty() && missing.Empty() {
		return res
	}
	var b strings.Builder
	b.WriteString("permissions this call lacked (the server's operator grants them in its policy file):")
	for _, d := range append(slices.Clone(denials.Kept), missing.Kept...) {
		b.WriteString("\n- ")
		b.WriteString(d)
	}
	if more := denials.More + missing.More; more > 0 {
		fmt.Fprintf(&b, "\n- and %d more", more)
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: b.String()})
	return res
}

// answerTooLong says why an answer over the output limit was not sent.
func answerTooLong(tool string, size int, limit int64) string {
	return fmt.Sprintf("%s's answer would be %d bytes once encoded as JSON for the client, over the tool's output limit of %s, which bounds the answer as sent as well as what the tool writes: "+
		"in the answer a control character, <, > or & takes 6 bytes, a quote, a backslash or a line break 2, and in json mode the object comes twice (as structuredContent and as text). "+
		"Have the tool write less, or ask the server's operator for a higher output limit (--output, or limits.output in the tool's manifest)", tool, size, abi.Size(limit))
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
