package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// BenchmarkServeStdioCall measures one tools/call through the whole server
// in-process (guard, SDK, host, sandbox) with a minimal guest, so that
// the per-call cost around the sandbox can be profiled:
//
//	go test -run '^$' -bench ServeStdioCall -benchtime 5000x -cpuprofile cpu.out ./mcpserver/
func BenchmarkServeStdioCall(b *testing.B) {
	s := newTestServer(&testing.T{}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ServeStdio(ctx, inR, outW, StdioOptions{DrainTimeout: time.Second})
	replies := bufio.NewReader(outR)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(id int) {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"a":10,"b":5,"operation":"add"},%s}}`+"\n", id, meta)
		if _, err := replies.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
	}
	runCalls(b, call)
	inW.Close()
}

// BenchmarkServeStdioList measures one tools/list through the whole
// server in-process, answered again from the SDK's first answer
// (listAnswers), and by the SDK each time (sdk):
//
//	go test -run '^$' -bench ServeStdioList -benchmem ./internal/mcpserver/
func BenchmarkServeStdioList(b *testing.B) {
	for _, again := range []bool{true, false} {
		name := map[bool]string{true: "again", false: "sdk"}[again]
		b.Run(name, func(b *testing.B) {
			s := newTestServer(&testing.T{}, nil)
			s.sdkOnly = !again
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go s.ServeStdio(ctx, inR, outW, StdioOptions{DrainTimeout: time.Second})
			replies := bufio.NewReader(outR)
			list := func(id int) {
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`+"\n", id, modernMeta)
				if _, err := replies.ReadBytes('\n'); err != nil {
					b.Fatal(err)
				}
			}
			runCalls(b, list)
			inW.Close()
		})
	}
}

// runCalls makes one untimed call, then one per benchmark iteration, each
// with a new id.
func runCalls(b *testing.B, call func(id int)) {
	call(0)
	b.ReportAllocs()
	id := 1
	for b.Loop() {
		call(id)
		id++
	}
}

// BenchmarkServeHTTPCall is BenchmarkServeStdioCall over Streamable HTTP:
// one stateless (2026-07-28) tools/call per POST, through the router, the
// guard, the SDK's handler, the host and the sandbox.
//
//	go test -run '^$' -bench ServeHTTPCall -benchtime 5000x -cpuprofile cpu.out ./mcpserver/
func BenchmarkServeHTTPCall(b *testing.B) {
	s := newTestServer(&testing.T{}, nil)
	runHTTP(b, s, "tools/call", `"name":"echo","arguments":{"a":10,"b":5,"operation":"add"},`)
}

// BenchmarkServeHTTPList is BenchmarkServeStdioList over Streamable HTTP,
// with stateless (2026-07-28) requests:
//
//	go test -run '^$' -bench ServeHTTPList -benchmem ./internal/mcpserver/
func BenchmarkServeHTTPList(b *testing.B) {
	for _, again := range []bool{true, false} {
		b.Run(map[bool]string{true: "again", false: "sdk"}[again], func(b *testing.B) {
			s := newTestServer(&testing.T{}, nil)
			s.sdkOnly = !again
			runHTTP(b, s, "tools/list", "")
		})
	}
}

// runHTTP posts one stateless request of method, whose params hold params
// before their _meta, per benchmark iteration.
func runHTTP(b *testing.B, s *Server, method, params string) {
	srv := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	defer srv.Close()
	call := func(id int) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, id, method, params, modernMeta)
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			req.Header.Set("Mcp-Name", "echo")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		reply, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(reply), `"result"`) {
			b.Fatalf("%d %s", resp.StatusCode, reply)
		}
	}
	runCalls(b, call)
}

// BenchmarkAnswerAtTheOutputLimit measures what one call's answer costs
// the server, through the SDK over stdio, at the 1 MiB output limit: the
// bytes allocated per call (B/op) for output that JSON makes six times as
// long (control characters), as much as fits the limit once encoded, and
// as much as fits it as written, which the server refuses.
//
//	go test -run '^$' -bench AnswerAtTheOutputLimit -benchtime 20x ./internal/mcpserver/
func BenchmarkAnswerAtTheOutputLimit(b *testing.B) {
	dir := b.TempDir()
	wattest.Write(b, dir, "ctlbytes", "ctlbytes")
	manifest := `{"abi":1,"tools":[{"name":"ctl","description":"writes n bytes of 0x01","inputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "ctlbytes.manifest.json"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	s := serveDir(b, dir, Options{Version: "test"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ServeStdio(ctx, inR, outW, StdioOptions{DrainTimeout: time.Second})
	defer inW.Close()
	replies := bufio.NewReader(outR)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for name, n := range map[string]int{"1 MiB encoded": (1<<20)/6 - 2, "1 MiB written": 1 << 20} {
		b.Run(name, func(b *testing.B) {
			runCalls(b, func(id int) {
				fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ctl","arguments":{"n":%d},%s}}`+"\n", id, n, meta)
				if _, err := replies.ReadBytes('\n'); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkBigCallsWaiting holds 8 stateless calls of 4 MiB each in their
// handlers, as calls waiting for a run slot are, and reports what each
// holds of the heap then (live-MiB/call) and allocated on its way there
// (alloc-MiB/call):
//
//	go test -run '^$' -bench BigCallsWaiting -benchtime 5x ./internal/mcpserver/
func BenchmarkBigCallsWaiting(b *testing.B) {
	const n = 8
	s := newTestServer(&testing.T{}, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	s.mcp.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		entered <- struct{}{}
		<-release
		return &mcp.CallToolResult{}, nil
	})
	srv := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	defer srv.Close()
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"arguments":{"s":"`
	body := head + strings.Repeat("x", MaxMessageSize-len(head)-4) + `"}}}`
	var live, alloc float64
	for b.Loop() {
		var before, during runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var done sync.WaitGroup
		for range n {
			done.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "wait")
				if resp, err := srv.Client().Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		for range n {
			<-entered
		}
		runtime.GC()
		runtime.ReadMemStats(&during)
		live += float64(during.HeapAlloc-before.HeapAlloc) / n / (1 << 20)
		alloc += float64(during.TotalAlloc-before.TotalAlloc) / n / (1 << 20)
		for range n {
			release <- struct{}{}
		}
		done.Wait()
	}
	b.ReportMetric(live/float64(b.N), "live-MiB/call")
	b.ReportMetric(alloc/float64(b.N), "alloc-MiB/call")
}
