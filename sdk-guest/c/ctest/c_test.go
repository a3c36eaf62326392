// Package ctest builds the C guest SDK natively with gcc and runs its tests:
// the C unit checks in ../test, a differential test of the JSON reader and
// writer against encoding/json, and the exit paths a tool takes on bad
// arguments. It lives apart from the C sources because the go command
// refuses a package directory that holds .c files without cgo.
package ctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/tooltest"
)

// binary is the test program, built once per run.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmcp-ctest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "sdk_test")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles the SDK and its test program with the sanitizers on, so
// that an out-of-bounds read on hostile JSON fails the test rather than
// passing by luck.
func build(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(binary); err == nil {
		return binary
	}
	tooltest.GCC(t, binary, "..", "../wasmcp.c", "../test/sdk_test.c")
	return binary
}

// run runs the test program; leaks are only checked in the unit mode, since
// a tool, like the args mode, leaves freeing to its exit.
func run(t *testing.T, stdin []byte, leaks bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), fmt.Sprintf("ASAN_OPTIONS=detect_leaks=%d", map[bool]int{false: 0, true: 1}[leaks]))
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

func TestUnits(t *testing.T) {
	out, errOut, code := run(t, nil, true)
	if code != 0 {
		t.Fatalf("exit status %d\n%s%s", code, out, errOut)
	}
	t.Log(strings.TrimSpace(out))
}

// TestRoundTrip feeds documents to the C reader and compares the writer's
// re-encoding with encoding/json's reading of the original; malformed
// documents must be refused by both.
func TestRoundTrip(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `""`, `0`, `-0`, `true`, `null`,
		`{"a":[1,2.5,-3e-7,{"b":null}],"c":"\u00e9\ud83d\ude00\n\t\"\\\/","d":{}}`,
		` [ 1 , [ ] , { } , "" ] `,
		`{"a":1,"a":2}`,
		`"\u0000\u001f\u007f\u2028"`,
		`"\ud800"`, `"\udfff\ud800x"`, `"\ud83d\u0041"`,
		`[1e308,-1e-308,5e-324,123456789012345678901234567890,0.1,1E2]`,
		`{"":""}`, `{"k\u00e9y":"v"}`,
		"\"\xe2\x82\xac\xf0\x9f\x98\x80\"",
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		b, err := json.Marshal(randomValue(rng, 4))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	// Mutations of valid documents make malformed ones near valid ones:
	// bytes dropped, duplicated or replaced by a JSON-significant one.
	valid := len(docs)
	for i := 0; i < 1500; i++ {
		d := []byte(docs[rng.Intn(valid)])
		if len(d) == 0 {
			continue
		}
		p := rng.Intn(len(d))
		switch rng.Intn(3) {
		case 0:
			d = append(d[:p:p], d[p+1:]...)
		case 1:
			d = append(d[:p+1:p+1], d[p:]...)
		default:
			const significant = `{}[]",:\ u0e.-+tfn1`
			d[p] = significant[rng.Intn(len(significant))]
		}
		docs = append(docs, string(d))
	}

	var in bytes.Buffer
	for _, d := range docs {
		fmt.Fprintf(&in, "%d\n%s", len(d), d)
	}
	out, errOut, code := run(t, in.Bytes(), true, "roundtrip")
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(docs) {
		t.Fatalf("%d results for %d documents\n%s", len(lines), len(docs), errOut)
	}
	accepted := 0
	for i, d := range docs {
		got := lines[i]
		if !utf8.ValidString(d) {
			// encoding/json accepts invalid UTF-8 in strings; the SDK
			// refuses it, as JSON must be UTF-8 (RFC 8259).
			if !strings.HasPrefix(got, "err ") {
				t.Errorf("accepted invalid UTF-8 %q: %s", d, got)
			}
			continue
		}
		var want any
		wantErr := json.Unmarshal([]byte(d), &want)
		if wantErr != nil {
			if strings.Contains(wantErr.Error(), "cannot unmarshal number") {
				continue // valid JSON, out of a float64's range
			}
			if !strings.HasPrefix(got, "err invalid JSON at byte ") {
				t.Errorf("accepted %q (encoding/json: %v): %s", d, wantErr, got)
			}
			continue
		}
		if nulInName(want) {
			continue // wasmcp_out_key takes a C string
		}
		enc, ok := strings.CutPrefix(got, "ok ")
		if !ok {
			t.Errorf("refused %q: %s", d, got)
			continue
		}
		accepted++
		var back any
		if err := json.Unmarshal([]byte(enc), &back); err != nil {
			t.Errorf("%q re-encoded as invalid JSON %s: %v", d, enc, err)
			continue
		}
		if !reflect.DeepEqual(back, want) {
			t.Errorf("%q re-encoded as %s; want the value %#v", d, enc, want)
		}
	}
	t.Logf("%d of %d documents accepted", accepted, len(docs))
	if accepted < 400 {
		t.Errorf("only %d documents were accepted; the test lost its coverage", accepted)
	}
}

func nulInName(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if strings.Contains(k, "\x00") || nulInName(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if nulInName(x) {
				return true
			}
		}
	}
	return false
}

