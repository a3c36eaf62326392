package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// hostileLimits leave a hostile WASI call room to fail for its own reason
// on a loaded machine: a call that hangs meets the time limit instead.
var hostileLimits = Limits{Timeout: 10 * time.Second, Memory: 1 << 20, Output: 64 << 10}

// runHostile runs one case of wasihostile.wat, with stdin "hello world"
// and, if mount is set, a writable mount at fd 3 holding "file". It
// describes the outcome as what the guest wrote, or how the run failed.
func runHostile(t *testing.T, c *Compiled, n int, mount string) string {
	t.Helper()
	r := Run{Args: []string{"wasihostile", fmt.Sprintf("case%02d", n)}, Stdin: []byte("hello world"), Limits: hostileLimits}
	if mount != "" {
		r.Mounts = []Mount{{Host: mount, Guest: "/m", Write: true}}
	}
	out := c.Run(context.Background(), r)
	if out.Failure != nil {
		return string(out.Failure.Kind) + ": " + out.Failure.Detail
	}
	return string(out.Stdout)
}

func hostileMount(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHostileWASICallsGetErrnos makes every call of wasihostile.wat on
// both engines, with and without a mount (which changes what wasmtime
// serves WASI from). Each gets an errno, or ends as a clean exit, and the
// engines agree wherever the answer is the host's: arguments outside
// memory (EFAULT) or out of range (EINVAL), and every function the host
// implements itself. Where WASI leaves the errno to the runtime (a seek
// on stdio, say), each engine's own is pinned.
func TestHostileWASICallsGetErrnos(t *testing.T) {
	e := newEngine(t)
	c := compile(t, e, "wasihostile")
	mount := hostileMount(t)
	for _, tc := range []struct {
		n        int
		want     string
		wasmtime string // wasmtime's answer, where WASI lets the engines differ
		mounted  bool   // the case uses fd 3, the mount
	}{
		{n: 0, want: "21 "}, // random_get of 4 GiB: no 4 GiB allocation first
		{n: 1, want: "21 "},
		{n: 2, want: "21 "},
		{n: 3, want: "0 "}, // no bytes, at the very end of memory
		{n: 4, want: "21 "},
		{n: 5, want: "21 "},
		{n: 6, want: "21 "},
		{n: 7, want: "21 "},
		{n: 8, want: "21 "},
		{n: 9, want: "28 "},
		{n: 10, want: "21 "},
		{n: 11, want: "28 "},
		{n: 12, want: "21 "},
		{n: 13, want: "28 "}, // the CPU-time clocks are not offered
		{n: 14, want: "8 "},
		{n: 15, want: "21 "},
		{n: 16, want: "21 "}, // a count that wraps around 32 bits is not one iovec
		{n: 17, want: "21 "},
		{n: 18, want: "ABCDEFGH0 8 "},
		{n: 19, want: "0 8 104 "},
		{n: 20, want: "8 "},
		{n: 21, want: "21 "},
		{n: 22, want: "21 "},
		{n: 23, want: "52 ", wasmtime: "70 "}, // fd_seek on stdin: ENOSYS, ESPIPE
		{n: 24, want: "52 ", wasmtime: "28 "}, // wazero refuses stdout's seek first, wasmtime the whence
		{n: 25, want: "8 "},
		{n: 26, want: "52 ", wasmtime: "21 "}, // likewise, the tell and then its result
		{n: 27, want: "8 "},
		{n: 28, want: "21 "},
		{n: 29, want: "8 "},
		{n: 30, want: "28 "},
		{n: 31, want: "21 "},
		{n: 32, want: "8 "},
		{n: 33, want: "8 "},
		{n: 34, want: "58 ", wasmtime: "8 "}, // fd_renumber to a closed fd
		{n: 35, want: "8 "},
		{n: 36, want: "8 ", wasmtime: "70 "}, // fd_pread and fd_pwrite on stdio
		{n: 37, want: "8 ", wasmtime: "70 "},
		{n: 38, want: "28 "},
		{n: 39, want: "52 ", wasmtime: "8 "}, // fd_allocate, fd_filestat_set_size and
		{n: 40, want: "52 ", wasmtime: "8 "}, // fd_fdstat_set_rights on stdout
		{n: 41, want: "52 ", wasmtime: "8 "},
		{n: 42, want: "8 "},
		{n: 43, want: "21 "},
		{n: 44, want: "54 ", wasmtime: "8 "}, // a directory made on stdout
		{n: 45, want: "8 "},
		{n: 46, want: "21 "},
		{n: 47, want: "28 "},
		{n: 48, want: "21 "},
		{n: 49, want: "0 1 7 28 "},
		{n: 50, want: "0 1 7 8 "}, // at once, with the bad descriptor's event
		{n: 51, want: "0 1 7 8 "},
		{n: 52, want: "0 1 7 28 "},
		{n: 53, want: "0 1 7 28 "},
		{n: 54, want: "0 1 6 8 "},
		{n: 55, want: "21 "},
		{n: 56, want: "exit: the tool exited with status 256"},
		{n: 57, want: "exit: the tool exited with status 126"},
		{n: 58, want: "exit: the tool exited with status 4294967295"},
		{n: 59, want: "52 "},
		{n: 60, want: "0 "},
		{n: 61, want: "8 "},
		{n: 62, want: "8 "},
		{n: 63, want: "8 "},
		{n: 64, want: "21 "},
		{n: 65, want: "21 "},
		{n: 66, want: "58 "},
		{n: 67, want: "0 1000 "},
		{n: 68, want: "21 ", mounted: true},
		{n: 69, want: "28 ", mounted: true},
		{n: 70, want: "21 ", mounted: true},
		{n: 71, want: "21 ", mounted: true},
		{n: 72, want: "63 63 63 ", mounted: true},
		{n: 73, want: "0 21 ", mounted: true}, // fd_pread into 4 GiB: no 4 GiB allocation first
		{n: 74, want: "0 21 ", mounted: true},
		// The one call wasmtime still ends: WASI's rules say it may.
		{n: 75, want: "0 ", wasmtime: "trap: the tool trapped: " + trapWASIArguments},
	} {
		want := tc.want
		if e.Name() == "wasmtime" && tc.wasmtime != "" {
			want = tc.wasmtime
		}
		for _, m := range []string{"", mount} {
			if tc.mounted && m == "" {
				continue
			}
			if got := runHostile(t, c, tc.n, m); got != want {
				t.Errorf("case %02d (mounted %v) = %q; want %q", tc.n, m != "", got, want)
			}
		}
	}
}

// TestGuestCannotMakeLinks has a guest with a writable mount try a
// symbolic link inside it, one pointing out of it, and a hard link: each
// is refused with EPERM, and none is made.
func TestGuestCannotMakeLinks(t *testing.T) {
	e := newEngine(t)
	mount := hostileMount(t)
	if got := runHostile(t, compile(t, e, "wasihostile"), 72, mount); got != "63 63 63 " {
		t.Fatalf("links = %q; want EPERM (63) three times", got)
	}
	entries, err := os.ReadDir(mount)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "file" {
		t.Fatalf("the mount holds %v; want only the file", entries)
	}
}
