package wattest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// StallingWorker is a stand-in for the compile worker, as the Path and
// Args of a sandbox.Worker: a shell script that, for each module it is
// given, writes the module's size on a line that next returns, then does
// nothing, so that the engine compiles the module in its own process;
// except for a module of stall bytes, over which it waits a minute, as
// for a module that compiles until its time limit stops it. A worker is
// given the module without its custom sections.
func StallingWorker(t testing.TB, stall int) (path string, args []string, next func() string) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// O_RDWR does not wait for a writer, and keeps the pipe open across
	// the workers, which each open and close it.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	lines := bufio.NewScanner(f)
	script := fmt.Sprintf("n=$(wc -c); echo $n > %s; [ $n -eq %d ] && exec sleep 60; exit 0", fifo, stall)
	return "/bin/sh", []string{"-c", script, "worker"}, func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no worker started: %v", lines.Err())
		}
		return lines.Text()
	}
}
