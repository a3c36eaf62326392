package dispatch

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
)

func resourcesManifest(resources []abi.Resource, templates ...abi.ResourceTemplate) abi.Manifest {
	return abi.Manifest{ABI: abi.Version, Resources: resources, ResourceTemplates: templates}
}

func readFixture(t *testing.T) *fixture {
	t.Helper()
	text := "from the manifest"
	return newFixture(t, map[string]module{
		// trap fails if it runs: its static resource must not run it.
		"trap": {wat: "trap", manifest: resourcesManifest([]abi.Resource{
			{URI: "static://text", Name: "text", MIMEType: "text/plain", Text: &text},
			{URI: "static://blob", Name: "blob", Blob: []byte{0, 1, 2}},
		})},
		"contents": {wat: "contents", manifest: resourcesManifest(
			[]abi.Resource{{URI: "run://one", Name: "one", MIMEType: "text/markdown"}},
			abi.ResourceTemplate{URITemplate: "run://items/{id}", Name: "item"})},
		"echo": {wat: "echo", manifest: resourcesManifest(nil, abi.ResourceTemplate{URITemplate: "echo://{id}", Name: "echo"})},
		"fail": {wat: "fail", manifest: resourcesManifest([]abi.Resource{{URI: "fail://x", Name: "x"}})},
	}, Options{})
}

func readErr(t *testing.T, d *Dispatcher, uri string) *jsonrpc.Error {
	t.Helper()
	res, err := d.Read(context.Background(), uri)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("Read(%s) = %v, %v; want a JSON-RPC error", uri, res, err)
	}
	return rpc
}

func TestReadServesStaticContentsWithoutRunning(t *testing.T) {
	f := readFixture(t)
	res, err := f.d.Read(context.Background(), "static://text")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents; len(c) != 1 || c[0].URI != "static://text" || c[0].Text != "from the manifest" || c[0].MIMEType != "text/plain" {
		t.Errorf("contents = %+v", c[0])
	}
	res, err = f.d.Read(context.Background(), "static://blob")
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents; len(c) != 1 || string(c[0].Blob) != "\x00\x01\x02" {
		t.Errorf("contents = %+v", c[0])
	}
	if n := f.log.count("call"); n != 0 {
		t.Errorf("%d runs for static reads; want none", n)
	}
}

func TestReadRunsTheModule(t *testing.T) {
	f := readFixture(t)
	for uri, mime := range map[string]string{"run://one": "text/markdown", "run://items/7": ""} {
		res, err := f.d.Read(context.Background(), uri)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		if c := res.Contents; len(c) != 1 || c[0].URI != uri || c[0].Text != "read by the module" || c[0].MIMEType != mime {
			t.Errorf("%s: contents = %+v; want the module's text with the URI read and MIME type %q", uri, c[0], mime)
		}
	}
	if got := f.log.last("call")["tool"]; got != "contents resources/read" {
		t.Errorf("the read is logged as %q", got)
	}
}

func TestReadPassesTheURIAndTheTemplateVariables(t *testing.T) {
	f := readFixture(t)
	// echo writes back its stdin, which is not a read's answer: the error
	// shows what the module was given.
	e := readErr(t, f.d, "echo://42")
	if e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, `module echo: what resources/read wrote is not a read's answer`) || !strings.Contains(e.Message, `unknown field "arguments"`) {
		t.Errorf("error = %v", e)
	}
}

func TestReadOfAFailingModuleIsAnError(t *testing.T) {
	f := readFixture(t)
	e := readErr(t, f.d, "fail://x")
	if e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, "reading fail://x failed") || !strings.Contains(e.Message, "the widget is broken") {
		t.Errorf("error = %v", e)
	}
}

func TestReadOfAnUnknownURIIsNotFound(t *testing.T) {
	f := readFixture(t)
	if e := readErr(t, f.d, "nowhere://x"); e.Code != mcp.CodeResourceNotFound {
		t.Errorf("error = %v; want resource not found", e)
	}
}

func TestReadContentsAreChecked(t *testing.T) {
	tests := []struct {
		name string
		out  any
		want string
	}{
		{"no contents", map[string]any{}, `"contents" is empty or missing`},
		{"not a list", map[string]any{"contents": "x"}, `it must be {"contents"`},
		{"other uri", map[string]any{"contents": []any{map[string]any{"uri": "a://other", "text": "t"}}}, `are for "a://other", not the URI read`},
		{"neither", map[string]any{"contents": []any{map[string]any{}}}, `one of "text" and "blob"`},
		{"both", map[string]any{"contents": []any{map[string]any{"text": "t", "blob": "AA=="}}}, `one of "text" and "blob"`},
		{"bad blob", map[string]any{"contents": []any{map[string]any{"blob": "not base64"}}}, `"blob" is not base64`},
		{"bad mime", map[string]any{"contents": []any{map[string]any{"text": "t", "mimeType": "json"}}}, "is not a MIME type"},
		{"unknown field", map[string]any{"contents": []any{map[string]any{"text": "t", "_meta": map[string]any{}}}}, `unknown field "_meta"`},
		{"too many", map[string]any{"contents": make([]any, MaxContents+1)}, "over the limit of 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readContents("a://b", "", tt.out)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
	got, err := readContents("a://b", "text/plain", map[string]any{"contents": []any{map[string]any{"blob": "AAEC"}, map[string]any{"uri": "a://b", "text": "t", "mimeType": "text/csv"}}})
	if err != nil || len(got) != 2 || string(got[0].Blob) != "\x00\x01\x02" || got[0].MIMEType != "text/plain" || got[1].MIMEType != "text/csv" {
		t.Errorf("readContents = %+v, %v", got, err)
	}
}
