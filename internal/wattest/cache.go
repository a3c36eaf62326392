package wattest

import (
	"os"
	"testing"
)

// CacheDir makes a directory for a compilation cache, removed when the
// test ends. t.TempDir's removal is not enough on wasmtime: its cache
// worker, a thread of the process that outlives every engine, writes
// usage statistics beside the cache's entries after the engine is
// closed, and a directory it writes to while it is removed is not empty.
// Each pass removes what the thread had written before it, and the
// thread writes a few files per module, so the passes end.
func CacheDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "wasmcp-cache-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := os.RemoveAll(dir)
		for i := 0; err != nil && i < 100; i++ {
			err = os.RemoveAll(dir)
		}
		if err != nil {
			t.Errorf("removing the cache: %v", err)
		}
	})
	return dir
}
