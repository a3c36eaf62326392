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
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcpserver"
	"github.com/wasmcp/wasmcp/internal/metrics"
	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/watch"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	addr := fs.String("http", "", "serve Streamable HTTP at `ADDR` (path "+mcpserver.Path+") instead of stdio; a bare :PORT binds loopback only")
	watchDir := fs.Bool("watch", true, "reload the tool directory when its files change, and tell clients")
	grace := fs.Duration("shutdown-grace", 10*time.Second, "on SIGTERM or SIGINT, how long calls in flight may finish before they are cancelled")
	var web httpFlags
	web.register(fs)
	if code, ok := parse(fs, args, stderr, "[flags]"); !ok {
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
	var obs *metrics.Metrics
	if *addr != "" {
		obs = metrics.New()
	}
	l, err := hf.load(ctx, stderr, observerOf(obs))
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitFailure
	}
	defer l.close()
	cat := l.host.Catalog()
	l.log.Info("tools loaded", "dir", hf.tools, "tools", len(cat.Tools), "modules", len(cat.Modules), "skipped", len(cat.Errors))
	// Compilation and reloads outlive the signal that starts a shutdown:
	// calls still finishing may need them.
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	warmed := l.host.Warm(work)
	defer func() { stopWork(); <-warmed }()
	srv := mcpserver.New(l.host, mcpserver.Options{Version: version, Logger: l.log, ListChanged: *watchDir})
	if *watchDir {
		reload := func([]string) {
			if err := l.host.Reload(work, l.dir, l.catalogOptions); err != nil {
				l.log.Error("reloading the tool directory", "error", err)
				return
			}
			c := l.host.Catalog()
			l.log.Info("tools reloaded", "tools", len(c.Tools), "modules", len(c.Modules), "skipped", len(c.Errors))
		}
		if err := watch.Dir(ctx, l.dir, nil, watch.DefaultQuiet, l.log, reload); err != nil {
			fmt.Fprintln(stderr, "wasmcp serve:", err)
			return exitFailure
		}
	}

	if *addr == "" {
		err = srv.ServeStdio(ctx, stdin, stdout, mcpserver.StdioOptions{
			DrainTimeout:  hf.timeout + hf.queueTimeout + 5*time.Second,
			ShutdownGrace: *grace,
			Logger:        l.log,
		})
	} else {
		err = serveHTTP(ctx, *addr, srv, &web, l, obs, *grace)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitFailure
	}
	l.log.Info("stopped")
	return exitOK
}

// observerOf avoids handing the host a typed nil.
func observerOf(m *metrics.Metrics) observe.Observer {
	if m == nil {
		return nil
	}
	return m
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
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.authTokenFile, "auth-token-file", "", "require `FILE`'s contents as a bearer token on every HTTP request (the minimum before exposing the server beyond loopback)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM; with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key `FILE` for --tls-cert (PEM)")
	fs.IntVar(&f.maxConnections, "max-connections", 1024, "HTTP connections open at once; past it, a new one closes the connection idle longest, or waits while all are busy")
	fs.IntVar(&f.maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "live 2025-11-25 sessions; a new one past this is refused with 503")
	fs.DurationVar(&f.sessionIdle, "session-idle-timeout", mcpserver.DefaultSessionIdleTimeout, "close a 2025-11-25 session idle this long")
	fs.DurationVar(&f.readTimeout, "read-timeout", 30*time.Second, "time a client has to send a request's headers, and then its body")
}

func (f *httpFlags) handlerOptions(log *slog.Logger) (mcpserver.HTTPOptions, error) {
	opts := mcpserver.HTTPOptions{
		Logger:             log,
		MaxSessions:        f.maxSessions,
		SessionIdleTimeout: f.sessionIdle,
		BodyTimeout:        f.readTimeout,
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
	if f.maxConnections < 1 || f.maxSessions < 1 || f.sessionIdle <= 0 || f.readTimeout <= 0 {
		return opts, errors.New("--max-connections, --max-sessions, --session-idle-timeout and --read-timeout must be positive")
	}
	return opts, nil
}

func serveHTTP(ctx context.Context, addr string, srv *mcpserver.Server, f *httpFlags, l *loaded, m *metrics.Metrics, grace time.Duration) error {
	opts, err := f.handlerOptions(l.log)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if host == "" {
		// Tools run code for whoever can reach the port: exposing it beyond
		// this machine must be a deliberate choice (0.0.0.0:PORT).
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" && opts.AuthToken == "" {
		l.log.Warn("serving beyond loopback without --auth-token-file: anyone who can reach the port can run the tools", "addr", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return err
	}
	limit := newConnLimit(ln, f.maxConnections, l.log)
	ln = limit
	var draining atomic.Bool
	hs := &http.Server{
		Handler:           opsHandler(srv.HTTPHandler(opts), l, m, opts.AuthToken, &draining),
		ReadHeaderTimeout: f.readTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnState:         limit.ConnState,
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	l.log.Info("serving MCP over HTTP", "url", scheme+"://"+ln.Addr().String()+mcpserver.Path, "auth", opts.AuthToken != "")
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
	l.log.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		l.log.Warn("grace period over; closing remaining connections", "error", err)
		return hs.Close()
	}
	return nil
}
