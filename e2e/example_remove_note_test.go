package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noteFixture is a tool directory with remove_note, a notes directory and
// a policy that mounts it writable at /notes.
type noteFixture struct {
	dir, notes, policy string
}

func newNoteFixture(t *testing.T) *noteFixture {
	t.Helper()
	f := &noteFixture{dir: t.TempDir(), notes: t.TempDir()}
	copyFile(t, filepath.Join(toolsDir, "remove_note.wasm"), filepath.Join(f.dir, "remove_note.wasm"))
	f.policy = filepath.Join(t.TempDir(), "policy.yaml")
	policy := fmt.Sprintf("modules:\n  remove_note:\n    sha256: %s\n    dirs:\n      /notes: {host: %s, write: true}\n", fileSHA(t, f.dir, "remove_note"), f.notes)
	if err := os.WriteFile(f.policy, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// note writes a note, and says whether it is still there.
func (f *noteFixture) note(t *testing.T, name string) func() bool {
	t.Helper()
	path := filepath.Join(f.notes, name)
	if err := os.WriteFile(path, []byte("a note"), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() bool {
		_, err := os.Stat(path)
		return err == nil
	}
}

func TestRemoveNoteAsksBeforeItActs(t *testing.T) {
	f := newNoteFixture(t)
	var mu sync.Mutex
	var asked []string
	answer := map[string]*mcp.ElicitResult{} // by the note the question names
	opts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		for note, a := range answer {
			if strings.Contains(req.Params.Message, note) {
				return a, nil
			}
		}
		return nil, errors.New("asked about no note of the test")
	}}
	forEachClientOf(t, f.dir, []string{"--policy", f.policy}, opts, func(t *testing.T, cs *mcp.ClientSession, version string) {
		yes, no := strings.ReplaceAll(t.Name(), "/", "_")+"-yes.txt", strings.ReplaceAll(t.Name(), "/", "_")+"-no.txt"
		mu.Lock()
		answer[yes] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
		answer[no] = &mcp.ElicitResult{Action: "decline"}
		asked = nil
		mu.Unlock()
		yesThere, noThere := f.note(t, yes), f.note(t, no)

		res := callTool(t, cs, "remove_note", map[string]any{"path": yes})
		if res.IsError || text(res) != "removed "+yes || yesThere() {
			t.Errorf("remove_note confirmed: %q (isError %v), note still there: %v", text(res), res.IsError, yesThere())
		}
		res = callTool(t, cs, "remove_note", map[string]any{"path": no})
		if res.IsError || text(res) != "kept "+no+": the user did not confirm (decline)" || !noThere() {
			t.Errorf("remove_note declined: %q (isError %v), note still there: %v", text(res), res.IsError, noThere())
		}
		mu.Lock()
		defer mu.Unlock()
		want := []string{
			fmt.Sprintf("Remove the note %s (6 bytes)? It cannot be undone.", yes),
			fmt.Sprintf("Remove the note %s (6 bytes)? It cannot be undone.", no),
		}
		if strings.Join(asked, "\n") != strings.Join(want, "\n") {
			t.Errorf("the user was asked %q; want %q, once each", asked, want)
		}
	})
}

func TestRemoveNoteNeedsAClientThatElicits(t *testing.T) {
	f := newNoteFixture(t)
	forEachClientOf(t, f.dir, []string{"--policy", f.policy}, nil, func(t *testing.T, cs *mcp.ClientSession, version string) {
		there := f.note(t, strings.ReplaceAll(t.Name(), "/", "_")+".txt")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remove_note", Arguments: map[string]any{"path": strings.ReplaceAll(t.Name(), "/", "_") + ".txt"}})
		wantMissingCapability(t, version, res, err, "tool remove_note needs the client capability elicitation, which the client did not declare")
		if !there() {
			t.Error("the note was removed without asking")
		}
	})
}
