// Command calculate is a wasmcp tool that does arithmetic on two numbers. It
// is the smallest useful tool and the example the SDK's README builds on,
// built as a reactor (see build).
package main

import (
	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
	"github.com/wasmcp/wasmcp/tools/calculate/calc"
)

// The tool is registered at init, which is what a reactor runs: built
// with ./build (-buildmode=c-shared), main never runs, and the server
// starts each call from a snapshot taken after init. Built as a plain
// command, main runs it.
func init() { guest.Register(guest.Text("calculate", calc.Calculate)) }

func main() { guest.Main() }
