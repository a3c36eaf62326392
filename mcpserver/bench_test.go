package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"testing"
	"time"
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
	call(0)
	b.ReportAllocs()
	id := 1
	for b.Loop() {
		call(id)
		id++
	}
	inW.Close()
}
