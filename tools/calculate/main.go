// Command calculate is a wasmcp tool that does arithmetic on two numbers. It
// is the smallest useful tool and the example the SDK's README builds on.
package main

import (
	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
	"github.com/wasmcp/wasmcp/tools/calculate/calc"
)

func main() {
	guest.Main(guest.Text("calculate", calc.Calculate))
}
