package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// The 200-module directory of the start-up benchmarks: the examples that
// the calls below use, plus copies of a Go guest (3.4 MB, over a second to
// compile), of a C guest and of a WAT guest, each copy with its own
// embedded manifest and so its own tool name, bytes and compiled code.
// The copies list but do not run (their guests know only the example's
// tool name), so the warm-up tries the Go copies and prepares none.
const (
	startupModules = 200
	startupGo      = 16 // calculate and 15 copies
	startupC       = 32 // text_stats and 31 copies
)

var (
	startupOnce sync.Once
	startupPath string
	startupErr  error
)

// startupDir builds the 200-module directory once per run.
func startupDir(b *testing.B) string {
	b.Helper()
	echo := wattest.Build(b, "echo") // needs a testing.TB, so outside the Once
	startupOnce.Do(func() { startupPath, startupErr = writeStartupDir(echo) })
	if startupErr != nil {
		b.Fatal(startupErr)
	}
	return startupPath
}

func writeStartupDir(echo []byte) (string, error) {
	dir := filepath.Join(filepath.Dir(toolsDir), "startup")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	n := 0
	for _, ex := range []string{"calculate", "text_stats", "random_uuid"} {
		data, err := os.ReadFile(filepath.Join(toolsDir, ex+".wasm"))
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, ex+".wasm"), data, 0o644); err != nil {
			return "", err
		}
		n++
	}
	copies := func(kind, example string, wasm []byte, count int) error {
		if wasm == nil {
			var err error
			if wasm, err = os.ReadFile(filepath.Join(toolsDir, example+".wasm")); err != nil {
				return err
			}
		}
		for i := range count {
			name := fmt.Sprintf("%s_%03d", kind, i)
			manifest, err := renamedManifest(example, name)
			if err != nil {
				return err
			}
			packed, err := wasmbin.SetCustomSection(wasm, abi.CustomSection, manifest)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, name+".wasm"), packed, 0o644); err != nil {
				return err
			}
			n++
		}
		return nil
	}
	if err := copies("go", "calculate", nil, startupGo-1); err != nil {
		return "", err
	}
	if err := copies("c", "text_stats", nil, startupC-1); err != nil {
		return "", err
	}
	if err := copies("wat", "", echo, startupModules-n); err != nil {
		return "", err
	}
	return dir, nil
}

