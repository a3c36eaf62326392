//go:build !wasip1

package guest

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
)

// goTool and goEnv are taken before any test runs: the reactor tests
// clear the process's environment, as a call from a snapshot does.
var (
	goTool, _ = exec.LookPath("go")
	goEnv     = os.Environ()
)

// findRuntimeRand bounds its scan by an object it allocates, which must be
// on the heap: if the compiler kept it on the goroutine's stack, the scan
// would run through the heap below the stack too (all readable in wasm, so
// no test of the guest's behaviour sees it). The compiler's escape report
// for wasip1 is the one witness.
func TestFindRuntimeRandBoundIsOnTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package for wasip1")
	}
	if goTool == "" {
		t.Fatal("no go command in PATH")
	}
	cmd := exec.Command(goTool, "build", "-gcflags=-m", "-o", os.DevNull, ".")
	cmd.Env = append(goEnv, "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("building for wasip1: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`runtimerand_wasip1\.go:\d+:\d+: new\(\[8\]uint64\) escapes to heap`).Match(out) {
		t.Errorf("findRuntimeRand's bound does not escape to the heap; the compiler reports:\n%s", out)
	}
}
