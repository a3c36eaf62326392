package watch

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRelevant(t *testing.T) {
	for name, want := range map[string]bool{
		"calc.wasm":               true,
		"calc.manifest.json":      true,
		"/dir/calc.wasm":          true,
		".calc.wasm.swp":          false,
		".pack-123.tmp":           false,
		"calc.wasm~":              false,
		"calc.wasm.part":          false,
		"notes.txt":               false,
		".calc.manifest.json":     false,
		"calc.manifest.json.orig": false,
	} {
		if got := Relevant(name); got != want {
			t.Errorf("Relevant(%q) = %v; want %v", name, got, want)
		}
	}
}

// TestDirCoalescesABurst writes several relevant files and an irrelevant
// one in a burst: one reload follows, and only relevant changes cause one.
func TestDirCoalescesABurst(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloads := make(chan struct{}, 10)
	if err := Dir(ctx, dir, 100*time.Millisecond, slog.New(slog.DiscardHandler), func() { reloads <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.wasm", "a.manifest.json", "b.wasm"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-reloads:
	case <-time.After(time.Minute):
		t.Fatal("no reload after a change")
	}
	// An irrelevant file, then a relevant one: exactly one more reload,
	// and it comes after the relevant write.
	if err := os.WriteFile(filepath.Join(dir, ".a.wasm.swp"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "b.wasm")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reloads:
	case <-time.After(time.Minute):
		t.Fatal("no reload after a removal")
	}
	if len(reloads) != 0 {
		t.Errorf("%d extra reloads", len(reloads))
	}
}

func TestDirFailsForAMissingDirectory(t *testing.T) {
	err := Dir(context.Background(), filepath.Join(t.TempDir(), "nope"), time.Second, slog.New(slog.DiscardHandler), func() {})
	if err == nil {
		t.Fatal("watching a missing directory succeeded")
	}
}
