//go:build wasmtime && cgo

package sandbox

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// A call from a snapshot gets its memory from the snapshot's image, which
// wasmtime maps copy-on-write from the memfd it keeps the module's memory
// image in: while a prepared instance waits for its call, that memfd is
// mapped once more.
func TestWasmtimeSnapshotCallsMapTheImage(t *testing.T) {
	c := snapshotted(t, newEngine(t), "bundle")
	if c.snap.image == nil || c.snap.memory != nil {
		t.Fatal("the snapshot on wasmtime is not an image of its own")
	}
	before := imageMappings(t)
	p := c.Prepare(context.Background(), reactorRun(""))
	if p == nil {
		t.Fatal("the snapshotted reactor was not prepared")
	}
	p.Memory() // the instance is made and waits for its call
	if during := imageMappings(t); during <= before {
		t.Errorf("%d mappings of wasmtime's memory images while an instance waits, %d before: its memory is not the image's", during, before)
	}
	out := p.Start(context.Background(), Run{Stdin: []byte("in")})
	if want := "bundle|10|22|11|in|"; !strings.HasPrefix(string(out.Stdout), want) {
		t.Errorf("prepared call: %+v %q, want it to begin %q", out.Failure, out.Stdout, want)
	}
}

// imageMappings counts this process's mappings of wasmtime's memory
// images.
func imageMappings(t *testing.T) int {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(maps, []byte("wasm-memory-image"))
}
