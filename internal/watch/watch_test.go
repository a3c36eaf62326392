package watch

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestRelevant(t *testing.T) {
	for name, want := range map[string]bool{
		"calc.wasm":                  true,
		"calc.manifest.json":         true,
		"/dir/calc.wasm":             true,
		".calc.wasm.swp":             false,
		".pack-123.tmp":              false,
		"calc.wasm~":                 false,
		"calc.wasm.part":             false,
		"notes.txt":                  false,
		".calc.manifest.json":        false,
		"calc.manifest.json.orig":    false,
		"calc.wasm.minisig":          true,
		"calc.manifest.json.minisig": true,
		".calc.wasm.minisig":         false,
		"notes.txt.minisig":          false,
		"calc.wasm.minisig.tmp":      false,
	} {
		if got := relevant(name); got != want {
			t.Errorf("relevant(%q) = %v; want %v", name, got, want)
		}
	}
}

// reloads is what a test watcher reports: the changed paths of each reload.
type reloads chan []string

// start watches dir and files until the test ends.
func start(t *testing.T, dir string, files []string, quiet time.Duration) reloads {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := make(reloads, 100)
	if err := Dir(ctx, dir, files, quiet, slog.New(slog.DiscardHandler), func(changed []string) { r <- changed }); err != nil {
		t.Fatal(err)
	}
	return r
}

// next waits for the next reload.
func (r reloads) next(t *testing.T) []string {
	t.Helper()
	select {
	case changed := <-r:
		return changed
	case <-time.After(time.Minute):
		t.Fatal("no reload after a change")
		return nil
	}
}

// until waits for a reload that names path, and fails on a reload that
// names anything but path and also.
func (r reloads) until(t *testing.T, path string, also ...string) {
	t.Helper()
	for {
		changed := r.next(t)
		for _, p := range changed {
			if p != path && !slices.Contains(also, p) {
				t.Fatalf("reload for %v; want only %s", changed, path)
			}
		}
		if slices.Contains(changed, path) {
			return
		}
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestDirCoalescesABurst writes several relevant files and an irrelevant
// one in a burst: one reload follows, and only relevant changes cause one.
func TestDirCoalescesABurst(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, 100*time.Millisecond)
	for _, name := range []string{"a.wasm", "a.manifest.json", "b.wasm"} {
		writeFile(t, filepath.Join(dir, name))
	}
	r.next(t)
	// An irrelevant file, then a relevant one: exactly one more reload,
	// and it comes after the relevant write.
	writeFile(t, filepath.Join(dir, ".a.wasm.swp"))
	remove(t, filepath.Join(dir, "b.wasm"))
	r.next(t)
	if len(r) != 0 {
		t.Errorf("%d extra reloads", len(r))
	}
}

// TestDirIgnoresWhatCannotChangeTheTools makes changes the catalog does not
// read, then one it does: the first reload names only the module.
func TestDirIgnoresWhatCannotChangeTheTools(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, 100*time.Millisecond)
	writeFile(t, filepath.Join(dir, "notes.txt"))
	writeFile(t, filepath.Join(dir, ".calc.wasm.swp"))
	writeFile(t, filepath.Join(dir, "calc.wasm~"))
	writeFile(t, filepath.Join(dir, ".pack-1.tmp"))
	rename(t, filepath.Join(dir, ".pack-1.tmp"), filepath.Join(dir, "calc.wasm.bak"))
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sub, "nested.wasm"))
	writeFile(t, filepath.Join(sub, "nested.manifest.json"))

	module := filepath.Join(dir, "calc.wasm")
	writeFile(t, module)
	if got := r.next(t); !slices.Equal(got, []string{module}) {
		t.Errorf("reload for %v; want only %s", got, module)
	}
}

