package wasmbin

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// FuzzRewrites: a module wazero compiles still compiles once rewritten by
// DirectCalls, and by StopChecks, which every module wazero runs goes
// through.
func FuzzRewrites(f *testing.F) {
	for _, name := range []string{"indirect", "loop", "reactor", "fanout"} {
		if b, err := wattest.Assemble(name); err == nil {
			f.Add(b)
		}
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, data []byte) {
		cm, err := rt.CompileModule(ctx, data)
		if err != nil {
			return
		}
		cm.Close(ctx)
		if out, applied, err := DirectCalls(data, 64); err == nil && applied {
			if cm, err = rt.CompileModule(ctx, out); err != nil {
				t.Fatalf("the module compiles, but not once its calls are direct: %v", err)
			}
			cm.Close(ctx)
		}
		out, err := StopChecks(data)
		if err != nil {
			// Parse refuses what wasmcp does not run (a later proposal's
			// instructions, say), which wazero may compile, and a module
			// may export a name StopChecks reserves.
			return
		}
		if cm, err = rt.CompileModule(ctx, out); err != nil {
			t.Fatalf("the module compiles, but not with stop checks: %v", err)
		}
		cm.Close(ctx)
	})
}
