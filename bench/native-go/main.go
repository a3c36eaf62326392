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
	"math"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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

type args struct {
	A         float64 `json:"a"`
	B         float64 `json:"b"`
	Operation string  `json:"operation"`
}

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
	}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		text, err := calculate(in)
		if err != nil {
			return nil, nil, err // the SDK answers isError with the message
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
	return server
}

func calculate(in args) (string, error) {
	var r float64
	switch in.Operation {
	case "add":
		r = in.A + in.B
	case "subtract":
		r = in.A - in.B
	case "multiply":
		r = in.A * in.B
	case "divide":
		if in.B == 0 {
			return "", errors.New("division by zero")
		}
		r = in.A / in.B
	default:
		return "", fmt.Errorf("unknown operation %q: want add, subtract, multiply or divide", in.Operation)
	}
	if math.IsInf(r, 0) {
		return "", errors.New("result is too large for a 64-bit float")
	}
	return formatFloat(r), nil
}

// formatFloat writes x as Python's repr does (and tools/calculate does):
// always a decimal point or an exponent, and an exponent only outside
// 1e-4 <= |x| < 1e16.
func formatFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	e := strconv.FormatFloat(x, 'e', -1, 64)
	if exp, err := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:]); err == nil && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
