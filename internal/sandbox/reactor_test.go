package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// reactorModule is the reactor test module with init as its wasmcp.init
// section.
func reactorModule(t testing.TB, init string) []byte {
	t.Helper()
	wasm, err := wasmbin.SetCustomSection(wattest.Build(t, "reactor"), abi.InitSection, []byte(init))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

func compileReactor(t testing.TB, e *Engine, init string) *Compiled {
	t.Helper()
	c, err := e.Compile(context.Background(), reactorModule(t, init), abi.StartReactor)
	if err != nil {
		t.Fatalf("Compile(reactor): %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// reactorRun is a call of the reactor with stdin, two arguments and two
// environment variables, which its start-up must not see.
func reactorRun(stdin string) Run {
	return Run{Args: []string{"reactor", "tool"}, Env: map[string]string{"A": "1", "B": "2"}, Stdin: []byte(stdin), Limits: small}
}

func TestReactorStartsUpThenRunsTheCall(t *testing.T) {
	e := newEngine(t)
	c := compileReactor(t, e, "bundle")
	out := c.Run(context.Background(), reactorRun(`{"x":1}`))
	if out.Failure != nil {
		t.Fatalf("run failed: %v", out.Failure)
	}
	// The start-up saw the init section, argv[0] alone and no
	// environment; the call saw its own.
	if got, want := string(out.Stdout), `bundle|10|22|11|{"x":1}`; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestReactorWithoutInitSectionReadsEmptyStdin(t *testing.T) {
	e := newEngine(t)
	c, err := e.Compile(context.Background(), wattest.Build(t, "reactor"), abi.StartReactor)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	out := c.Run(context.Background(), reactorRun("in"))
	if out.Failure != nil || string(out.Stdout) != "|10|22|11|in" {
		t.Fatalf("run = %q, %v; want %q", out.Stdout, out.Failure, "|10|22|11|in")
	}
}

func TestReactorStartUpFailuresNameTheStartUp(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		init   string
		kind   FailureKind
		detail string
	}{
		{"T", Trap, "start-up (wasmcp_init) failed: the tool trapped: unreachable"},
		{"L", TimeLimit, "start-up (wasmcp_init) failed: the tool ran longer than its 300ms time limit"},
		{"X", Exit, "exited during its start-up (wasmcp_init)"},
		{"G9", MemoryLimit, "start-up (wasmcp_init) failed"},
	} {
		t.Run(tc.init, func(t *testing.T) {
			c := compileReactor(t, e, tc.init)
			r := reactorRun("{}")
			r.Limits.Timeout = 300 * time.Millisecond
			if tc.kind == MemoryLimit {
				// Close enough to the module's one page for wasmtime, which
				// cannot see a refused grow, to blame the limit.
				r.Limits.Memory = pageSize + pageSize/2
			}
			out := c.Run(context.Background(), r)
			if out.Failure == nil || out.Failure.Kind != tc.kind || !strings.Contains(out.Failure.Detail, tc.detail) {
				t.Fatalf("failure = %v; want %s mentioning %q", out.Failure, tc.kind, tc.detail)
			}
		})
	}
}

func TestReactorExitStatusIsTheCalls(t *testing.T) {
	e := newEngine(t)
	c := compileReactor(t, e, "")
	out := c.Run(context.Background(), reactorRun("x"))
	if out.Failure == nil || out.Failure.Kind != Exit || out.Failure.ExitCode != 3 {
		t.Fatalf("failure = %v; want exit status 3", out.Failure)
	}
}

func TestReactorExportsAreChecked(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		module string
		start  abi.Start
		want   string
	}{
		{"echo", abi.StartReactor, `exports no "wasmcp_run" function`},
		{"reactor", abi.StartCommand, `"start": "reactor"`},
	} {
		m, err := wasmbin.Parse(wattest.Build(t, tc.module))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.CheckModule(m, tc.start); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckModule(%s, %s) = %v; want an error mentioning %q", tc.module, tc.start, err, tc.want)
		}
	}
	twice := reactorModule(t, "a")
	twice = append(twice, 0, 13, 11)
	twice = append(twice, "wasmcp.init"...)
	twice = append(twice, 'b')
	m, err := wasmbin.Parse(twice)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CheckModule(m, abi.StartReactor); err == nil || !strings.Contains(err.Error(), `2 "wasmcp.init" custom sections`) {
		t.Errorf("CheckModule(two init sections) = %v", err)
	}
}
