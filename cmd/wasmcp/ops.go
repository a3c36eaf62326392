package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/statuspage"
)

// opsHandler puts the operator's endpoints beside the MCP endpoint:
//
//	/healthz  200 while the process serves (liveness)
//	/readyz   200 while it accepts work, 503 until its tool sources have
//	          been pulled and compiled, and once it drains (readiness)
//	/status   every module: loaded with its tools, or why not (JSON)
//	/metrics  Prometheus metrics
//	/         the status page, for people (HTML)
//
// The probes need no token, so that an orchestrator can call them; status,
// metrics and the page name the tools, so they sit behind the token like
// /mcp.
func opsHandler(srv *host.Server, token string, draining, ready *atomic.Bool, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(host.Path, srv.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		if !ready.Load() {
			http.Error(w, "pulling and compiling the tool sources", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	status := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(srv.Status())
	})
	mux.Handle("GET /status", host.RequireBearer(token, status))
	if m := srv.MetricsHandler(); m != nil {
		mux.Handle("GET /metrics", host.RequireBearer(token, m))
	}
	mux.Handle("GET /{$}", statuspage.Handler(srv, token, log))
	return mux
}
