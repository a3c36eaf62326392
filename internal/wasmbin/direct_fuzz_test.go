package wasmbin

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// FuzzDirectCalls: a module wazero compiles still compiles once rewritten
// by DirectCalls, and by StopChecks, which every module wazero runs goes
// through.
func FuzzDirectCalls(f *testing.F) {
	for _, name := range []string{"indirect", "loop", "reactor"} {
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
			cm, err = rt.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("the module compiles, but not once its calls are direct: %v", err)
			}
			cm.Close(ctx)
		}
		out, err := StopChecks(data)
		if err != nil {
			return // a name it reserves
		}
		cm, err = rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the module compiles, but not with stop checks: %v", err)
		}
		cm.Close(ctx)
	})
}
