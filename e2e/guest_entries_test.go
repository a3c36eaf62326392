package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkGuestEntries reads a note and gets a prompt from the module serving
// them in dir (testdata/notes.manifest.json declares them), completes the
// notes' ids from the module, through the
// server and the Go SDK's client, and checks that a read the module fails,
// and answers the SDK refuses to write, are the client's errors with the
// module's message.
func checkGuestEntries(t *testing.T, dir string) {
	t.Helper()
	s := startHTTPIn(t, dir)
	for _, version := range versions {
		cs := connectHTTP(t, s, version)
		if c := read(t, cs, "notes://a"); c.Text != "note A" || c.MIMEType != "text/plain" {
			t.Errorf("%s: notes://a = %+v; want note A as text/plain", version, c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://z"})
		if err == nil || !strings.Contains(err.Error(), "there is no note z: the notes are a, b") {
			t.Errorf("%s: reading a missing note: %v; want the module's error", version, err)
		}
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://none"})
		if err == nil || !strings.Contains(err.Error(), "the read returned no contents") {
			t.Errorf("%s: a read without contents: %v; want the SDK's error", version, err)
		}
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "broken_note"})
		if err == nil || !strings.Contains(err.Error(), `the prompt's messages[0].role is "system", not user or assistant`) {
			t.Errorf("%s: a prompt with a system message: %v; want the SDK's error", version, err)
		}
		res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarise_note", Arguments: map[string]string{"id": "b"}})
		if err != nil {
			t.Fatalf("%s: prompts/get: %v", version, err)
		}
		if len(res.Messages) != 1 || res.Messages[0].Role != "user" || res.Description != "Summary of note b" {
			t.Fatalf("%s: summarise_note = %+v", version, res)
		}
		if text, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || text.Text != "Summarise note b: note B" {
			t.Errorf("%s: summarise_note's message = %+v", version, res.Messages[0].Content)
		}
		for _, c := range []struct {
			ref   *mcp.CompleteReference
			value string
			want  string
		}{
			{&mcp.CompleteReference{Type: "ref/resource", URI: "notes://{id}"}, "", "a b"},
			{&mcp.CompleteReference{Type: "ref/prompt", Name: "summarise_note"}, "b", "b"},
		} {
			got, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: c.ref, Argument: mcp.CompleteParamsArgument{Name: "id", Value: c.value}})
			if err != nil || strings.Join(got.Completion.Values, " ") != c.want {
				t.Errorf("%s: completing %+v id %q: %+v, %v; want %s", version, c.ref, c.value, got, err, c.want)
			}
		}
	}
}

// TestPythonResourcesAndPrompts serves a resource template and a prompt,
// and completes them, from a Python module made with the SDK's
// @wasmcp.resources, @wasmcp.prompts and @wasmcp.completions.
func TestPythonResourcesAndPrompts(t *testing.T) {
	manifest, err := os.ReadFile("testdata/notes.manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	buildPython(t, dir, "notes", "testdata/notes_py", string(manifest))
	checkGuestEntries(t, dir)
}

// TestJavaScriptResourcesAndPrompts serves the same from a JavaScript
// module made with the SDK's resources(), prompts() and completions().
func TestJavaScriptResourcesAndPrompts(t *testing.T) { checkGuestEntries(t, buildJS(t, "notes")) }