// TestDirSeesEveryChangeToAModule makes each kind of change to modules and
// manifests, one at a time: each brings a reload naming the file.
func TestDirSeesEveryChangeToAModule(t *testing.T) {
	dir := t.TempDir()
	r := start(t, dir, nil, 100*time.Millisecond)
	module := filepath.Join(dir, "calc.wasm")
	manifest := filepath.Join(dir, "calc.manifest.json")
	temp := filepath.Join(dir, ".calc.wasm.tmp")

	// A write's events may straddle two reloads: each step may see the
	// last one's too, but never anything else.
	step := func(path string) { r.until(t, path, module, manifest) }

	writeFile(t, module)
	step(module)
	writeFile(t, manifest)
	step(manifest)
	if err := os.WriteFile(module, []byte("xy"), 0o644); err != nil {
		t.Fatal(err)
	}
	step(module)
	// Written beside it, then renamed into place, as `wasmcp pack` and
	// editors do.
	writeFile(t, temp)
	rename(t, temp, module)
	step(module)
	remove(t, manifest)
	step(manifest)
	// Renamed away: the module is gone, the backup is not a module.
	rename(t, module, module+".bak")
	step(module)
}

// TestDirWatchesFilesElsewhere watches a file in another directory that
// does not exist yet: it is created by a rename into place, written,
// removed and created again, and each is one reload naming only it, whatever
// else happens in its directory.
func TestDirWatchesFilesElsewhere(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	policy := filepath.Join(other, "policy.yaml")
	r := start(t, dir, []string{policy}, 50*time.Millisecond)

	writeFile(t, policy+".tmp")
	rename(t, policy+".tmp", policy)
	r.until(t, policy)
	writeFile(t, filepath.Join(other, "notes.txt"))
	writeFile(t, filepath.Join(other, "policy.wasm"))
	if err := os.WriteFile(policy, []byte("modules: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.until(t, policy)
	remove(t, policy)
	r.until(t, policy)
	writeFile(t, policy)
	r.until(t, policy)

	// Its directory removed: the file is gone, and the watch with it.
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	r.until(t, other, policy)
}

// TestDirCoalescesFilesWithTheDirectory changes a module and the watched
// file while a reload runs: the next reload names both.
func TestDirCoalescesFilesWithTheDirectory(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	policy := filepath.Join(other, "policy.yaml")
	module := filepath.Join(dir, "calc.wasm")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloading, resume := make(chan []string), make(chan struct{})
	err := Dir(ctx, dir, []string{policy}, 50*time.Millisecond, slog.New(slog.DiscardHandler), func(changed []string) {
		select {
		case reloading <- changed:
			<-resume
		case <-ctx.Done():
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "first.wasm")
	writeFile(t, first)
	<-reloading
	// The watcher is held in the reload, so both changes wait for it
	// together.
	writeFile(t, module)
	writeFile(t, policy)
	resume <- struct{}{}
	// The first write's last events may come only now.
	got := slices.DeleteFunc(<-reloading, func(p string) bool { return p == first })
	if want := []string{module, policy}; !slices.Equal(got, want) {
		t.Errorf("reload for %v; want %v", got, want)
	}
	close(resume)
}

// TestDirTakesTheFileInTheToolDirectory watches a file that lives in the
// tool directory, under a name the directory's rule would ignore.
func TestDirTakesTheFileInTheToolDirectory(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	r := start(t, dir, []string{policy}, 50*time.Millisecond)
	writeFile(t, filepath.Join(dir, "notes.txt"))
	writeFile(t, policy)
	r.until(t, policy)
}

func TestDirFailsForAMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, tc := range []struct {
		name  string
		dir   string
		files []string
	}{
		{"tool directory", missing, nil},
		{"a file's directory", t.TempDir(), []string{filepath.Join(missing, "policy.yaml")}},
	} {
		if err := Dir(context.Background(), tc.dir, tc.files, time.Second, slog.New(slog.DiscardHandler), func([]string) {}); err == nil {
			t.Errorf("%s missing: watching succeeded", tc.name)
		}
	}
}
