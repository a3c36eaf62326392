// Command remove_note is a wasmcp tool that removes a note from the
// directory the operator mounts at /notes, writable, once the user has
// confirmed it: it asks through the client (MCP elicitation) before it
// acts, and acts only on a yes.
package main

import (
	"errors"
	"fmt"
	"os"
	"path"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// root is where the policy mounts the notes directory.
const root = "/notes"

type args struct {
	Path string `json:"path"`
}

// confirmation is the form the user is asked to fill in.
var confirmation = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"confirm": map[string]any{"type": "boolean", "title": "Remove it", "description": "Yes to remove the note for good.", "default": false},
	},
	"required": []string{"confirm"},
}

// confirmed says whether the user accepted the form and said yes.
func confirmed(r *guest.ElicitResult) bool {
	yes, _ := r.Content["confirm"].(bool)
	return r.Action == guest.Accept && yes
}

// remove asks before it removes. Everything before the ask only reads, as
// a tool that asks must: on MCP 2026-07-28 it runs again from the start
// once the answer is in.
func remove(in args) (string, error) {
	rel := path.Clean("/" + in.Path)
	if rel == "/" {
		return "", errors.New("path names no note: give the path of a file in the notes directory")
	}
	full := path.Join(root, rel)
	info, err := os.Stat(full)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("no note %q", in.Path)
	case err != nil:
		return "", fmt.Errorf("cannot read %q: %v", in.Path, err)
	case info.IsDir():
		return "", fmt.Errorf("%q is a folder; only a note can be removed", in.Path)
	}
	answer, err := guest.Elicit(guest.Elicitation{ID: "confirm", Message: fmt.Sprintf("Remove the note %s (%d bytes)? It cannot be undone.", rel[1:], info.Size()), Schema: confirmation})
	if err != nil {
		return "", fmt.Errorf("could not ask the user to confirm: %v", err)
	}
	if !confirmed(answer) {
		return fmt.Sprintf("kept %s: the user did not confirm (%s)", rel[1:], answer.Action), nil
	}
	if err := os.Remove(full); err != nil {
		return "", fmt.Errorf("cannot remove %q: %v", in.Path, err)
	}
	return "removed " + rel[1:], nil
}

func main() {
	guest.Main(guest.Text("remove_note", remove))
}
