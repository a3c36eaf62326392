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
)

func TestCounting(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Fatal("gcc not found: run scripts/setup")
	}
	bin := filepath.Join(t.TempDir(), "stats_test")
	// The sanitizers turn an out-of-bounds read into a failure.
	build := exec.Command("gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-O1",
		"-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-I../../sdk-guest/c",
		"-o", bin, "src/stats.c", "src/stats_test.c", "../../sdk-guest/c/wasmcp.c", "-lm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestManifest keeps manifest.json loadable by the server and in step with
// the code: the tool name main.c accepts and the bounds of "top".
func TestManifest(t *testing.T) {
	data, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tools) != 1 || m.Tools[0].Name != "text_stats" || m.Tools[0].Mode() != abi.OutputJSON {
		t.Fatalf("manifest tools = %+v", m.Tools)
	}
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
