// Package host serves tools compiled to WebAssembly over the Model Context
// Protocol. It is wasmcp's one entry point: a Server is made from one
// Config, serves MCP clients over stdio (ServeStdio) or Streamable HTTP
// (Handler), reloads its tool directory and policy, and when closed
// releases everything it made, in order. The contract with the tools
// themselves (manifests, host functions) is package abi.
//
// A program that embeds wasmcp and wants each module compiled in a bounded
// worker process (Config.Worker) must let itself be that worker: see
// RunWorker.
package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/dispatch"
	"github.com/wasmcp/wasmcp/internal/mcpserver"
	"github.com/wasmcp/wasmcp/internal/metrics"
	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/watch"
)

// Path is where Handler expects to be mounted.
const Path = mcpserver.Path

// Config configures a Server. Its zero value serves the directory "tools"
// with the defaults each field names.
type Config struct {
	// Tools is the directory of .wasm modules, each with its manifest
	// (default "tools"). Only the directory itself is read, not its
	// subdirectories.
	Tools string
	// Policy is the file that grants tools files, environment, network
	// and secrets; "" grants nothing.
	Policy string
	// Limits are the ceilings on one call; a manifest may ask for less.
	// A zero field takes DefaultLimits'.
	Limits Limits
	// Concurrency bounds the calls that run at once (default 2 × the
	// processors Go uses).
	Concurrency int
	// QueueTimeout bounds how long a call waits for a free slot before it
	// is answered "busy" (default 5 s; negative: it does not wait).
	QueueTimeout time.Duration
	// Prewarm is how many instances may be started ahead of their calls
	// (0: none). Every call still gets a fresh instance. Together they
	// hold at most Concurrency × Limits.Memory (what their guests'
	// start-ups took), each until a call takes it or for a minute at most.
	Prewarm int
	// Engine names the WebAssembly engine (default wazero; Engines lists
	// what this build has).
	Engine string
	// CacheDir keeps compiled code on disk, so that a restart does not
	// compile again, and the modules that passed a compile limit, so that
	// a restart refuses them at once; "" keeps both in memory only. It
	// holds executable code: only the server's user may write to it.
	CacheDir string
	// Compile bounds the compilation of each module. A zero field takes
	// DefaultCompileLimits'.
	Compile CompileLimits
	// SnapshotMemory bounds the memory the reactors' snapshots hold
	// together (their pages that are not all zeroes; default
	// DefaultSnapshotMemory): a reactor whose snapshot would pass it runs
	// its whole start-up in every call instead.
	SnapshotMemory int64
	// Worker, when set, compiles each module in a process of its own,
	// which is what bounds its memory (see RunWorker); nil compiles in
	// this process.
	Worker *Worker
	// Watch reloads when a file in Tools, or the Policy file, changes, and
	// tells clients that the tools changed.
	Watch bool
	// Sources, when set, gives the directories that tool sources fill (an
	// OCI reference's tool, pulled), read after Tools at each load. They
	// are not watched: whoever fills them calls Reload, and clients are
	// told when the tools change.
	Sources func() []Source
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// LogArguments adds each call's arguments to its log line. They may
	// hold whatever a user told the model, so they are left out unless an
	// operator asks.
	LogArguments bool
	// Metrics keeps Prometheus metrics of calls, compilations and loads,
	// served by MetricsHandler.
	Metrics bool
	// RecentCalls is how many finished calls RecentCalls keeps, the last
	// ones (0: none). Each is a few words: its tool, outcome and times,
	// never its arguments or results.
	RecentCalls int
	// Version is the server's version in its serverInfo.
	Version string
	// RequestBudget bounds the bytes of request bodies the server holds at
	// once, over every transport (default DefaultRequestBudget; at least
	// MaxMessageSize).
	// Over HTTP, a request that would pass it is refused, busy, before its
	// body is read; over stdio, no more input is read until answers give
	// some of it back.
	RequestBudget int64
	// RequestStateKey signs the requestState of 2026-07-28 calls whose
	// tools ask the client (an InputRequiredResult's, which the client
	// sends back with its answers), so that a tampered or forged one is
	// refused: at least MinRequestStateKey bytes, the same on every
	// replica that serves the same clients. Empty: a random key made at
	// start, which holds only for one process, and only until it exits.
	RequestStateKey []byte
	// HTTP configures Handler.
	HTTP HTTPConfig
	// Tasks bound the tool calls run as MCP tasks.
	Tasks TaskConfig
	// ShutdownGrace bounds how long, once ServeStdio's context ends,
	// calls in flight may finish before they are cancelled (default 10
	// s; negative: none).
	ShutdownGrace time.Duration
}

