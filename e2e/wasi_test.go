package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// maxRSS bounds the server's memory in the tests of hostile WASI calls:
// a guest of 64 KiB whose random_get of 4 GiB the host allocated first
// took the server past 4 GB.
const maxRSS = 1 << 30

// engineWords are what an engine says of itself, which a model must never
// be told.
var engineWords = []string{"backtrace", "anyhow", ".rs:", ".go:", "cgo", "goroutine", "wasmtime", "wazero", "could not be run"}

// wasiFixture serves wasihostile.wat as one tool per case ("case04" runs
// case 4), from module wasibad, and its case of links as tool case72,
// from module wasilinks, which the policy grants a writable directory.
type wasiFixture struct {
	dir, mount, policy string
}

// wasiCases are the cases served by module wasibad.
var wasiCases = []string{"case00", "case01", "case04", "case09", "case24", "case28", "case30", "case50", "case56"}

func newWASIFixture(t *testing.T) *wasiFixture {
	t.Helper()
	f := &wasiFixture{dir: t.TempDir(), mount: t.TempDir()}
	if err := os.WriteFile(filepath.Join(f.mount, "file"), []byte("contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	wattest.Write(t, f.dir, "wasihostile", "wasibad")
	wattest.Write(t, f.dir, "wasihostile", "wasilinks")
	var tools []string
	for _, name := range wasiCases {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"description":"a hostile WASI call","inputSchema":{"type":"object"}}`, name))
	}
	const limits = `"limits":{"timeout":"10s","memory":"16MiB","output":"64KiB"}`
	sidecar(t, f.dir, "wasibad", `{"abi":1,"tools":[`+strings.Join(tools, ",")+`],`+limits+`}`)
	sidecar(t, f.dir, "wasilinks", `{"abi":1,"tools":[{"name":"case72","description":"links in a writable mount","inputSchema":{"type":"object"}}],`+limits+`,
		"permissions":{"dirs":[{"guest":"/m","write":true}]}}`)
	f.policy = filepath.Join(t.TempDir(), "policy.yaml")
	policy := fmt.Sprintf("modules:\n  wasilinks:\n    sha256: %s\n    dirs:\n      /m: {host: %s, write: true}\n", fileSHA(t, f.dir, "wasilinks"), f.mount)
	if err := os.WriteFile(f.policy, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestHostileWASICallsThroughTheServer makes a sample of hostile WASI
// calls through the real server: each gets the same errno on both
// engines, or ends with a short sentence, and nothing the engine says of
// itself reaches the client. A guest in a writable mount cannot make a
// link there. The server, warm-up included, stays within maxRSS.
func TestHostileWASICallsThroughTheServer(t *testing.T) {
	f := newWASIFixture(t)
	s := startHTTPIn(t, f.dir, "--policy", f.policy)
	cs := connectHTTP(t, s, "2026-07-28")
	for _, tc := range []struct {
		tool, want string
		isError    bool
	}{
		{"case00", "21", false}, // random_get of 4 GiB: EFAULT
		{"case01", "21", false}, // random_get outside memory
		{"case04", "21", false}, // args_sizes_get's result outside memory
		{"case09", "28", false}, // clock_time_get of a clock that does not exist: EINVAL
		{"case28", "21", false}, // fd_fdstat_get's result outside memory
		{"case30", "28", false}, // fd_fdstat_set_flags with flags WASI does not define
		{"case50", "0 1 7 8", false},
		{"case56", "case56 failed: the tool exited with status 256", true},
		{"case72", "63 63 63", false}, // two symbolic links and a hard link: EPERM
	} {
		res := callTool(t, cs, tc.tool, nil)
		got := strings.TrimSpace(text(res))
		if got != tc.want || res.IsError != tc.isError {
			t.Errorf("%s = %q (isError %v); want %q", tc.tool, got, res.IsError, tc.want)
		}
		var held []string
		for _, w := range engineWords {
			if strings.Contains(got, w) {
				held = append(held, w)
			}
		}
		if len(held) > 0 {
			t.Errorf("%s: the client is told %q, which holds %q", tc.tool, got, held)
		}
	}
	// fd_seek on stdout, with a whence WASI does not define: wazero
	// refuses the seek (ENOSYS), wasmtime the whence (EINVAL).
	want := "52 "
	if os.Getenv("WASMCP_ENGINE") == "wasmtime" {
		want = "28 "
	}
	if res := callTool(t, cs, "case24", nil); res.IsError || text(res) != want {
		t.Errorf("case24 = %q (isError %v); want %q", text(res), res.IsError, want)
	}
	entries, err := os.ReadDir(f.mount)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the guest's mount holds %d entries; want only the file the test put there", len(entries))
	}
	s.stop(t)
	if rss := s.cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10; rss > maxRSS {
		t.Errorf("the server reached %d MiB; want at most %d", rss>>20, maxRSS>>20)
	}
}

// TestCallOfHugeRandomGetIsRefused runs the random_get of 4 GiB with
// `wasmcp call` and a time limit of 2 s: EFAULT, without the allocation.
func TestCallOfHugeRandomGetIsRefused(t *testing.T) {
	f := newWASIFixture(t)
	cmd := exec.Command(binary, "call", "--tools", f.dir, "--cache-dir", cacheDir, "--timeout", "2s", "case00")
	out, err := cmd.Output()
	if cmd.ProcessState == nil {
		t.Fatal(err)
	}
	var res struct{ Content []struct{ Text string } }
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) != 1 || res.Content[0].Text != "21 " {
		t.Errorf("wasmcp call case00 = %s (%v); want the text %q", out, err, "21 ")
	}
	if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10; rss > maxRSS {
		t.Errorf("wasmcp call reached %d MiB; want at most %d", rss>>20, maxRSS>>20)
	}
}
