// Command native-go is the bench's Go baseline: the `calculate` tool of
// tools/calculate, with the same schema and the same output, served
// natively with the official MCP Go SDK, with no WebAssembly in between.
//
//	native-go                        stdio (the default)
//	native-go --http 127.0.0.1:8080  Streamable HTTP on /mcp
//
// Over HTTP it serves stateless requests, as wasmcp serves 2026-07-28
// clients (the bench's client is one).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/tools/calculate/calc"
)

// inputSchema is the one in tools/calculate/manifest.json.
const inputSchema = `{
  "type": "object",
  "properties": {
    "a": {"type": "number", "description": "The first operand."},
    "b": {"type": "number", "description": "The second operand; the divisor for divide."},
    "operation": {
      "type": "string",
      "enum": ["add", "subtract", "multiply", "divide"],
      "description": "What to do with a and b."
    }
  },
  "required": ["a", "b", "operation"],
  "additionalProperties": false
}`

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP at `ADDR` (path /mcp) instead of stdio")
	flag.Parse()

	server := newServer()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := server.Run(ctx, &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			log.Fatal(err)
		}
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "native-go: serving http://%s/mcp\n", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func newServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "native-go", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{
		Name:        "calculate",
		Title:       "Calculator",
		Description: "Adds, subtracts, multiplies or divides two numbers and returns the result as a decimal number, e.g. 15.0. Dividing by zero is an error.",
		InputSchema: json.RawMessage(inputSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:          "Calculator",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  new(false),
		},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in calc.Args) (*mcp.CallToolResult, any, error) {
		text, err := calc.Calculate(in)
		if err != nil {
			return nil, nil, err // the SDK answers isError with the message
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	return server
}
