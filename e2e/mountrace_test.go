package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestConcurrentCallsCannotRenameTheirWayOut serves mountrace.wat as three
// tools (swap, read, write) that a policy grants one writable directory,
// holding the operator's d/link, a link to a directory outside. Calls of
// swap rename the directories under the name x while a concurrent call of
// read opens x/link/secret, or of write creates x/link/pwned, 20,000 times or more.
// Neither reaches outside the mount, and the counts the tool reports show
// the race was run: its lookups met both the guest's own directory and
// the operator's.
func TestConcurrentCallsCannotRenameTheirWayOut(t *testing.T) {
	dir, top := t.TempDir(), t.TempDir()
	mount, outside := filepath.Join(top, "m"), filepath.Join(top, "outside")
	for _, d := range []string{outside, filepath.Join(mount, "d"), filepath.Join(mount, "e", "link")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("TOPSECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mount, "e", "link", "secret"), []byte("decoy"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(mount, "d", "link")); err != nil {
		t.Fatal(err)
	}
	wattest.Write(t, dir, "mountrace", "mountrace")
	var tools []string
	for _, name := range []string{"swap", "read", "write"} {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"description":"races renames in a writable mount","inputSchema":{"type":"object"}}`, name))
	}
	sidecar(t, dir, "mountrace", `{"abi":1,"tools":[`+strings.Join(tools, ",")+`],"permissions":{"dirs":[{"guest":"/m","write":true}]}}`)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	grant := fmt.Sprintf("modules:\n  mountrace:\n    sha256: %s\n    dirs:\n      /m: {host: %s, write: true}\n", fileSHA(t, dir, "mountrace"), mount)
	if err := os.WriteFile(policy, []byte(grant), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startHTTPIn(t, dir, "--policy", policy, "--concurrency", "4", "--timeout", "2m")
	cs := connectHTTP(t, s, "2026-07-28")

	// The race is run again, up to a few times, when the scheduler gave
	// the swap too few turns for the lookups to meet both directories.
	const tries = 4
	for _, tool := range []string{"read", "write"} {
		for try := 1; ; try++ {
			got, swapped := raceOnce(t, cs, mount, tool)
			if got {
				break
			}
			if try == tries {
				t.Fatalf("%s: in %d tries its lookups did not meet both directories (last swap: %q), so the race was not run", tool, tries, swapped)
			}
		}
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); len(entries) != 1 || string(b) != "TOPSECRET" {
		t.Errorf("the directory outside the mount changed: %v, secret %q", entries, b)
	}
}

// raceOnce calls swap and tool together, and reports whether tool's
// lookups met both directories, with what swap said. It fails the test if
// tool reached outside the mount.
func raceOnce(t *testing.T, cs *mcp.ClientSession, mount, tool string) (met bool, swapped string) {
	t.Helper()
	var wg sync.WaitGroup
	var swap *mcp.CallToolResult
	var swapErr error
	wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		swap, swapErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "swap"})
	})
	res := callTool(t, cs, tool, nil)
	wg.Wait()
	if swapErr != nil {
		t.Fatalf("swap: %v", swapErr)
	}
	if swap.IsError {
		t.Fatalf("swap failed: %q", text(swap))
	}
	got := text(res)
	var opened, eperm, other int
	if _, err := fmt.Sscanf(got, "held %d %d %d", &opened, &eperm, &other); err != nil || res.IsError {
		t.Fatalf("%s = %q (isError %v): it reached outside the mount", tool, got, res.IsError)
	}
	for _, marker := range []string{"started", "done"} {
		if err := os.Remove(filepath.Join(mount, marker)); err != nil {
			t.Fatal(err)
		}
	}
	if opened == 0 || eperm == 0 {
		t.Logf("%s = %q, swap = %q: the lookups did not meet both directories", tool, got, text(swap))
		return false, text(swap)
	}
	return true, text(swap)
}