// randomValue makes a JSON-able value with awkward strings and numbers.
func randomValue(rng *rand.Rand, depth int) any {
	n := rng.Intn(9)
	if depth == 0 {
		n %= 5
	}
	switch n {
	case 0:
		return nil
	case 1:
		return rng.Intn(2) == 0
	case 2:
		switch rng.Intn(4) {
		case 0:
			return rng.Int63n(1<<53) - 1<<52
		case 1:
			return rng.NormFloat64() * math.Pow(10, float64(rng.Intn(40)-20))
		case 2:
			return math.Float64frombits(rng.Uint64()&^(0x7ff<<52) | uint64(rng.Intn(0x7fe))<<52)
		default:
			return float64(rng.Intn(100))
		}
	case 3, 4:
		return randomString(rng)
	case 5, 6:
		a := make([]any, rng.Intn(5))
		for i := range a {
			a[i] = randomValue(rng, depth-1)
		}
		return a
	default:
		m := map[string]any{}
		for i := rng.Intn(5); i > 0; i-- {
			// wasmcp_out_key takes a C string, so a name cannot hold NUL.
			m[strings.ReplaceAll(randomString(rng), "\x00", "")] = randomValue(rng, depth-1)
		}
		return m
	}
}

func randomString(rng *rand.Rand) string {
	pools := []string{"abc xyz", "\"\\/\b\f\n\r\t\x00\x01\x1f\x7f", "<>&", "éß€\u2028\u2029\ufeff", "😀𝄞\U0010FFFF"}
	var b strings.Builder
	for i := rng.Intn(12); i > 0; i-- {
		pool := []rune(pools[rng.Intn(len(pools))])
		b.WriteRune(pool[rng.Intn(len(pool))])
	}
	return b.String()
}

// TestArgs runs the SDK as a tool, the way the host does: arguments on
// stdin, the result on stdout, failures as one line on stderr and status 1.
func TestArgs(t *testing.T) {
	tests := []struct {
		stdin, out, stderr string
		code               int
	}{
		{`{"s":"h\u00e9","n":2.5,"i":1e2,"b":true}`, `{"s":"hé","n":2.5,"i":100,"b":1,"present":111}`, "", 0},
		{``, `{"n":-1,"i":-1,"b":-1,"present":0}`, "", 0},
		{" \n\t", `{"n":-1,"i":-1,"b":-1,"present":0}`, "", 0},
		{`null`, `{"n":-1,"i":-1,"b":-1,"present":0}`, "", 0},
		{`{"s":null,"n":null,"i":null,"b":null}`, `{"n":-1,"i":-1,"b":-1,"present":0}`, "", 0},
		{`{"s":"","b":false,"extra":[1]}`, `{"s":"","n":-1,"i":-1,"b":0,"present":1}`, "", 0},
		{`{"s":"a\u0000b\ud800"}`, `{"s":"a\u0000b` + "\ufffd" + `","n":-1,"i":-1,"b":-1,"present":0}`, "", 0},
		{`{"i":-9223372036854775808}`, `{"n":-1,"i":-9223372036854775808,"b":-1,"present":10}`, "", 0},
		{`[1]`, "", "invalid arguments: want a JSON object, not an array\n", 1},
		{`"x"`, "", "invalid arguments: want a JSON object, not a string\n", 1},
		{`{"s":1}`, "", "invalid arguments: \"s\" must be a string, not 1\n", 1},
		{`{"s":{}}`, "", "invalid arguments: \"s\" must be a string, not an object\n", 1},
		{`{"n":"1"}`, "", "invalid arguments: \"n\" must be a number, not a string\n", 1},
		{`{"n":1e999}`, "", "invalid arguments: \"n\" must be a number within a double's range, not 1e999\n", 1},
		{`{"i":2.5}`, "", "invalid arguments: \"i\" must be an integer, not 2.5\n", 1},
		{`{"i":true}`, "", "invalid arguments: \"i\" must be an integer, not a boolean\n", 1},
		{`{"i":92233720368547758070000000000000000000000000000000000000}`, "",
			"invalid arguments: \"i\" must be an integer between -2^63 and 2^63-1, not 9223372036854775807000000000000000000000\n", 1},
		{`{"b":"yes"}`, "", "invalid arguments: \"b\" must be a boolean, not a string\n", 1},
		{`{"s":"x"`, "", "invalid arguments: invalid JSON at byte 8: unexpected end of input; expected ',' or '}'\n", 1},
		{"{\"s\":\"\xff\"}", "", "invalid arguments: invalid JSON at byte 6: invalid UTF-8 in a string\n", 1},
		{strings.Repeat("[", 100000), "", "invalid arguments: invalid JSON at byte 128: nested deeper than 128 arrays and objects\n", 1},
	}
	for _, tt := range tests {
		out, errOut, code := run(t, []byte(tt.stdin), false, "args")
		if code != tt.code || out != tt.out || errOut != tt.stderr {
			t.Errorf("stdin %.60q:\n got %d %q %q\nwant %d %q %q", tt.stdin, code, out, errOut, tt.code, tt.out, tt.stderr)
		}
	}

	// Large arguments are read whole.
	big := strings.Repeat("é", 300000)
	out, errOut, code := run(t, []byte(`{"s":"`+big+`"}`), false, "args")
	if code != 0 || out != `{"s":"`+big+`","n":-1,"i":-1,"b":-1,"present":0}` {
		t.Errorf("large arguments: %d %.80q %q", code, out, errOut)
	}
}

func TestFailures(t *testing.T) {
	_, errOut, code := run(t, nil, false, "fail")
	if code != 1 || errOut != "first line second  third 3\n" {
		t.Errorf("wasmcp_fail: %d %q; want one line and status 1", code, errOut)
	}
	out, errOut, code := run(t, nil, false, "nan")
	if code != 1 || out != "" || !strings.Contains(errOut, "tool bug: cannot write nan as JSON") {
		t.Errorf("NaN: %d %q %q", code, out, errOut)
	}
}
