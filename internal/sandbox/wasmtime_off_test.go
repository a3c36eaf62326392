//go:build !(wasmtime && cgo)

package sandbox

import (
	"context"
	"strings"
	"testing"
)

func TestWasmtimeNeedsItsBuildTag(t *testing.T) {
	_, err := NewEngine(context.Background(), Config{Engine: "wasmtime"})
	if err == nil || !strings.Contains(err.Error(), "-tags wasmtime") {
		t.Fatalf("NewEngine(wasmtime) = %v; want an error naming the build tag", err)
	}
}
