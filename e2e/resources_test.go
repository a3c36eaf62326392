package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestInvoiceResources lists and reads the resources of the search_invoices
// example: a static one served from its manifest, one its module reads,
// and a template whose reads run the module with the invoice's id.
func TestInvoiceResources(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
			if r.URI == "invoices://all" && (r.Title != "All invoices" || r.MIMEType != "application/json" || r.Name != "invoices") {
				t.Errorf("invoices://all lost its description: %+v", r)
			}
		}
		if !slices.Contains(uris, "invoices://all") || !slices.Contains(uris, "invoices://about") || !slices.IsSorted(uris) {
			t.Errorf("resources/list = %v; want the invoice resources, sorted", uris)
		}
		templates, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "invoices://{id}" || templates.ResourceTemplates[0].Title != "Invoice by id" {
			t.Errorf("resources/templates/list = %+v", templates.ResourceTemplates)
		}

		about := read(t, cs, "invoices://about")
		if about.MIMEType != "text/plain" || !strings.Contains(about.Text, "made-up sample of 20 invoices") {
			t.Errorf("invoices://about = %+v", about)
		}
		for _, r := range list.Resources {
			if r.URI == "invoices://about" && r.Size != int64(len(about.Text)) {
				t.Errorf("invoices://about is listed with size %d; its contents are %d bytes", r.Size, len(about.Text))
			}
		}
		var all []map[string]any
		if c := read(t, cs, "invoices://all"); json.Unmarshal([]byte(c.Text), &all) != nil || len(all) != 20 || c.MIMEType != "application/json" {
			t.Errorf("invoices://all = %+v", c)
		}
		var one map[string]any
		if c := read(t, cs, "invoices://INV-2026-007"); json.Unmarshal([]byte(c.Text), &one) != nil || one["customer"] != "Stark Industries" {
			t.Errorf("invoices://INV-2026-007 = %+v", c)
		}

		// The module's own failure is the read's error, in its words.
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "invoices://INV-1999-001"})
		if err == nil || !strings.Contains(err.Error(), `there is no invoice "INV-1999-001"`) {
			t.Errorf("reading a missing invoice: %v", err)
		}
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nowhere://x"})
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound {
			t.Errorf("reading an unknown URI: %v; want resource not found", err)
		}
	})
}

func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("resources/read %s = %+v; want one contents for the URI", uri, res.Contents)
	}
	return res.Contents[0]
}

