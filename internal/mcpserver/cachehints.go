package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK writes 2026-07-28's cache hints, ttlMs and cacheScope, into
// every list result and resources/read result, whatever revision the
// session speaks. 2025-11-25 has neither field, so withoutLegacyCacheHints
// takes them out of the answers of a session that negotiated an earlier
// revision.

// cacheHinted is a result that carries the cache hints (mcp.Cacheable).
type cacheHinted interface {
	mcp.Result
	GetTTLMs() int
}

// withoutLegacyCacheHints is receiving middleware: an answer to a session
// of a revision before 2026-07-28 is sent without the cache hints.
func withoutLegacyCacheHints(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		hinted, ok := res.(cacheHinted)
		if err != nil || !ok {
			return res, err
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if !ok {
			return res, nil
		}
		if p := ss.InitializeParams(); p == nil || p.ProtocolVersion >= modernVersion {
			return res, nil
		}
		return withoutCacheHints{hinted}, nil
	}
}

// withoutCacheHints is a result that encodes as its own, without ttlMs
// and cacheScope.
type withoutCacheHints struct{ cacheHinted }

func (r withoutCacheHints) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.cacheHinted)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("result of type %T: %w", r.cacheHinted, err)
	}
	delete(fields, "ttlMs")
	delete(fields, "cacheScope")
	return json.Marshal(fields)
}
