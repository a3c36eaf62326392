package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/wasmcp/wasmcp/mcpserver"
)

// shutdownGrace bounds how long an HTTP server waits for open requests when
// asked to stop.
const shutdownGrace = 10 * time.Second

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var hf hostFlags
	hf.register(fs)
	addr := fs.String("http", "", "serve Streamable HTTP at `ADDR` (path "+mcpserver.Path+") instead of stdio; a bare :PORT binds loopback only")
	if code, ok := parse(fs, args, stderr, "[flags]"); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "wasmcp serve: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	l, err := hf.load(ctx, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitFailure
	}
	defer l.close()
	cat := l.host.Catalog()
	l.log.Info("tools loaded", "dir", hf.tools, "tools", len(cat.Tools), "modules", len(cat.Modules), "skipped", len(cat.Errors))
	cat.Warm(ctx, l.log)
	srv := mcpserver.New(l.host, version, l.log)

	if *addr == "" {
		err = srv.ServeStdio(ctx, stdin, stdout, mcpserver.StdioOptions{
			DrainTimeout: hf.timeout + hf.queueTimeout + 5*time.Second,
			Logger:       l.log,
		})
	} else {
		err = serveHTTP(ctx, *addr, srv.HTTPHandler(mcpserver.HTTPOptions{Logger: l.log}), l)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp serve:", err)
		return exitFailure
	}
	return exitOK
}

func serveHTTP(ctx context.Context, addr string, h http.Handler, l *loaded) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if host == "" {
		// Tools run code for whoever can reach the port: exposing it beyond
		// this machine must be a deliberate choice (0.0.0.0:PORT).
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	l.log.Info("serving MCP over HTTP", "url", "http://"+ln.Addr().String()+mcpserver.Path)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	l.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
