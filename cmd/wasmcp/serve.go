package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/statuspage"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	addr := fs.String("http", "", "serve Streamable HTTP at `ADDR` (path "+host.Path+") instead of stdio; a bare :PORT binds loopback only")
	watchDir := fs.Bool("watch", true, "reload the tool directory when its files change, and tell clients")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "on SIGTERM or SIGINT, how long calls in flight may finish before they are cancelled")
	budget := abi.Size(host.DefaultRequestBudget)
	fs.Var(&budget, "request-budget", "bytes of request bodies held at once, over all clients; past it, an HTTP request is refused busy before its body is read, and stdio input waits (at least 4MiB)")
	stateKeyFile := fs.String("request-state-key-file", "", "sign the requestState of 2026-07-28 calls whose tools ask the client with the key in `FILE` (at least 32 bytes; the same file on every replica); none: a random key per process, which holds only with one replica")
	var tasks host.TaskConfig
	fs.IntVar(&tasks.PerSession, "max-tasks-per-session", 64, "tool calls run as tasks that one session holds, running or kept; past it, a new task is refused")
	fs.IntVar(&tasks.Total, "max-tasks", 1024, "tool calls run as tasks that all sessions hold together; past it, a new task is refused")
	fs.DurationVar(&tasks.MaxTTL, "task-max-ttl", time.Hour, "how long a task is kept at most from its creation, whatever its client asks; one still running then is cancelled")
	taskResults := abi.Size(host.DefaultTaskResultBytes)
	fs.Var(&taskResults, "task-results-memory", "bytes of results the finished tasks keep, all together; past it, the oldest finished tasks are dropped")
	var web httpFlags
	web.register(fs)
	var sf sourceFlags
	sf.register(fs)
	if code, ok := parse(ctx, fs, args, stderr, "[flags]"); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmcp serve: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	if *grace < 0 {
		fmt.Fprintln(stderr, "wasmcp serve: --shutdown-grace must not be negative")
		return exitUsage
	}
	if budget < host.MaxMessageSize {
		fmt.Fprintf(stderr, "wasmcp serve: --request-budget must be at least %s, the largest request\n", abi.Size(host.MaxMessageSize))
		return exitUsage
	}
	if tasks.PerSession < 1 || tasks.Total < 1 || tasks.MaxTTL <= 0 || taskResults < 1 {
		fmt.Fprintln(stderr, "wasmcp serve: --max-tasks-per-session, --max-tasks, --task-max-ttl and --task-results-memory must be positive")
		return exitUsage
	}
	tasks.ResultBytes = int64(taskResults)
	httpCfg, err := web.handlerOptions()
	if *addr != "" && err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitUsage
	}
	var stateKey []byte
	if *stateKeyFile != "" {
		if stateKey, err = os.ReadFile(*stateKeyFile); err != nil {
			fmt.Fprintln(stderr, "wasmcp serve: --request-state-key-file:", err)
			return exitUsage
		}
		if len(stateKey) < host.MinRequestStateKey {
			fmt.Fprintf(stderr, "wasmcp serve: --request-state-key-file: the key has %d bytes; it needs at least %d (head -c 32 /dev/urandom > FILE makes one)\n", len(stateKey), host.MinRequestStateKey)
			return exitUsage
		}
	}
	sources, err := sf.open()
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitUsage
	}
	srv, log, err := hf.open(ctx, stderr, func(c *host.Config) {
		if sources != nil {
			c.Sources = hostSources(sources)
		}
		c.RequestStateKey = stateKey
		c.HTTP = httpCfg
		c.Tasks = tasks
		c.Watch = *watchDir
		c.Metrics = *addr != ""
		if *addr != "" {
			c.RecentCalls = statuspage.RecentCalls
		}
		c.ShutdownGrace = *grace
		c.RequestBudget = int64(budget)
		if *grace == 0 {
			c.ShutdownGrace = -1 // host.Config's zero is its default
		}
	})
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitFailure
	}
	defer closeServer(srv, log)
	st := srv.Status()
	log.Info("tools loaded", "dir", hf.tools, "tools", len(st.Tools), "modules", len(st.Modules), "skipped", len(st.Errors))
	srv.Warm()
	var ready atomic.Bool
	ready.Store(sources == nil)
	if sources != nil {
		var pulling sync.WaitGroup
		ctx, stop := context.WithCancel(ctx)
		// Last in, first out: the sources stop, and are waited for,
		// before the server closes.
		defer pulling.Wait()
		defer stop()
		pulling.Go(func() {
			sources.Run(ctx, log, func() {
				if err := srv.Reload(); err != nil {
					log.Error("reloading the tool directory", "error", err)
					return
				}
				st := srv.Status()
				log.Info("tools reloaded", "tools", len(st.Tools), "modules", len(st.Modules), "skipped", len(st.Errors))
			})
		})
		pulling.Go(func() {
			if waitSources(ctx, sources, srv) {
				ready.Store(true)
				log.Info("tool sources pulled and compiled: ready", "sources", len(sf.refs))
			}
		})
	}

	if *addr == "" {
		err = srv.ServeStdio(ctx, stdin, stdout)
	} else {
		err = serveHTTP(ctx, *addr, srv, &web, httpCfg, log, *grace, &ready)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitFailure
	}
	log.Info("stopped")
	return exitOK
}

