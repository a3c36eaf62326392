package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestEngineWordsNeverReachTheModel feeds the classification what an
// engine says when it fails in a way nobody planned for: the model is told
// a short sentence, and the engine's words are kept for the log.
func TestEngineWordsNeverReachTheModel(t *testing.T) {
	engineText := `error while executing at wasm backtrace:
    0:    0x7b0 - <unknown>!<wasm function 41>
Caused by:
    Pointer out of bounds: Region { start: 4294967280, len: 16 }
Stack backtrace:
   0: anyhow::error::<impl anyhow::Error>::msg
             at /root/.cargo/registry/src/anyhow-1.0.98/src/error.rs:83:36
   1: _cgo_topofstack
   2: runtime.cgocallbackg1
             at /usr/local/go/src/runtime/cgocall.go:446 +0x3b0
runtime error: index out of range [56] with length 48 (recovered by wazero)
Go runtime stack trace:
goroutine 7 [running]:
github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1.pollOneoffFn(...)
	/root/go/pkg/mod/github.com/tetratelabs/wazero@v1.12.0/imports/wasi_snapshot_preview1/poll.go:117`
	leaks := []string{"backtrace", "anyhow", ".rs", ".go", "cgo", "goroutine", "wazero", "wasmtime", "0x7b0", "Pointer", "runtime error"}
	mem := &idleMemory{}
	for name, end := range map[string]ending{
		"an engine error":         {err: errors.New(engineText)},
		"a trap of no known kind": {trap: engineText},
		"a trap with its error":   {trap: "wasm trap: " + engineText, err: errors.New(engineText)},
	} {
		f := classify(context.Background(), small, mem, end)
		if f == nil {
			t.Fatalf("%s: classified as success", name)
		}
		var held []string
		for _, leak := range leaks {
			if strings.Contains(f.Detail, leak) {
				held = append(held, leak)
			}
		}
		if len(held) > 0 {
			t.Errorf("%s: the model is told %q, which holds %q", name, f.Detail, held)
		}
		if len(f.Detail) > 120 {
			t.Errorf("%s: %d bytes of detail; want a short sentence", name, len(f.Detail))
		}
		if f.Cause == nil || !strings.Contains(f.Cause.Error(), "Pointer out of bounds") {
			t.Errorf("%s: the engine's words are lost: cause %v", name, f.Cause)
		}
	}
	// A trap of a kind WebAssembly defines is named.
	f := classify(context.Background(), small, mem, ending{trap: "integer divide by zero"})
	if f.Kind != Trap || f.Detail != "the tool trapped: integer divide by zero" {
		t.Errorf("a known trap: %+v", f)
	}
}

// idleMemory is a memory that stayed far from its limit.
type idleMemory struct{}

func (idleMemory) peak() uint64            { return pageSize }
func (idleMemory) held() uint64            { return pageSize }
func (idleMemory) refused() (uint64, bool) { return 0, true }
