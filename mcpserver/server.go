// Package mcpserver binds a host to the Model Context Protocol: it registers
// every catalog tool with the official MCP Go SDK and serves the SDK over
// stdio and Streamable HTTP, with a guard in front of each transport that
// answers malformed JSON-RPC itself.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/host/catalog"
)

// Name is the server's name in serverInfo.
const Name = "wasmcp"

// instructions tell a client what kind of server this is; models read them.
const instructions = "Tools served by wasmcp run as WebAssembly modules in a sandbox with time, memory and output limits. A failed tool call returns isError with a message explaining the cause."

// New returns an MCP server that serves the host's tools. A tool the SDK
// refuses (it panics on some schemas) is skipped and logged, never fatal.
func New(h *host.Host, version string, log *slog.Logger) *mcp.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "wasmcp", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       log,
		HasTools:     true,
	})
	for _, t := range h.Catalog().Tools {
		if err := addTool(srv, h, t); err != nil {
			log.Warn("skipping tool the MCP SDK refuses", "tool", t.Spec.Name, "file", t.Module.Path, "reason", err)
		}
	}
	return srv
}

func addTool(srv *mcp.Server, h *host.Host, t *catalog.Tool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	name := t.Spec.Name
	srv.AddTool(Tool(t.Spec), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return h.Call(ctx, name, req.Params.Arguments)
	})
	return nil
}

// Tool converts a manifest's tool to the SDK's description of it.
func Tool(s abi.Tool) *mcp.Tool {
	t := &mcp.Tool{
		Name:        s.Name,
		Title:       s.Title,
		Description: s.Description,
		InputSchema: s.InputSchema,
	}
	if len(s.OutputSchema) > 0 {
		t.OutputSchema = s.OutputSchema
	}
	if a := s.Annotations; a != nil {
		t.Annotations = &mcp.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    deref(a.ReadOnlyHint),
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  deref(a.IdempotentHint),
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return t
}

func deref(b *bool) bool { return b != nil && *b }
