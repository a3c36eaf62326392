package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// exampleCalls are one typical call of each example tool, one per guest
// language.
var exampleCalls = []struct {
	tool string
	args map[string]any
}{
	{"calculate", map[string]any{"a": 10, "b": 5, "operation": "add"}},            // Go
	{"text_stats", map[string]any{"text": "The quick brown fox. It jumps!"}},      // C
	{"convert_units", map[string]any{"value": 5, "from": "km", "to": "mi"}},       // Rust
	{"slugify", map[string]any{"text": "Crème Brûlée: 2 Ways!", "maxLength": 50}}, // AssemblyScript
	{"random_uuid", nil}, // WebAssembly text
	{"find_matches", map[string]any{"text": "2026-01 and 2027-02", "pattern": `(\d{4})-(\d{2})`}}, // JavaScript
	{"date_diff", map[string]any{"start": "2026-03-02", "end": "2026-03-09"}},                     // TypeScript
	{"date_info", map[string]any{"date": "2024-02-29", "other": "2024-03-01"}},                    // Python
}

// BenchmarkExamples measures one tools/call of each example as a client
// sees it: through the real binary, over each transport and revision, with
// the SDK's client.
//
//	go test -run '^$' -bench Examples -benchtime 200x ./e2e/
func BenchmarkExamples(b *testing.B) {
	writeHostile(b)
	s := startHTTP(b)
	for _, ex := range exampleCalls {
		for _, v := range versions {
			for _, tr := range []string{"stdio", "http"} {
				b.Run(ex.tool+"/"+tr+"/"+v, func(b *testing.B) {
					var cs *mcp.ClientSession
					if tr == "stdio" {
						cs = connectStdio(b, v)
					} else {
						cs = connectHTTP(b, s, v)
					}
					ctx := context.Background()
					params := &mcp.CallToolParams{Name: ex.tool, Arguments: ex.args}
					// The first call waits for the module to compile.
					if _, err := cs.CallTool(ctx, params); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for b.Loop() {
						res, err := cs.CallTool(ctx, params)
						if err != nil || res.IsError {
							b.Fatalf("call: %v %v", err, res)
						}
					}
				})
			}
		}
	}
}

// BenchmarkReloadLatency measures how long a change in the tool directory
// takes to reach a watching client: from the file's rename into place to
// the client's tools/list_changed (the watcher's quiet period included).
//
//	go test -run '^$' -bench ReloadLatency -benchtime 20x ./e2e/
func BenchmarkReloadLatency(b *testing.B) {
	dir := b.TempDir()
	s := startHTTPIn(b, dir)
	cs, changes := connectWatching(b, s, "2026-07-28")
	versions := [][]byte{wattest.Build(b, "probe"), wattest.Build(b, "sleep")}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		writeTool(b, dir, "changing", versions[i%2], "changing")
		select {
		case <-changes:
		case <-time.After(time.Minute):
			b.Fatal("no tools/list_changed")
		}
	}
	b.StopTimer()
	cs.Close()
}

// BenchmarkSlowCallFlood sends 64 calls at once to a tool that sleeps
// 300 ms, on a server that runs 4 at a time and lets a call queue for 1 s:
// about half must be answered busy, none may fail otherwise, and the
// server's peak resident memory is reported (peak-rss-MiB).
//
//	go test -run '^$' -bench SlowCallFlood -benchtime 3x ./e2e/
func BenchmarkSlowCallFlood(b *testing.B) {
	writeHostile(b)
	writeSleep(b)
	s := startHTTP(b, "--concurrency", "4", "--queue-timeout", "1s")
	cs := connectHTTP(b, s, "2026-07-28")
	var busy, ok atomic.Int64
	for b.Loop() {
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep"})
				switch {
				case err != nil:
					b.Error(err)
				case res.IsError && strings.Contains(text(res), "busy"):
					busy.Add(1)
				case res.IsError:
					b.Errorf("a call failed: %s", text(res))
				default:
					ok.Add(1)
				}
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(busy.Load())/float64(b.N), "busy/flood")
	b.ReportMetric(float64(ok.Load())/float64(b.N), "ok/flood")
	b.ReportMetric(peakRSS(b, s)/(1<<20), "peak-rss-MiB")
}

// peakRSS reads the server process's peak resident set size.
func peakRSS(b *testing.B, s *server) float64 { return procStatus(b, s, "VmHWM:") }

// procStatus reads a size in bytes, such as "VmRSS:", from the server
// process's /proc status.
func procStatus(b *testing.B, s *server, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == field {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	b.Fatalf("no %s in /proc status", field)
	return 0
}

// BenchmarkThinkTime calls calculate (a Go guest) the way an agent does:
// with a pause between calls while the model thinks (20 ms here; seconds in
// practice). The pause is outside the timer. With --prewarm (the default)
// each call finds its fresh instance already started; with --prewarm 0 it
// pays the Go runtime's start-up.
//
//	go test -run '^$' -bench ThinkTime -benchtime 100x ./e2e/
func BenchmarkThinkTime(b *testing.B) {
	writeHostile(b)
	args := map[string]any{"a": 10, "b": 5, "operation": "add"}
	for _, prewarm := range []string{"8", "0"} {
		b.Run("prewarm="+prewarm, func(b *testing.B) {
			cs := connectStdio(b, "2026-07-28", "--prewarm", prewarm)
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "calculate", Arguments: args}
			if _, err := cs.CallTool(ctx, params); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				time.Sleep(20 * time.Millisecond) // the model thinking, not synchronisation
				b.StartTimer()
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatalf("call: %v %v", err, res)
				}
			}
		})
	}
}
