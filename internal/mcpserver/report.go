package mcpserver

import (
	"context"
	"math"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
)

// clientReporter sends a tool's reports to the client that called it: logs
// as notifications/message, which the SDK filters by the level the client
// chose (logging/setLevel in a 2025-11-25 session, the request's _meta log
// level in 2026-07-28), and progress as notifications/progress, only when
// the request carried a progress token.
type clientReporter struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	tool    string
	meta    mcp.Meta // on each notification: a task's related-task key
}

func newClientReporter(ctx context.Context, req *mcp.CallToolRequest, tool string) *clientReporter {
	return &clientReporter{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken(), tool: tool}
}

func (r *clientReporter) Log(level int32, msg string) {
	if r.session == nil {
		return
	}
	// A client that went away is not the tool's problem; the error is
	// dropped, and the call's own context decides whether it goes on.
	_ = r.session.Log(r.ctx, &mcp.LoggingMessageParams{
		Level:  mcp.LoggingLevel(abi.LevelNames[level]),
		Logger: r.tool,
		Data:   msg,
		Meta:   r.meta,
	})
}

func (r *clientReporter) Progress(progress, total float64, msg string) {
	if r.session == nil || r.token == nil {
		return
	}
	p := &mcp.ProgressNotificationParams{ProgressToken: r.token, Progress: progress, Message: msg, Meta: r.meta}
	if !math.IsNaN(total) {
		p.Total = total
	}
	_ = r.session.NotifyProgress(r.ctx, p)
}
