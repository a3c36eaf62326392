package wasmbin

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// FuzzDirectCalls: a module wazero compiles compiles once rewritten.
func FuzzDirectCalls(f *testing.F) {
	if b, err := wattest.Assemble("indirect"); err == nil {
		f.Add(b)
	}
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, data []byte) {
		out, applied, err := DirectCalls(data, 64)
		if err != nil || !applied {
			return
		}
		cm, err := rt.CompileModule(ctx, data)
		if err != nil {
			return
		}
		cm.Close(ctx)
		cm, err = rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the module compiles, but not once rewritten: %v", err)
		}
		cm.Close(ctx)
	})
}