// TestResourcesReload adds, duplicates and removes modules of resources
// (and a prompt) with clients of both revisions watching: each change reaches them as
// resources/list_changed and a new list, and a URI a second file claims is
// a load error naming both files.
func TestResourcesReload(t *testing.T) {
	dir := t.TempDir()
	s := startHTTPIn(t, dir)
	type watcher struct {
		cs      *mcp.ClientSession
		changes listChanges
	}
	var watchers []watcher
	for _, v := range versions {
		changes := make(listChanges, 100)
		opts := &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changes <- struct{}{} }}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "watcher", Version: "1"}, opts).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url}, &mcp.ClientSessionOptions{ProtocolVersion: v})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		watchers = append(watchers, watcher{cs, changes})
	}
	check := func(what string, want ...string) {
		t.Helper()
		for _, w := range watchers {
			if what != "" {
				w.changes.wait(t, what)
			}
			list, err := w.cs.ListResources(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range list.Resources {
				uris = append(uris, r.URI)
			}
			if !slices.Equal(uris, want) {
				t.Fatalf("resources after %s = %v; want %v", what, uris, want)
			}
		}
	}
	check("", []string(nil)...)

	trap := wattest.Build(t, "trap")
	writeModule := func(stem, manifest string) {
		t.Helper()
		atomicWrite(t, filepath.Join(dir, stem+".manifest.json"), []byte(manifest))
		atomicWrite(t, filepath.Join(dir, stem+".wasm"), trap)
	}
	writeModule("a", `{"abi":1,"resources":[{"uri":"a://one","name":"one","text":"served by a"}],
		"prompts":[{"name":"hello","messages":[{"role":"user","content":{"type":"text","text":"hello from a"}}]}]}`)
	check("adding a module of resources", "a://one")
	if c := read(t, watchers[1].cs, "a://one"); c.Text != "served by a" {
		t.Errorf("a://one = %+v", c)
	}
	for _, w := range watchers {
		res, err := w.cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "hello"})
		if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "hello from a" {
			t.Errorf("the new module's prompt: %v, %v", res, err)
		}
	}

	writeModule("b", `{"abi":1,"resources":[{"uri":"a://one","name":"one","text":"served by b"},{"uri":"b://two","name":"two","text":"b"}]}`)
	check("adding a module that claims a served URI", "a://one", "b://two")
	s.waitLog(t, "resource URIs served by another module", "b.wasm", "a.wasm")
	if c := read(t, watchers[0].cs, "a://one"); c.Text != "served by a" {
		t.Errorf("a://one = %+v; want the first file's", c)
	}

	for _, ext := range []string{".wasm", ".manifest.json"} {
		if err := os.Remove(filepath.Join(dir, "a"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	check("removing the first module", "a://one", "b://two")
	if c := read(t, watchers[1].cs, "a://one"); c.Text != "served by b" {
		t.Errorf("a://one = %+v; want b's once a is gone", c)
	}
}

// TestNoTemplateCapture: a module whose template would match the URIs
// another module serves ("notes://s{+rest}" against "notes://{name}",
// and it sorts first among templates) does not serve it, so reads of
// those URIs still run the module that serves them, on both revisions;
// the rest of the later module serves as before.
func TestNoTemplateCapture(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "contents", "a")
	atomicWrite(t, filepath.Join(dir, "a.manifest.json"), []byte(`{"abi":1,"resourceTemplates":[{"uriTemplate":"notes://{name}","name":"notes"}]}`))
	wattest.Write(t, dir, "trap", "b")
	atomicWrite(t, filepath.Join(dir, "b.manifest.json"), []byte(`{"abi":1,"resourceTemplates":[{"uriTemplate":"notes://s{+rest}","name":"capture"}],
		"resources":[{"uri":"b://own","name":"own","text":"b's own"}]}`))
	s := startHTTPIn(t, dir)
	s.waitLog(t, "resource URIs served by another module", "b.wasm", "uri=notes://s{+rest}", "a.wasm")
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connectHTTP(t, s, v)
			templates, err := cs.ListResourceTemplates(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "notes://{name}" {
				t.Errorf("resources/templates/list = %+v; want a's alone", templates.ResourceTemplates)
			}
			if c := read(t, cs, "notes://secret"); c.Text != "read by the module" {
				t.Errorf("notes://secret = %+v; want it read by a's module", c)
			}
			if c := read(t, cs, "b://own"); c.Text != "b's own" {
				t.Errorf("b://own = %+v; want b's other resources served", c)
			}
		})
	}
}

// TestHostileReads reads resources and gets prompts from modules that
// flood, spin, trap and exhaust their memory: each is an error for the
// request that names the cause, bounded by the module's limits, and the
// server goes on serving.
func TestHostileReads(t *testing.T) {
	dir := t.TempDir()
	causes := map[string]string{
		"spam":    "more than 64 KiB",
		"loop":    "longer than its 500ms time limit",
		"trap":    "integer divide by zero",
		"grow":    "memory",
		"recurse": "call stack",
	}
	for name := range causes {
		wattest.Write(t, dir, name, name)
		// Only loop is meant to reach its time limit; recursing until the
		// call stack is exhausted can take longer than 500 ms on a loaded
		// machine, so the others have time to fail as they should.
		timeout := "10s"
		if name == "loop" {
			timeout = "500ms"
		}
		manifest := fmt.Sprintf(`{"abi":1,"resources":[{"uri":"hostile://%s","name":%q}],"prompts":[{"name":%q}],
			"limits":{"timeout":%q,"memory":"16MiB","output":"64KiB"}}`, name, name, name, timeout)
		if err := os.WriteFile(filepath.Join(dir, name+".manifest.json"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wattest.Write(t, dir, "trap", "static")
	if err := os.WriteFile(filepath.Join(dir, "static.manifest.json"), []byte(`{"abi":1,"resources":[{"uri":"still://here","name":"n","text":"still here"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startHTTPIn(t, dir)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connectHTTP(t, s, v)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for name, cause := range causes {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "hostile://" + name})
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError || !strings.Contains(rpc.Message, "reading hostile://"+name+" failed: module "+name) || !strings.Contains(rpc.Message, cause) {
					t.Errorf("reading hostile://%s: %v; want -32603 saying %q", name, err, cause)
				}
				_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
				if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError || !strings.Contains(rpc.Message, cause) {
					t.Errorf("getting prompt %s: %v; want -32603 saying %q", name, err, cause)
				}
			}
			if c := read(t, cs, "still://here"); c.Text != "still here" {
				t.Errorf("after the hostile reads: %+v", c)
			}
		})
	}
}
