package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/dispatch"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// newTestServer serves the echo module as tool "echo" (text) and, from a
// second module, a tool whose schema the SDK refuses.
func newTestServer(t *testing.T, log *slog.Logger) *Server {
	t.Helper()
	return newTestServerWith(t, Options{Version: "test", Logger: log})
}

// newTestServerWith is newTestServer with options of the test's own.
func newTestServerWith(t *testing.T, opts Options) *Server {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "a_echo")
	write(t, filepath.Join(dir, "a_echo.manifest.json"), `{"abi":1,"tools":[{"name":"echo","description":"echoes","inputSchema":{"type":"object"}}]}`)
	wattest.Write(t, dir, "echo", "b_header")
	// x-mcp-header on an object property is valid JSON Schema, but the SDK's
	// AddTool panics on it.
	write(t, filepath.Join(dir, "b_header.manifest.json"), `{"abi":1,"tools":[{"name":"header","description":"bad header annotation",
		"inputSchema":{"type":"object","properties":{"x":{"type":"object","x-mcp-header":"X"}}}}]}`)
	return serveDir(t, dir, opts)
}

// serveDir serves the tools of dir, with an output limit of 1 MiB.
func serveDir(t testing.TB, dir string, opts Options) *Server {
	t.Helper()
	reg, d := openDir(t, dir)
	return New(reg, d, opts)
}

// openDir opens dir as a registry, with an output limit of 1 MiB, and a
// dispatcher of it.
func openDir(t testing.TB, dir string) (*registry.Registry, *dispatch.Dispatcher) {
	t.Helper()
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(context.Background()) })
	reg, err := registry.Open(registry.Options{Dir: dir, LoadOptions: registry.LoadOptions{Engine: engine, Ceilings: sandbox.Limits{Timeout: time.Minute, Memory: 16 << 20, Output: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	d := dispatch.New(reg, dispatch.Options{QueueTimeout: time.Second})
	t.Cleanup(d.Close)
	return reg, d
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func connectInMemory(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestToolTheSDKRefusesIsSkippedNotFatal(t *testing.T) {
	var logs bytes.Buffer
	s := newTestServer(t, slog.New(slog.NewTextHandler(&logs, nil)))
	cs := connectInMemory(t, s)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "echo" {
		t.Fatalf("tools = %v; want only echo", res.Tools)
	}
	if !strings.Contains(logs.String(), "tool=header") || !strings.Contains(logs.String(), "x-mcp-header") {
		t.Errorf("the skipped tool is not logged with its reason:\n%s", logs.String())
	}
	call, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"k": "v"}})
	if err != nil || call.IsError {
		t.Fatalf("echo: %v %+v", err, call)
	}
	if got := call.Content[0].(*mcp.TextContent).Text; got != `{"k":"v"}` {
		t.Errorf("echo returned %q", got)
	}
}

func TestCapabilitiesPromiseNoListChanged(t *testing.T) {
	cs := connectInMemory(t, newTestServer(t, nil))
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Tools.ListChanged {
		t.Errorf("tools capability = %+v; want tools without listChanged", caps.Tools)
	}
	// Answered by the SDK, so declared (2026-07-28 requires it).
	if caps.Prompts == nil || caps.Resources == nil || caps.Logging == nil {
		t.Errorf("capabilities = %+v; want prompts, resources and logging declared", caps)
	}
}

func TestToolConversionKeepsManifestFields(t *testing.T) {
	yes, no := true, false
	got := Tool(abi.Tool{
		Name:         "t",
		Title:        "T",
		Description:  "D",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
		Output:       abi.OutputJSON,
		Annotations:  &abi.Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &no},
		Icons:        []abi.Icon{{Src: "data:,x", Theme: "dark"}},
		Meta:         abi.Meta{"example.com/k": json.RawMessage(`{"n":1}`)},
	})
	if got.Title != "T" || got.Description != "D" || got.OutputSchema == nil {
		t.Fatalf("Tool = %+v", got)
	}
	if len(got.Icons) != 1 || got.Icons[0].Theme != "dark" || string(got.Meta["example.com/k"].(json.RawMessage)) != `{"n":1}` {
		t.Errorf("icons %+v, _meta %v", got.Icons, got.Meta)
	}
	a := got.Annotations
	if !a.ReadOnlyHint || a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint != nil {
		t.Errorf("annotations = %+v", a)
	}
}

func TestQuieterDropsInfoButKeepsWarnings(t *testing.T) {
	var buf bytes.Buffer
	log := sdkLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	log.Info("server session connected")
	log.With("k", "v").WithGroup("g").Warn("write failed")
	if strings.Contains(buf.String(), "session connected") || !strings.Contains(buf.String(), "write failed") {
		t.Errorf("sdk log = %q", buf.String())
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
