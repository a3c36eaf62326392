//go:build !linux

package sandbox

import (
	"errors"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// newRootFS refuses: the confined file system is built on Linux's *at
// system calls, and a mount served without it could be escaped.
func newRootFS(*os.Root) (experimentalsys.FS, error) {
	return nil, errors.New("wazero serves mounted directories only on Linux; run with --engine wasmtime, whose file system is confined everywhere")
}
