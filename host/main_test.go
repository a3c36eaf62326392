package host_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// echoWasm is the module of the examples' tool.
var echoWasm []byte

func TestMain(m *testing.M) {
	var err error
	if echoWasm, err = wattest.Assemble("echo"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
