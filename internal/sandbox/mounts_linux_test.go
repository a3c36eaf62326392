package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// TestGuestRenameRaceStaysInside is the red team's race with real guests,
// on both engines: one call of mountrace.wat swaps the guest's own
// directory and the operator's (whose link leads out) under the name x,
// while another, sharing the writable mount, opens x/link/secret 20,000
// times, or creates x/link/pwned. Neither reads nor writes outside the
// mount. The reader's counts show that its lookups met both directories,
// so the race was run, not missed. On the check-then-reopen this replaced,
// wazero's reader read the secret in 100 runs of 100 under -race (99 of
// 100 without), and the writer wrote outside in 100 of 100 either way.
func TestGuestRenameRaceStaysInside(t *testing.T) {
	e := newEngine(t)
	c, err := e.Compile(context.Background(), wattest.Build(t, "mountrace"))
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"read", "write"} {
		t.Run(role, func(t *testing.T) {
			mount, outside := raceTree(t)
			if err := os.Rename(filepath.Join(mount, "x"), filepath.Join(mount, "e")); err != nil {
				t.Fatal(err)
			}
			lim := Limits{Timeout: 5 * time.Minute, Memory: 1 << 20, Output: 4 << 10}
			mounts := []Mount{{Host: mount, Guest: "/m", Write: true}}
			var wg sync.WaitGroup
			var swap Outcome
			wg.Go(func() {
				swap = c.Run(context.Background(), Run{Args: []string{"mountrace", "swap"}, Limits: lim, Mounts: mounts})
			})
			race := c.Run(context.Background(), Run{Args: []string{"mountrace", role}, Limits: lim, Mounts: mounts})
			wg.Wait()
			if swap.Failure != nil || !strings.HasPrefix(string(swap.Stdout), "swapped ") {
				t.Fatalf("the swapper: %q, %v", swap.Stdout, swap.Failure)
			}
			if race.Failure != nil {
				t.Fatalf("the %s: %v", role, race.Failure)
			}
			out := string(race.Stdout)
			var opened, eperm, other int
			if _, err := fmt.Sscanf(out, "held %d %d %d", &opened, &eperm, &other); err != nil {
				t.Fatalf("the %s wrote %q: it reached outside the mount", role, out)
			}
			if opened == 0 || eperm == 0 {
				t.Fatalf("the %s's lookups did not meet both directories (%s): the race was not run", role, out)
			}
			if _, err := os.Stat(filepath.Join(outside, "pwned")); err == nil {
				t.Fatalf("the %s created a file outside the mount", role)
			}
			t.Logf("%s on %s: %s; swapper: %s", role, e.Name(), out, swap.Stdout)
		})
	}
}

// TestGuestCannotCreateInReadOnlyMount has a guest open, in a read-only
// mount, a new file with O_CREAT and its file with O_TRUNC, asking only to
// read: wazero's ReadFS let both through (a new empty file, a truncated
// one). Both are refused, EROFS on wazero and EPERM on wasmtime, and the
// mount is unchanged.
func TestGuestCannotCreateInReadOnlyMount(t *testing.T) {
	e := newEngine(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := compile(t, e, "rocreate").Run(context.Background(), Run{Limits: hostileLimits, Mounts: []Mount{{Host: dir, Guest: "/m"}}})
	want := "69 69 "
	if e.Name() == "wasmtime" {
		want = "63 63 "
	}
	if out.Failure != nil || string(out.Stdout) != want {
		t.Errorf("create and truncate = %q, %v; want %q", out.Stdout, out.Failure, want)
	}
	entries, _ := os.ReadDir(dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); len(entries) != 1 || string(b) != "contents" {
		t.Errorf("the read-only mount changed: %d entries, f holds %q", len(entries), b)
	}
}
