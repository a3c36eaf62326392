package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/host"
)

// A Go program can serve a directory of tools itself: here, over HTTP on a
// test server, to the official SDK's client. (ServeStdio serves a desktop
// client the same way.)
func Example() {
	ctx := context.Background()
	dir := exampleTools()
	defer os.RemoveAll(dir)
	srv, err := host.New(ctx, host.Config{Tools: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close(ctx)

	web := httptest.NewServer(srv.Handler())
	defer web.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: web.URL}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"hello": "world"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: {"hello":"world"}
}

// Call runs a tool directly, as tools/call would, without a client.
func ExampleServer_Call() {
	ctx := context.Background()
	dir := exampleTools()
	defer os.RemoveAll(dir)
	srv, err := host.New(ctx, host.Config{Tools: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close(ctx)
	res, err := srv.Call(ctx, "echo", json.RawMessage(`{"n":1}`), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output: false {"n":1}
}

// exampleTools makes a directory with one tool: a module in WebAssembly
// text that copies stdin to stdout, and its manifest.
func exampleTools() string {
	dir, err := os.MkdirTemp("", "wasmcp-example-")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "echo.wasm"), echoWasm, 0o644); err != nil {
		log.Fatal(err)
	}
	manifest := `{"abi":1,"tools":[{"name":"echo","description":"Gives back its arguments.","inputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "echo.manifest.json"), []byte(manifest), 0o644); err != nil {
		log.Fatal(err)
	}
	return dir
}
