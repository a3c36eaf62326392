// Package textstats tests the text_stats tool natively: its C counting
// logic, built with gcc and run (src/stats_test.c), and its manifest. The C
// sources are in src/ because the go command refuses a package directory
// that holds .c files without cgo.
package textstats

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
)

func TestCounting(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stats_test")
	tooltest.GCC(t, bin, "../../sdk-guest/c", "src/stats.c", "src/stats_test.c", "../../sdk-guest/c/wasmcp.c")
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestManifest keeps manifest.json loadable by the server and in step with
// the code: the tool name main.c accepts and the bounds of "top".
func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "text_stats", abi.OutputJSON)
	var schema struct {
		Properties struct {
			Top struct {
				Minimum, Maximum, Default int
			} `json:"top"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(m.Tools[0].InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	header, err := os.ReadFile("src/stats.h")
	if err != nil {
		t.Fatal(err)
	}
	maxTop := regexp.MustCompile(`#define STATS_MAX_TOP (\d+)`).FindSubmatch(header)
	if maxTop == nil {
		t.Fatal("src/stats.h does not define STATS_MAX_TOP")
	}
	top := schema.Properties.Top
	if n, _ := strconv.Atoi(string(maxTop[1])); top.Minimum != 1 || top.Maximum != n || top.Default != 5 {
		t.Errorf("top is %+v in the manifest; STATS_MAX_TOP is %d and main.c defaults to 5", top, n)
	}
}
