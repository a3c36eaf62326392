package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
	"github.com/wasmcp/wasmcp/tools/calculate/calc"
)

// TestManifest keeps manifest.json loadable by the server and in step with
// the code: the tool name main registers and the operations calculate knows.
func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "calculate", abi.OutputText)
	var schema struct {
		Properties struct {
			Operation struct {
				Enum []string `json:"enum"`
			} `json:"operation"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(m.Tools[0].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	enum := schema.Properties.Operation.Enum
	if !slices.Equal(enum, []string{"add", "subtract", "multiply", "divide"}) {
		t.Fatalf("operation enum = %v", enum)
	}
	for _, op := range enum {
		if _, err := calc.Calculate(calc.Args{A: 1, B: 1, Operation: op}); err != nil {
			t.Errorf("operation %q in the manifest fails: %v", op, err)
		}
	}
}
