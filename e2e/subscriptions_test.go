package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestResourceSubscriptions subscribes a client of each revision, over
// HTTP and over stdio, to a static resource and to a URI a template
// matches (2025-11-25 with resources/subscribe, 2026-07-28 on a
// subscriptions/listen stream per URI, which the SDK client opens without
// waiting, so the test waits for the server's log of each), then
// changes the module in the watched directory: replacing its file tells
// the client of both URIs (the new version may read the template's
// differently); after it unsubscribes from the static one, a change of
// the manifest tells it of the template URI alone.
func TestResourceSubscriptions(t *testing.T) {
	manifest := func(text string) []byte {
		return []byte(`{"abi":1,"resources":[{"uri":"a://one","name":"one","text":"` + text + `"}],
			"resourceTemplates":[{"uriTemplate":"t://{id}","name":"t"}]}`)
	}
	for _, c := range []struct{ transport, version string }{
		{"http", "2025-11-25"}, {"http", "2026-07-28"}, {"stdio", "2025-11-25"}, {"stdio", "2026-07-28"},
	} {
		t.Run(c.transport+" "+c.version, func(t *testing.T) {
			dir := t.TempDir()
			atomicWrite(t, filepath.Join(dir, "a.manifest.json"), manifest("first"))
			atomicWrite(t, filepath.Join(dir, "a.wasm"), wattest.Build(t, "trap"))

			updates := make(chan string, 100)
			client := mcp.NewClient(&mcp.Implementation{Name: "subscriber", Version: "1"}, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates <- req.Params.URI },
			})
			flags := []string{"--tools", dir, "--cache-dir", cacheDir, "--log-level", "debug"}
			var (
				tr mcp.Transport
				s  *server
			)
			if c.transport == "http" {
				s = startBinary(t, binary, flags...)
				tr = &mcp.StreamableClientTransport{Endpoint: s.url}
			} else {
				cmd := exec.Command(binary, append([]string{"serve"}, flags...)...)
				s = &server{cmd: cmd, stderr: &lockedBuffer{}}
				cmd.Stderr = s.stderr
				tr = &mcp.CommandTransport{Command: cmd}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: c.version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
				t.Fatalf("resources capability = %+v; want subscribe", r)
			}
			for _, u := range []string{"a://one", "t://x"} {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: u}); err != nil {
					t.Fatalf("subscribing to %s: %v", u, err)
				}
				s.waitLog(t, "resource subscribed", "uri="+u)
			}
			// expect waits for updates of the URIs want, in any order: on
			// 2026-07-28 each URI has its own listen stream, and streams are
			// not ordered with each other.
			expect := func(what string, want ...string) {
				t.Helper()
				var got []string
				for range want {
					select {
					case u := <-updates:
						got = append(got, u)
					case <-ctx.Done():
						t.Fatalf("after %s: resources/updated for %v; want %v", what, got, want)
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("after %s: resources/updated for %v; want %v", what, got, want)
				}
			}

			atomicWrite(t, filepath.Join(dir, "a.wasm"), wattest.Build(t, "echo"))
			expect("replacing the module", "a://one", "t://x")

			if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "a://one"}); err != nil {
				t.Fatal(err)
			}
			s.waitLog(t, "resource unsubscribed", "uri=a://one")
			atomicWrite(t, filepath.Join(dir, "a.manifest.json"), manifest("second"))
			// The server sends in URI order, so a://one's would come first
			// (on 2025-11-25, where one stream carries both).
			expect("changing the manifest after unsubscribing from a://one", "t://x")
		})
	}
}