// httpFlags are the flags of `serve --http`.
type httpFlags struct {
	authTokenFile  string
	tlsCert        string
	tlsKey         string
	maxConnections int
	maxSessions    int
	sessionIdle    time.Duration
	readTimeout    time.Duration
	pollInterval   time.Duration
	replicaID      string
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.authTokenFile, "auth-token-file", "", "require `FILE`'s contents as a bearer token on every HTTP request (the minimum before exposing the server beyond loopback)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM; with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key `FILE` for --tls-cert (PEM)")
	fs.IntVar(&f.maxConnections, "max-connections", 1024, "HTTP connections open at once; past it, a new one closes the connection idle longest, or waits while all are busy. At most half may hold long-lived streams (GET, subscriptions/listen); a stream past that is refused with 503")
	fs.IntVar(&f.maxSessions, "max-sessions", 1024, "live 2025-11-25 sessions; a new one past this closes the session idle longest, or is refused with 503 while every session is in use")
	fs.DurationVar(&f.sessionIdle, "session-idle-timeout", 10*time.Minute, "close a 2025-11-25 session idle this long")
	fs.DurationVar(&f.pollInterval, "poll-interval", 0, "end a 2025-11-25 session's response stream each time its request has run this long, for the client to resume it (SSE polling), so that a long call holds no idle connection a proxy would cut; 0 keeps streams open")
	fs.StringVar(&f.replicaID, "replica-id", "", "name this replica (letters, digits, hyphens) at the start of its session ids, for a load balancer to send each 2025-11-25 session to the replica that holds it (deploy/nginx)")
	fs.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "time a client has to send a request's headers, then its body, and to take each 64 KiB of an answer; a client past it has its connection closed")
}

func (f *httpFlags) handlerOptions() (host.HTTPConfig, error) {
	opts := host.HTTPConfig{
		MaxSessions:        f.maxSessions,
		SessionIdleTimeout: f.sessionIdle,
		BodyTimeout:        f.readTimeout,
		// A client that stops reading its answer is waited for as long as
		// one that stops sending its request.
		WriteStallTimeout: f.readTimeout,
		// Streams hold their connections: half of them are left for
		// everything else, /healthz included.
		MaxStreams:   f.maxConnections / 2,
		PollInterval: f.pollInterval,
		ReplicaID:    f.replicaID,
	}
	if f.authTokenFile != "" {
		b, err := os.ReadFile(f.authTokenFile)
		if err != nil {
			return opts, fmt.Errorf("--auth-token-file: %w", err)
		}
		opts.AuthToken = strings.TrimSpace(string(b))
		if len(opts.AuthToken) < 16 {
			return opts, errors.New("--auth-token-file: the token must be at least 16 characters")
		}
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return opts, errors.New("--tls-cert and --tls-key go together")
	}
	if f.maxConnections < 2 {
		return opts, errors.New("--max-connections must be at least 2: half of the connections may hold streams")
	}
	if f.pollInterval < 0 {
		return opts, errors.New("--poll-interval must not be negative")
	}
	if f.maxSessions < 1 || f.sessionIdle <= 0 || f.readTimeout <= 0 {
		return opts, errors.New("--max-sessions, --session-idle-timeout and --read-timeout must be positive")
	}
	return opts, nil
}

func serveHTTP(ctx context.Context, addr string, srv *host.Server, f *httpFlags, opts host.HTTPConfig, log *slog.Logger, grace time.Duration, ready *atomic.Bool) error {
	bind, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if bind == "" {
		// Tools run code for whoever can reach the port: exposing it beyond
		// this machine must be a deliberate choice (0.0.0.0:PORT).
		bind = "127.0.0.1"
	}
	if ip := net.ParseIP(bind); (ip == nil || !ip.IsLoopback()) && bind != "localhost" && opts.AuthToken == "" {
		log.Warn("serving beyond loopback without --auth-token-file: anyone who can reach the port can run the tools", "addr", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(bind, port))
	if err != nil {
		return err
	}
	limit := newConnLimit(ln, f.maxConnections, log)
	ln = limit
	var draining atomic.Bool
	hs := &http.Server{
		Handler:           opsHandler(srv, opts.AuthToken, &draining, ready, log),
		ReadHeaderTimeout: f.readTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnState:         limit.ConnState,
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	log.Info("serving MCP over HTTP", "url", scheme+"://"+ln.Addr().String()+host.Path, "auth", opts.AuthToken != "")
	served := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			served <- hs.ServeTLS(ln, f.tlsCert, f.tlsKey)
		} else {
			served <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, report not ready, and let requests in flight finish
	// within the grace period; past it, close what is left, which cancels
	// the calls still running.
	draining.Store(true)
	log.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("grace period over; closing remaining connections", "error", err)
		return hs.Close()
	}
	return nil
}
