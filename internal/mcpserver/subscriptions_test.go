package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// subsManifest declares two static resources and a template, the text of
// a://one being the argument.
const subsManifest = `{"abi":1,"resources":[{"uri":"a://one","name":"one","text":%q},{"uri":"a://two","name":"two","text":"two"}],
	"resourceTemplates":[{"uriTemplate":"t://{id}","name":"t"}]}`

// subsServer serves a module of subsManifest from a directory that is not
// watched; the test reloads the registry it returns.
func subsServer(t *testing.T) (*Server, *registry.Registry, string) {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "a")
	write(t, filepath.Join(dir, "a.manifest.json"), fmt.Sprintf(subsManifest, "first"))
	reg, d := openDir(t, dir)
	return New(reg, d, Options{Version: "test"}), reg, dir
}

// connectUpdates connects an in-memory 2025-11-25 client (a session, with
// resources/subscribe) whose resources/updated notifications arrive on
// the returned channel.
func connectUpdates(t *testing.T, s *Server) (*mcp.ClientSession, *mcp.ServerSession, <-chan string) {
	t.Helper()
	updates := make(chan string, 100)
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updates <- req.Params.URI
	}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ss, updates
}

func subscribe(t *testing.T, cs *mcp.ClientSession, uris ...string) {
	t.Helper()
	for _, u := range uris {
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: u}); err != nil {
			t.Fatalf("subscribing to %s: %v", u, err)
		}
	}
}

func nextUpdate(t *testing.T, updates <-chan string) string {
	t.Helper()
	select {
	case u := <-updates:
		return u
	case <-time.After(time.Minute):
		t.Fatal("no resources/updated notification")
		return ""
	}
}

func TestSubscriptionsAreAdvertised(t *testing.T) {
	s, _, _ := subsServer(t)
	cs, _, _ := connectUpdates(t, s)
	if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.Subscribe {
		t.Errorf("resources capability = %+v; want subscribe", r)
	}
}

// TestReloadNotifiesSubscribersOfChangedResources changes a://one's
// contents, which loads the module anew: its subscriber hears of a://one,
// of a://two (unchanged in declaration, but its module is new) and of the
// template URI it subscribed to (the new module may read it otherwise). Then
// it unsubscribes from a://one and a://two, and the next reload tells it
// only of the template URI.
func TestReloadNotifiesSubscribersOfChangedResources(t *testing.T) {
	s, reg, dir := subsServer(t)
	cs, _, updates := connectUpdates(t, s)
	subscribe(t, cs, "a://one", "a://two", "t://x")

	write(t, filepath.Join(dir, "a.manifest.json"), fmt.Sprintf(subsManifest, "second"))
	if err := reg.Reload(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a://one", "a://two", "t://x"} {
		if got := nextUpdate(t, updates); got != want {
			t.Errorf("updated %s; want %s", got, want)
		}
	}

	for _, u := range []string{"a://one", "a://two"} {
		if err := cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: u}); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "a.manifest.json"), fmt.Sprintf(subsManifest, "third"))
	if err := reg.Reload(); err != nil {
		t.Fatal(err)
	}
	// Sent in URI order, so a://one's would come first.
	if got := nextUpdate(t, updates); got != "t://x" {
		t.Errorf("updated %s after unsubscribing; want only t://x", got)
	}
}

// TestRemovedResourceIsNotNotified removes the module: no URI it served
// is updated, since none exists.
func TestRemovedResourceIsNotNotified(t *testing.T) {
	s, reg, dir := subsServer(t)
	_, _, updates := connectUpdates(t, s)
	cs, _, _ := connectUpdates(t, s)
	subscribe(t, cs, "a://one")
	for _, f := range []string{"a.wasm", "a.manifest.json"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	old := reg.Current()
	if err := reg.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := s.subs.changed(old, reg.Current()); len(got) != 0 {
		t.Errorf("changed = %v; want none for a removed resource", got)
	}
	select {
	case u := <-updates:
		t.Errorf("a session that did not subscribe was told of %s", u)
	default:
	}
}

func TestSubscribeRefusesUnservedURIs(t *testing.T) {
	s, _, _ := subsServer(t)
	cs, _, _ := connectUpdates(t, s)
	err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "nowhere://x"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound {
		t.Fatalf("subscribing to an unserved URI: %v; want error %d", err, mcp.CodeResourceNotFound)
	}
}

// TestSubscribeRefusesOverlongURIs subscribes to a URI the template
// matches, one byte over abi.MaxURI: refused, and the limit is named.
func TestSubscribeRefusesOverlongURIs(t *testing.T) {
	s, _, _ := subsServer(t)
	cs, _, _ := connectUpdates(t, s)
	uri := "t://" + strings.Repeat("x", abi.MaxURI-3)
	err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, fmt.Sprint(abi.MaxURI)) {
		t.Fatalf("subscribing to a %d-byte URI: %v; want error %d naming the limit", len(uri), err, jsonrpc.CodeInvalidParams)
	}
	subscribe(t, cs, uri[:abi.MaxURI])
}

// TestSubscriptionsAreBoundedPerSession subscribes one session to
// MaxSubscriptions template URIs: the next is refused, a repeat is not,
// and another session is not held to the first one's count.
func TestSubscriptionsAreBoundedPerSession(t *testing.T) {
	s, _, _ := subsServer(t)
	cs, _, _ := connectUpdates(t, s)
	for i := range MaxSubscriptions {
		subscribe(t, cs, fmt.Sprintf("t://%d", i))
	}
	subscribe(t, cs, "t://0")
	err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "t://over"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("subscription %d: %v; want error %d", MaxSubscriptions+1, err, jsonrpc.CodeInvalidParams)
	}
	other, _, _ := connectUpdates(t, s)
	subscribe(t, other, "t://over")
}

// TestEndedSessionsSubscriptionsAreDropped ends a subscribed session: the
// next subscription forgets it.
func TestEndedSessionsSubscriptionsAreDropped(t *testing.T) {
	s, _, _ := subsServer(t)
	cs, ss, _ := connectUpdates(t, s)
	subscribe(t, cs, "a://one", "t://1")
	cs.Close()
	ss.Wait()
	other, _, _ := connectUpdates(t, s)
	subscribe(t, other, "a://two")
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if len(s.subs.bySession) != 1 {
		t.Errorf("%d sessions hold subscriptions; want only the live one", len(s.subs.bySession))
	}
}

// TestTemplateURIsAreBoundedInAll subscribes sessions that end without
// unsubscribing to MaxTemplateURIs distinct URIs of a template, as the
// SDK keeps an entry for each: the next distinct one is refused, while a
// URI taken before and a declared resource still may be subscribed to.
func TestTemplateURIsAreBoundedInAll(t *testing.T) {
	s, _, _ := subsServer(t)
	for start := 0; start < MaxTemplateURIs; start += MaxSubscriptions {
		cs, ss, _ := connectUpdates(t, s)
		for i := start; i < min(start+MaxSubscriptions, MaxTemplateURIs); i++ {
			subscribe(t, cs, fmt.Sprintf("t://%d", i))
		}
		cs.Close()
		ss.Wait()
	}
	cs, _, _ := connectUpdates(t, s)
	err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "t://one-more"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, fmt.Sprint(MaxTemplateURIs)) {
		t.Fatalf("a template URI past the bound: %v; want error %d naming it", err, jsonrpc.CodeInvalidParams)
	}
	subscribe(t, cs, "t://7", "a://one")
}
