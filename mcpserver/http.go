package mcpserver

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/mcpserver/internal/guard"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// modernVersion is the first protocol revision without sessions.
const modernVersion = "2026-07-28"

// requestTokenHeader carries the token that ties a stateless call to its
// HTTP request (see Server.callContext). The router sets it; a client's own
// value is always removed first, so a client cannot name another request.
const requestTokenHeader = "Wasmcp-Internal-Request-Token"

// HTTPOptions configure NewHTTPHandler.
type HTTPOptions struct {
	Logger *slog.Logger
}

// HTTPHandler serves the server over Streamable HTTP at Path, for clients of
// both protocol eras.
//
// The SDK serves 2026-07-28 only from a stateless handler and 2025-11-25
// sessions only from a stateful one, so both are built and each POST is
// routed: a request without a session that marks itself modern (by its
// _meta or its MCP-Protocol-Version header) goes to the stateless handler,
// everything else to the stateful one. This is the routing rule of the
// conformance suite's reference server.
//
// In front of both, the guard answers malformed bodies with JSON-RPC errors,
// and a body over MaxMessageSize is refused before it is read whole. The
// SDK's DNS-rebinding protection stays on, and cross-origin browser
// requests are refused.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	getServer := func(*http.Request) *mcp.Server { return s.mcp }
	base := mcp.StreamableHTTPOptions{Logger: sdkLogger(log), MaxRequestBodyBytes: MaxMessageSize}
	stateless := base
	stateless.Stateless = true
	r := &router{
		stateful:  mcp.NewStreamableHTTPHandler(getServer, &base),
		stateless: mcp.NewStreamableHTTPHandler(getServer, &stateless),
		log:       log,
		streams:   &s.streams,
	}
	mux := http.NewServeMux()
	mux.Handle(Path, http.NewCrossOriginProtection().Handler(r))
	return mux
}

type router struct {
	stateful, stateless http.Handler
	log                 *slog.Logger
	streams             *sync.Map
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.Header.Del(requestTokenHeader)
	sessionID := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost {
		if sessionID == "" {
			// Only 2025-11-25 sessions have GET streams and DELETE; without a
			// session there is nothing to stream or end.
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed: without an Mcp-Session-Id, only POST is served", http.StatusMethodNotAllowed)
			return
		}
		rt.stateful.ServeHTTP(w, r)
		return
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessageSize))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeRPCError(w, http.StatusRequestEntityTooLarge, guard.ErrorResponse(nil, guard.CodeInvalidRequest, fmt.Sprintf("invalid request: body exceeds %d bytes", MaxMessageSize)))
			return
		}
		http.Error(w, "reading request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	v := guard.Inspect(body)
	if v.Kind == guard.Invalid {
		rt.log.Warn("refused malformed message", "code", v.Code, "reason", v.Message, "remote", r.RemoteAddr)
		writeRPCError(w, http.StatusBadRequest, guard.ErrorResponse(v.ID, v.Code, v.Message))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))

	modern := sessionID == "" && v.Kind != guard.Response &&
		(guard.HasModernMeta(v.Params) || r.Header.Get("Mcp-Protocol-Version") >= modernVersion)
	if modern {
		token := rand.Text()
		r.Header.Set(requestTokenHeader, token)
		rt.streams.Store(token, r.Context())
		defer rt.streams.Delete(token)
		rt.stateless.ServeHTTP(w, r)
		return
	}
	rt.stateful.ServeHTTP(w, r)
}

func writeRPCError(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
