package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPollRetry bounds the reconnection delay a polled stream names.
const maxPollRetry = time.Second

// pollingVersion is the first revision whose streams begin with a priming
// event. Before it, a stream ended before its first event leaves the client
// no event id to resume from, and its answer would be lost.
const pollingVersion = "2025-11-25"

// pollStreams makes each request of a 2025-11-25 session over Streamable
// HTTP that runs longer than after end its response stream: SSE polling,
// as 2025-11-25 describes it (SEP-1699). The stream's last event names a
// delay (retry) of after, at most maxPollRetry; the client reconnects with
// Last-Event-ID after it, is given what it missed from the event store,
// then the rest as it comes. A long call then holds no connection while
// it runs, for a proxy to cut when it idles.
//
// Each stream is ended once, not every interval: a client that resumes
// and is cut again without a new event counts it as a failed retry (the
// Go SDK's gives up after five), and nothing here can send an event that
// would count as progress without speaking for the tool.
//
// Over stdio, and for 2026-07-28 requests (which have no resumable
// streams), the SDK offers no stream to end, and nothing changes; nor for
// requests of revisions before pollingVersion.
func pollStreams(after time.Duration) mcp.Middleware {
	retry := min(after, maxPollRetry)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			extra := req.GetExtra()
			if extra == nil || extra.CloseSSEStream == nil || extra.Header.Get("Mcp-Protocol-Version") < pollingVersion {
				return next(ctx, method, req)
			}
			// An end that comes after the answer finds the stream done, and
			// does nothing.
			timer := time.AfterFunc(after, func() { extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: retry}) })
			defer timer.Stop()
			return next(ctx, method, req)
		}
	}
}