// TaskConfig bounds the tool calls run as MCP 2025-11-25 tasks. Zero
// fields take the defaults noted.
type TaskConfig struct {
	// PerSession bounds the tasks one session holds, running or finished
	// and kept (default 64).
	PerSession int
	// Total bounds the tasks all sessions hold together (default 1024).
	Total int
	// MaxTTL bounds how long a task is kept from its creation, whatever
	// its client asks (default an hour); a task still running then is
	// cancelled.
	MaxTTL time.Duration
	// ResultBytes bounds the results finished tasks keep, together
	// (default DefaultTaskResultBytes); past it, the oldest finished tasks
	// give way.
	ResultBytes int64
}

// Limits bound one call.
type Limits struct {
	Timeout time.Duration // of its run
	Memory  int64         // bytes of memory: linear memory, tables, globals
	Output  int64         // bytes of stdout, and separately of stderr, and of the answer JSON-encoded
}

// DefaultSnapshotMemory is what a zero Config.SnapshotMemory stands for.
const DefaultSnapshotMemory = sandbox.DefaultSnapshotMemory

// DefaultLimits are the ceilings a zero Limits field stands for.
var DefaultLimits = Limits{Timeout: 10 * time.Second, Memory: 64 << 20, Output: 1 << 20}

// CompileLimits bound the compilation of one module.
type CompileLimits struct {
	// Timeout bounds how long it may take; a module that takes longer is
	// refused.
	Timeout time.Duration
	// Memory bounds what it may hold, with MemoryPerByte bytes more for
	// every byte of the module; it holds only with a Worker, on Linux.
	Memory int64
	// Concurrency bounds how many modules compile at once, each within
	// Memory; a module whose code is in the cache loads in one more slot,
	// of its own. Compiling never takes a call's run slot, and a call's
	// module compiles before those Warm compiles ahead.
	Concurrency int
}

// MemoryPerByte is what CompileLimits.Memory grows by for every byte of the
// module being compiled.
const MemoryPerByte = sandbox.MemoryPerByte

// DefaultCompileLimits are the limits a zero CompileLimits field stands for.
func DefaultCompileLimits() CompileLimits {
	d := sandbox.DefaultCompileLimits()
	return CompileLimits{Timeout: d.Timeout, Memory: d.Memory, Concurrency: d.Concurrency}
}

// Worker is how to start a compile worker: a process that calls RunWorker
// with the arguments after Args. A program that is its own worker should
// give /proc/self/exe as Path where the system has it, as wasmcp does: an
// upgrade in place leaves the path it was started from naming no file, or
// another version.
type Worker struct {
	Path string
	Args []string
}

// RunWorker is the body of a compile worker: it compiles the module on
// stdin, as the server that started it asked in args, and returns the
// process's exit status. A program whose Config names it as its own
// Worker calls it, before anything else, when started with those
// arguments:
//
//	if len(os.Args) > 1 && os.Args[1] == "compile-worker" {
//		os.Exit(host.RunWorker(os.Args[2:], os.Stdin, os.Stderr))
//	}
func RunWorker(args []string, stdin io.Reader, stderr io.Writer) int {
	return sandbox.RunWorker(args, stdin, stderr)
}

// HTTPConfig configures Handler. Zero fields take the defaults noted.
type HTTPConfig struct {
	// AuthToken, when set, must come with every request as
	// "Authorization: Bearer <token>".
	AuthToken string
	// MaxSessions bounds live 2025-11-25 sessions (default 1024). At the
	// cap, a new session closes the one idle longest; only while every
	// session has a request in progress or a stream open is it refused.
	MaxSessions int
	// SessionIdleTimeout closes a session idle this long (default 10 min).
	SessionIdleTimeout time.Duration
	// BodyTimeout bounds how long a client may take to send a request's
	// body (default 30 s).
	BodyTimeout time.Duration
	// MaxStreams bounds the long-lived streams open at once: sessions' GET
	// streams and subscriptions/listen (default 512). Each holds its
	// connection, so keep it well below the connections the listener
	// accepts; the CLI makes it half of them.
	MaxStreams int
	// WriteStallTimeout bounds how long one write of an answer may wait
	// for the client to read it (default 30 s); past it, the connection is
	// closed and the request's resources go back.
	WriteStallTimeout time.Duration
	// EventStoreSize bounds the bytes of 2025-11-25 stream events kept for
	// clients that resume a stream with Last-Event-ID (default 16 MiB, for
	// every session together).
	EventStoreSize int64
	// PollInterval, when set, ends a 2025-11-25 session's response stream
	// each time its request has run this long; the client resumes it with
	// Last-Event-ID (SSE polling). Zero keeps streams open until their
	// answers.
	PollInterval time.Duration
	// ReplicaID names this server among replicas behind one load balancer:
	// it begins every session id, before a dot, so that the balancer can
	// send a session's requests to the replica that holds the session
	// (deploy/nginx). Letters, digits and hyphens, at most 63 (a pod name fits); empty for
	// a server on its own.
	ReplicaID string
}

