package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// workerAttr has a worker killed if the server dies first, so that no
// compilation outlives it.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// watchInterval is how often a worker reads its resident memory. At the
// speed a compiler allocates, a worker passes its bound by at most a few
// tens of MiB before it is stopped.
const watchInterval = 2 * time.Millisecond

// limitMemory bounds the worker's resident memory to what it holds now plus
// n bytes: a watchdog reads it from /proc and ends the process, with
// workerOutOfMemory, as soon as it is over, and the returned check, run
// once the work is done, does the same if its peak was over at any time
// between two readings. Resident memory, not the
// address space, is what is bounded: engines reserve address space they
// never touch (thread stacks, code areas), and a bound on it would refuse
// modules that need little. The Go heap is also told of the bound, so
// that it collects garbage before the watchdog has to step in.
func limitMemory(n int64) (check func(), err error) {
	base, err := resident()
	if err != nil {
		return nil, err
	}
	limit := base + uint64(n)
	over := func(rss uint64) {
		fmt.Fprintf(os.Stderr, "compile worker: out of memory: %d bytes resident, over the bound of %d\n", rss, limit)
		os.Exit(workerOutOfMemory)
	}
	debug.SetMemoryLimit(n)
	go func() {
		for range time.Tick(watchInterval) {
			if rss, err := resident(); err == nil && rss > limit {
				over(rss)
			}
		}
	}()
	return func() {
		if peak, err := peakResident(); err == nil && peak > limit {
			over(peak)
		}
	}, nil
}

// peakResident reads the process's peak resident set size (VmHWM).
func peakResident() (uint64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, _ := bytes.CutSuffix(bytes.TrimSpace(rest), []byte(" kB"))
			n, err := strconv.ParseUint(string(kb), 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

var pageBytes = uint64(os.Getpagesize())

// resident reads the process's resident set size from /proc/self/statm.
func resident() (uint64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("reading the worker's memory: %w", err)
	}
	fields := bytes.Fields(b)
	if len(fields) < 2 {
		return 0, fmt.Errorf("reading the worker's memory: /proc/self/statm holds %q", b)
	}
	pages, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading the worker's memory: %w", err)
	}
	return pages * pageBytes, nil
}

// checkCacheDir refuses a compilation cache that someone other than the
// server's user may write to: it holds native code the server runs.
func checkCacheDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("compilation cache: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm()&0o022 != 0 || ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("the compilation cache %s holds native code the server runs, but others may write to it (mode %v): it must belong to the server's user, writable only by it (chmod go-w, or another --cache-dir)", dir, fi.Mode().Perm())
	}
	return nil
}