// renamedManifest is an example's manifest with its one tool renamed, or,
// without an example, a minimal one.
func renamedManifest(example, name string) ([]byte, error) {
	if example == "" {
		return fmt.Appendf(nil, `{"abi":1,"tools":[{"name":%q,"description":"echoes its arguments","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`, name), nil
	}
	data, err := os.ReadFile(filepath.Join("..", "tools", example, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["tools"].([]any)[0].(map[string]any)["name"] = name
	return json.Marshal(m)
}

// serveStdioIn starts `wasmcp serve` over stdio on dir with the SDK's client,
// and returns the session once initialize is answered.
func serveStdioIn(b *testing.B, dir, cache string, extra ...string) (*mcp.ClientSession, *server) {
	b.Helper()
	args := append([]string{"serve", "--tools", dir, "--cache-dir", cache}, extra...)
	cmd := exec.Command(binary, args...)
	s := &server{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "wasmcp-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		b.Fatalf("connecting: %v\n%s", err, s.stderr.String())
	}
	return cs, s
}

// fillCache compiles every module of dir into cache, as `wasmcp list` does.
func fillCache(b *testing.B, dir, cache string) {
	b.Helper()
	if out, err := exec.Command(binary, "list", "--tools", dir, "--cache-dir", cache).CombinedOutput(); err != nil {
		b.Fatalf("wasmcp list: %v\n%s", err, out)
	}
}

// BenchmarkStartupList measures, for a directory of 200 modules, the time
// from starting the server process (over stdio, with the SDK's client) to
// the answer of its initialize (init-ms) and of its first tools/list
// (list-ms), medians over the runs: with an empty compile cache, and with
// one that holds every module. Listing reads manifests only; compiling goes on in the
// background, so neither figure should depend on the cache.
//
//	go test -run '^$' -bench StartupList -benchtime 10x ./e2e/
func BenchmarkStartupList(b *testing.B) {
	dir := startupDir(b)
	warmCache := b.TempDir()
	fillCache(b, dir, warmCache)
	for _, cache := range []string{"cold", "warm"} {
		b.Run("cache="+cache, func(b *testing.B) {
			var inits, lists []time.Duration
			for b.Loop() {
				b.StopTimer()
				dirCache := warmCache
				if cache == "cold" {
					dirCache = b.TempDir()
				}
				b.StartTimer()
				start := time.Now()
				cs, s := serveStdioIn(b, dir, dirCache, "--log-level", "warn", "--watch=false")
				inits = append(inits, time.Since(start))
				res, err := cs.ListTools(context.Background(), nil)
				lists = append(lists, time.Since(start))
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Tools) != startupModules {
					b.Fatalf("listed %d tools; want %d\n%s", len(res.Tools), startupModules, s.stderr.String())
				}
				if err := cs.Close(); err != nil {
					b.Fatalf("closing: %v\n%s", err, s.stderr.String())
				}
				b.StartTimer()
			}
			b.ReportMetric(ms(median(inits)), "init-ms")
			b.ReportMetric(ms(median(lists)), "list-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkRestartFirstCall restarts the server on the 200-module
// directory with a compile cache that holds every module, and compares a
// tool's first call (first-ms, the median over restarts) with its later
// calls on the same client (later-ms, the median of 20 per restart, each
// after a 20 ms pause as an agent's would be). The first call is sent
// either once the server has logged that its background warm-up is over
// (after-warmup: what an agent that reads the tool list first sees; the
// server's resident memory then is rss-MiB), or right after initialize
// (at-once).
//
//	go test -run '^$' -bench RestartFirstCall -benchtime 5x ./e2e/
func BenchmarkRestartFirstCall(b *testing.B) {
	dir := startupDir(b)
	cache := b.TempDir()
	fillCache(b, dir, cache)
	guests := []struct {
		lang, tool string
		args       map[string]any
	}{
		{"go", "calculate", map[string]any{"a": 10, "b": 5, "operation": "add"}},
		{"c", "text_stats", map[string]any{"text": "The quick brown fox. It jumps!"}},
		{"wat", "random_uuid", nil},
	}
	for _, g := range guests {
		for _, when := range []string{"after-warmup", "at-once"} {
			b.Run(g.lang+"/"+when, func(b *testing.B) {
				params := &mcp.CallToolParams{Name: g.tool, Arguments: g.args}
				call := func(cs *mcp.ClientSession, s *server) time.Duration {
					start := time.Now()
					res, err := cs.CallTool(context.Background(), params)
					d := time.Since(start)
					if err != nil || res.IsError {
						b.Fatalf("calling %s: %v %v\n%s", g.tool, err, res, s.stderr.String())
					}
					return d
				}
				var first, later []time.Duration
				var rss float64
				for b.Loop() {
					b.StopTimer()
					cs, s := serveStdioIn(b, dir, cache, "--watch=false")
					if when == "after-warmup" {
						s.waitLog(b, "warm-up done")
						rss += procStatus(b, s, "VmRSS:")
					}
					b.StartTimer()
					first = append(first, call(cs, s))
					b.StopTimer()
					for range 20 {
						time.Sleep(20 * time.Millisecond) // the model thinking, not synchronisation
						later = append(later, call(cs, s))
					}
					if err := cs.Close(); err != nil {
						b.Fatalf("closing: %v\n%s", err, s.stderr.String())
					}
					b.StartTimer()
				}
				b.ReportMetric(ms(median(first)), "first-ms")
				b.ReportMetric(ms(median(later)), "later-ms")
				if when == "after-warmup" {
					b.ReportMetric(rss/float64(b.N)/(1<<20), "rss-MiB")
				}
			})
		}
	}
}