// validReplicaID matches what HTTPConfig.ReplicaID may be: what a load
// balancer's pattern takes apart from the random rest without escaping.
var validReplicaID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,62}$`)

// Engines lists the WebAssembly engines this build can run, the default
// first.
func Engines() []string { return sandbox.Engines() }

// ErrUnknownTool is the error of Call for a name no module provides.
var ErrUnknownTool = registry.ErrUnknownTool

// MinRequestStateKey is the shortest Config.RequestStateKey.
const MinRequestStateKey = mcpserver.MinStateKey

// Server serves the tools of one directory.
type Server struct {
	cfg      Config
	log      *slog.Logger
	engine   *sandbox.Engine
	registry *registry.Registry
	calls    *dispatch.Dispatcher
	mcp      *mcpserver.Server
	metrics  *metrics.Metrics
	recent   *observe.Recent

	stopWatch context.CancelFunc
	watching  sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// New loads the tool directory and the policy and returns a server ready
// to serve them. It fails when the directory cannot be read, the policy
// does not load, or the engine cannot start; a module that does not load
// is logged and shown in Status, never fatal. Compiling is left to each
// module's first call, or to Warm.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if id := cfg.HTTP.ReplicaID; id != "" && !validReplicaID.MatchString(id) {
		return nil, fmt.Errorf("the replica id %q is not 1 to 63 letters, digits and hyphens, starting with a letter or digit", id)
	}
	if n := len(cfg.RequestStateKey); n > 0 && n < MinRequestStateKey {
		return nil, fmt.Errorf("the requestState key has %d bytes; it needs at least %d (32 random bytes, say)", n, MinRequestStateKey)
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	var metricsObs, recentObs observe.Observer
	if cfg.Metrics {
		s.metrics = metrics.New()
		metricsObs = s.metrics
	}
	if cfg.RecentCalls > 0 {
		s.recent = observe.NewRecent(cfg.RecentCalls)
		recentObs = s.recent
	}
	obs := observe.Tee(metricsObs, recentObs)
	engine, err := sandbox.NewEngine(ctx, sandbox.Config{
		Engine:         cfg.Engine,
		CacheDir:       cfg.CacheDir,
		Compile:        sandbox.CompileLimits{Timeout: cfg.Compile.Timeout, Memory: cfg.Compile.Memory, Concurrency: cfg.Compile.Concurrency},
		Worker:         (*sandbox.Worker)(cfg.Worker),
		Logger:         cfg.Logger,
		SnapshotMemory: cfg.SnapshotMemory,
	})
	if err != nil {
		return nil, err
	}
	s.engine = engine
	s.registry, err = registry.Open(registry.Options{
		Dir:        cfg.Tools,
		PolicyFile: cfg.Policy,
		Sources:    cfg.registrySources(),
		LoadOptions: registry.LoadOptions{
			Engine:   engine,
			Ceilings: sandbox.Limits(cfg.Limits),
			Logger:   cfg.Logger,
			Observer: obs,
		},
	})
	if err != nil {
		engine.Close(ctx)
		return nil, err
	}
	s.calls = dispatch.New(s.registry, dispatch.Options{
		Concurrency: cfg.Concurrency, QueueTimeout: max(cfg.QueueTimeout, 0), Logger: cfg.Logger,
		Observer: obs, LogArguments: cfg.LogArguments, Prewarm: cfg.Prewarm,
	})
	s.mcp = mcpserver.New(s.registry, s.calls, mcpserver.Options{
		Version: cfg.Version, Logger: cfg.Logger, ListChanged: cfg.Watch || cfg.Sources != nil, RequestBudget: cfg.RequestBudget,
		PollInterval: cfg.HTTP.PollInterval, RequestStateKey: cfg.RequestStateKey, ReplicaID: cfg.HTTP.ReplicaID,
		Tasks: mcpserver.TaskOptions(cfg.Tasks),
	})
	if cfg.Watch {
		if err := s.watch(); err != nil {
			s.Close(ctx)
			return nil, err
		}
	}
	return s, nil
}

// Source is a directory of modules that a tool source fills, and why the
// source could not be brought up to date, if it could not.
type Source struct {
	// Name names the source in Status and errors: its reference.
	Name string
	// Dir is the directory, "" while the source has none.
	Dir string
	// Digest is what the source serves: the digest of its manifest.
	Digest string
	// Err, when not nil, is shown in Status under Name.
	Err error
}

func (c Config) registrySources() func() []registry.Source {
	if c.Sources == nil {
		return nil
	}
	return func() []registry.Source {
		in := c.Sources()
		out := make([]registry.Source, len(in))
		for i, s := range in {
			out[i] = registry.Source{Name: s.Name, Dir: s.Dir, Err: s.Err}
		}
		return out
	}
}

func (c Config) withDefaults() Config {
	if c.Tools == "" {
		c.Tools = "tools"
	}
	if c.Limits.Timeout <= 0 {
		c.Limits.Timeout = DefaultLimits.Timeout
	}
	if c.Limits.Memory <= 0 {
		c.Limits.Memory = DefaultLimits.Memory
	}
	if c.Limits.Output <= 0 {
		c.Limits.Output = DefaultLimits.Output
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 2 * runtime.GOMAXPROCS(0)
	}
	if c.QueueTimeout == 0 {
		c.QueueTimeout = 5 * time.Second
	}
	d := DefaultCompileLimits()
	if c.Compile.Timeout <= 0 {
		c.Compile.Timeout = d.Timeout
	}
	if c.Compile.Memory <= 0 {
		c.Compile.Memory = d.Memory
	}
	if c.Compile.Concurrency <= 0 {
		c.Compile.Concurrency = d.Concurrency
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.ShutdownGrace == 0 {
		c.ShutdownGrace = 10 * time.Second
	}
	return c
}

// watch reloads on changes to the tool directory, until Close.
func (s *Server) watch() error {
	ctx, stop := context.WithCancel(context.Background())
	s.stopWatch = stop
	// The policy file is watched too, so that a grant approved while the
	// server runs takes effect at once.
	var files []string
	if s.cfg.Policy != "" {
		files = []string{s.cfg.Policy}
	}
	reload := func([]string) {
		if err := s.Reload(); err != nil {
			s.log.Error("reloading the tool directory", "error", err)
			return
		}
		c := s.registry.Current()
		s.log.Info("tools reloaded", "tools", len(c.Tools), "modules", len(c.Modules), "skipped", len(c.Errors))
	}
	return watch.Dir(ctx, s.cfg.Tools, files, watch.DefaultQuiet, s.log, reload)
}

// Warm compiles every module in the background, smallest first, then
// starts instances ahead of calls for the largest tools, within Prewarm,
// so that first calls wait for neither. It returns at once, with a
// channel closed when it is done. Reloads warm what they load on their
// own.
func (s *Server) Warm() <-chan struct{} { return s.calls.Warm() }

// Reload reads the tool directory and the policy file again and puts the
// result in service. Calls already running finish on the modules they
// started with; a module whose update does not load, and a policy that
// does not load, keep their previous versions serving (Status says why).
// It fails, changing nothing, only when the directory cannot be read.
func (s *Server) Reload() error { return s.registry.Reload() }

// ServeStdio serves one client over newline-delimited JSON-RPC on in and
// out until in ends or ctx ends. When in ends, requests already read are
// still answered; when ctx ends, calls in flight get ShutdownGrace to
// finish.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.mcp.ServeStdio(ctx, in, out, mcpserver.StdioOptions{
		DrainTimeout:  s.cfg.Limits.Timeout + max(s.cfg.QueueTimeout, 0) + 5*time.Second,
		ShutdownGrace: max(s.cfg.ShutdownGrace, 0),
		Logger:        s.log,
	})
}

// Handler serves MCP over Streamable HTTP, for clients of both protocol
// eras (2025-11-25 sessions and stateless 2026-07-28); mount it at Path.
func (s *Server) Handler() http.Handler {
	return s.mcp.HTTPHandler(mcpserver.HTTPOptions{
		Logger:             s.log,
		AuthToken:          s.cfg.HTTP.AuthToken,
		MaxSessions:        s.cfg.HTTP.MaxSessions,
		SessionIdleTimeout: s.cfg.HTTP.SessionIdleTimeout,
		BodyTimeout:        s.cfg.HTTP.BodyTimeout,
		MaxStreams:         s.cfg.HTTP.MaxStreams,
		WriteStallTimeout:  s.cfg.HTTP.WriteStallTimeout,
		EventStoreSize:     s.cfg.HTTP.EventStoreSize,
	})
}

// MetricsHandler serves the server's metrics in the Prometheus exposition
// format, or is nil without Config.Metrics. It names the tools, so it
// belongs behind the same access control as they do.
func (s *Server) MetricsHandler() http.Handler {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.Handler()
}

// FinishedCall is a call RecentCalls reports.
type FinishedCall struct {
	Tool string
	// Outcome is "ok", or what went wrong: "tool_error" (the tool
	// answered isError itself), "invalid_arguments", "busy", "timeout",
	// "memory", "trap" and the others /metrics counts.
	Outcome string
	// End is when it ended; Duration is the whole call, QueueWait the
	// part of it spent waiting for a run slot.
	End       time.Time
	Duration  time.Duration
	QueueWait time.Duration
	// PeakMemory is the largest linear memory of its run, in bytes; 0 when
	// no module ran.
	PeakMemory int64
}

// RecentCalls returns the last calls finished, oldest first, at most
// Config.RecentCalls of them.
func (s *Server) RecentCalls() []FinishedCall {
	if s.recent == nil {
		return nil
	}
	kept := s.recent.Calls()
	out := make([]FinishedCall, len(kept))
	for i, c := range kept {
		out[i] = FinishedCall{Tool: c.Tool, Outcome: c.Outcome, End: c.End, Duration: c.Duration, QueueWait: c.QueueWait, PeakMemory: c.PeakMemory}
	}
	return out
}

// Reporter receives what a tool reports while it runs: its log messages
// (level is an abi.Level) and its progress, strictly increasing (total is
// NaN when unknown).
type Reporter interface {
	Log(level int32, msg string)
	Progress(progress, total float64, msg string)
}

// Call runs one call of a tool, as tools/call would, with args its
// arguments (empty means {}); rep, if not nil, receives its reports. Every
// failure of the tool is a result with IsError; the error is for a tool
// that does not exist (ErrUnknownTool). No client is there to ask: the
// tool's asks get code 7 (denied).
func (s *Server) Call(ctx context.Context, tool string, args json.RawMessage, rep Reporter) (*mcp.CallToolResult, error) {
	return s.calls.Call(ctx, tool, args, rep, nil)
}

// Close stops watching, ends the instances started ahead of calls and the
// compilations in progress, and releases the engine, in that order. ctx
// bounds the wait for a compilation that cannot be stopped.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.stopWatch != nil {
			s.stopWatch()
		}
		s.calls.Close()
		s.closeErr = s.engine.Close(ctx)
	})
	return s.closeErr
}

// Status describes what the server serves: every tool, every module, and
// every file that did not load, and why.
func (s *Server) Status() Status {
	st := newStatus(s.registry.Current(), nil)
	if s.cfg.Sources != nil {
		for _, src := range s.cfg.Sources() {
			ss := SourceStatus{Ref: src.Name, Digest: src.Digest, Dir: src.Dir}
			if src.Err != nil {
				ss.Error = src.Err.Error()
			}
			st.Sources = append(st.Sources, ss)
		}
	}
	return st
}

// Examples returns the examples a tool's manifest declares, and whether
// the tool is served.
func (s *Server) Examples(tool string) ([]abi.Example, bool) {
	t, ok := s.registry.Current().Lookup(tool)
	if !ok {
		return nil, false
	}
	return t.Spec.Examples, true
}

// CompileAll compiles every module, within the compile limits, and
// returns the Status with each tool's compile result and each failure
// among the errors. ctx bounds the wait.
func (s *Server) CompileAll(ctx context.Context) Status {
	cat := s.registry.Current()
	results := make(map[string]error, len(cat.Modules))
	for _, m := range cat.Modules {
		_, results[m.Path] = m.Compiled(ctx)
	}
	return newStatus(cat, results)
}

// MaxMessageSize bounds one message a client sends, on either transport.
const MaxMessageSize = mcpserver.MaxMessageSize

// DefaultTaskResultBytes is what TaskConfig.ResultBytes is when zero.
const DefaultTaskResultBytes = mcpserver.DefaultTaskResultBytes

// DefaultRequestBudget is the request budget a zero Config.RequestBudget
// stands for: 8 requests of MaxMessageSize.
const DefaultRequestBudget = mcpserver.DefaultRequestBudget

// RequireBearer admits only requests that carry the token, compared in
// constant time; an empty token admits all. Handler applies it with
// HTTPConfig.AuthToken; it is here for endpoints served beside it.
func RequireBearer(token string, next http.Handler) http.Handler {
	return mcpserver.RequireBearer(token, next)
}
