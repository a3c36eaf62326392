package registry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// hangGuard bounds how long a test waits for something that should be
// immediate. It is a guard against hanging, not a performance figure.
const hangGuard = 30 * time.Second

var ceilings = sandbox.Limits{Timeout: 10 * time.Second, Memory: 32 << 20, Output: 1 << 20}

func newEngine(t testing.TB) *sandbox.Engine {
	t.Helper()
	e, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// manifestFor returns a valid manifest declaring the named tools, each taking
// any object.
func manifestFor(names ...string) string {
	tools := make([]string, len(names))
	for i, n := range names {
		tools[i] = fmt.Sprintf(`{"name":%q,"description":"test tool %s","inputSchema":{"type":"object"}}`, n, n)
	}
	return `{"abi":1,"tools":[` + strings.Join(tools, ",") + `]}`
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSidecar writes stem.manifest.json into dir.
func writeSidecar(t testing.TB, dir, stem, manifest string) string {
	t.Helper()
	path := filepath.Join(dir, stem+abi.SidecarSuffix)
	writeFile(t, path, []byte(manifest))
	return path
}

// embed returns the module with manifest in its custom section.
func embed(t *testing.T, wasm []byte, manifest string) []byte {
	t.Helper()
	out, err := wasmbin.SetCustomSection(wasm, abi.CustomSection, []byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// uncompilable is a module that passes every check Load makes (it parses,
// imports nothing and exports _start) but that no compiler accepts: its
// export names a function that does not exist.
func uncompilable() []byte {
	return []byte{
		0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
		0x07, 0x0a, // export section, 10 bytes
		0x01,                               // one export
		0x06, '_', 's', 't', 'a', 'r', 't', // "_start"
		0x00, 0x00, // func 0
	}
}

func load(t *testing.T, dir string) *Catalog {
	t.Helper()
	c, err := open(dir, LoadOptions{Engine: newEngine(t), Ceilings: ceilings})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func toolNames(c *Catalog) []string {
	var names []string
	for _, t := range c.Tools {
		names = append(names, t.Spec.Name)
	}
	return names
}

func errorFor(c *Catalog, path string) error {
	for _, e := range c.Errors {
		if e.Path == path {
			return e
		}
	}
	return nil
}

func TestSidecarManifestWinsOverEmbedded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "echo.wasm")
	writeFile(t, path, embed(t, wattest.Build(t, "echo"), manifestFor("from_section")))
	sidecar := writeSidecar(t, dir, "echo", manifestFor("from_sidecar"))

	c := load(t, dir)
	if len(c.Errors) > 0 {
		t.Fatalf("errors: %v", c.Errors)
	}
	if got := toolNames(c); len(got) != 1 || got[0] != "from_sidecar" {
		t.Fatalf("tools = %v; want [from_sidecar]", got)
	}
	if _, ok := c.Lookup("from_section"); ok {
		t.Error("the embedded manifest's tool is served although a sidecar exists")
	}
	m := c.Modules[0]
	if m.ManifestFrom != sidecar {
		t.Errorf("ManifestFrom = %q; want %q", m.ManifestFrom, sidecar)
	}
	if m.Stem != "echo" || m.Path != path {
		t.Errorf("Stem, Path = %q, %q; want echo, %q", m.Stem, m.Path, path)
	}
}

func TestEmbeddedManifestAlone(t *testing.T) {
	dir := t.TempDir()
	wasm := embed(t, wattest.Build(t, "echo"), manifestFor("packed"))
	writeFile(t, filepath.Join(dir, "echo.wasm"), wasm)

	c := load(t, dir)
	if len(c.Errors) > 0 {
		t.Fatalf("errors: %v", c.Errors)
	}
	tool, ok := c.Lookup("packed")
	if !ok {
		t.Fatalf("tool not found; tools = %v", toolNames(c))
	}
	if tool.Module.ManifestFrom != "embedded" {
		t.Errorf("ManifestFrom = %q; want embedded", tool.Module.ManifestFrom)
	}
	if len(tool.Module.SHA256) != 64 {
		t.Errorf("SHA256 = %q; want 64 hex digits", tool.Module.SHA256)
	}
	if tool.Input == nil || tool.Output != nil {
		t.Errorf("Input, Output = %v, %v; want a compiled input schema and no output schema", tool.Input, tool.Output)
	}
}

func TestModuleWithoutManifestNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	path := wattest.Write(t, dir, "echo", "lonely")

	c := load(t, dir)
	if len(c.Modules) != 0 || len(c.Tools) != 0 {
		t.Fatalf("loaded %d modules, %d tools; want none", len(c.Modules), len(c.Tools))
	}
	if len(c.Errors) != 1 {
		t.Fatalf("errors = %v; want one", c.Errors)
	}
	e := c.Errors[0]
	if e.Path != path {
		t.Errorf("error path = %q; want %q", e.Path, path)
	}
	for _, want := range []string{"no manifest", "lonely.manifest.json", "wasmcp pack"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("error %q does not mention %q", e.Error(), want)
		}
	}
}

func TestBrokenFilesAreSkippedAndOthersLoad(t *testing.T) {
	dir := t.TempDir()
	echo := wattest.Build(t, "echo")
	// twoSections carries two manifest sections: SetCustomSection appends
	// one, and the appended bytes are repeated.
	once := embed(t, echo, manifestFor("first"))
	twoSections := append(append([]byte(nil), once...), once[len(echo):]...)

	cases := []struct {
		stem     string
		wasm     []byte
		manifest string // sidecar; "" for none
		want     string // in the error
	}{
		{"notwasm", []byte("#!/bin/sh\necho hello\n"), manifestFor("notwasm"), "not a WebAssembly binary"},
		{"truncated", echo[:len(echo)-3], manifestFor("truncated"), "remain"},
		{"badjson", echo, `{"abi":1,"tools":[`, "badjson.manifest.json: manifest is not valid JSON"},
		{"unknownfield", echo, `{"abi":1,"tools":[],"limit":{}}`, `unknown field "limit"`},
		{"badschema", echo, `{"abi":1,"tools":[{"name":"badschema","description":"d","inputSchema":{"type":"object","properties":{"x":{"type":"integr"}}}}]}`, `tool "badschema": inputSchema: invalid schema`},
		{"badoutschema", echo, `{"abi":1,"tools":[{"name":"badoutschema","description":"d","output":"json","inputSchema":{"type":"object"},"outputSchema":{"type":"object","minProperties":-1}}]}`, `tool "badoutschema": outputSchema`},
		{"badname", echo, manifestFor("has space"), "name must match"},
		{"badabi", echo, `{"abi":2,"tools":[{"name":"badabi","description":"d","inputSchema":{"type":"object"}}]}`, "asks for abi 2"},
		{"badimport", wattest.Build(t, "badimport"), manifestFor("badimport"), `imports env.open_socket, but wasmcp provides no module "env"`},
		{"badsig", wattest.Build(t, "badsig"), manifestFor("badsig"), "imports wasmcp.log as (i64) -> i64, but wasmcp defines it (docs/abi.md) as (i32, i32, i32) -> i32"},
		{"nostart", wattest.Build(t, "nostart"), manifestFor("nostart"), `exports no "_start" function`},
		{"undeclaredask", wattest.Build(t, "ask"), manifestFor("undeclaredask"), `imports wasmcp.elicit, which asks the client for elicitation, but no tool or prompt of its manifest declares "client": ["elicitation"]`},
		{"badembedded", embed(t, echo, `{"abi":1}`), "", "embedded manifest: manifest declares no tools"},
		{"twoembedded", twoSections, "", `2 "wasmcp.manifest" custom sections`},
	}
	for _, tc := range cases {
		writeFile(t, filepath.Join(dir, tc.stem+".wasm"), tc.wasm)
		if tc.manifest != "" {
			writeSidecar(t, dir, tc.stem, tc.manifest)
		}
	}
	good := wattest.Write(t, dir, "echo", "zz_good")
	writeSidecar(t, dir, "zz_good", manifestFor("good"))

	var logs bytes.Buffer
	c, err := open(dir, LoadOptions{Engine: newEngine(t), Ceilings: ceilings, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(c); len(got) != 1 || got[0] != "good" {
		t.Errorf("tools = %v; want [good]", got)
	}
	if len(c.Modules) != 1 || c.Modules[0].Path != good {
		t.Errorf("modules = %v; want only %s", c.Modules, good)
	}
	for _, tc := range cases {
		t.Run(tc.stem, func(t *testing.T) {
			path := filepath.Join(dir, tc.stem+".wasm")
			err := errorFor(c, path)
			if err == nil {
				t.Fatalf("no error recorded for %s; errors: %v", path, c.Errors)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if !strings.Contains(logs.String(), path) {
				t.Errorf("the skipped file is not logged:\n%s", logs.String())
			}
		})
	}
	if len(c.Errors) != len(cases) {
		t.Errorf("%d errors; want %d: %v", len(c.Errors), len(cases), c.Errors)
	}
}

func TestDuplicateToolNameFirstFileKeepsIt(t *testing.T) {
	dir := t.TempDir()
	// ReadDir order, not creation order, decides: write b first.
	b := wattest.Write(t, dir, "echo", "b")
	writeSidecar(t, dir, "b", manifestFor("shared", "only_b"))
	a := wattest.Write(t, dir, "argv", "a")
	writeSidecar(t, dir, "a", manifestFor("shared"))

	c := load(t, dir)
	shared, ok := c.Lookup("shared")
	if !ok {
		t.Fatal("shared tool not served")
	}
	if shared.Module.Path != a {
		t.Errorf("shared is served by %s; want %s", shared.Module.Path, a)
	}
	if onlyB, ok := c.Lookup("only_b"); !ok || onlyB.Module.Path != b {
		t.Errorf("only_b: ok=%v; want it served by %s", ok, b)
	}
	if got := toolNames(c); strings.Join(got, ",") != "only_b,shared" {
		t.Errorf("tools = %v; want [only_b shared]", got)
	}
	if len(c.Modules) != 2 {
		t.Errorf("%d modules; want 2 (the duplicate does not drop its module)", len(c.Modules))
	}
	if len(c.Errors) != 1 {
		t.Fatalf("errors = %v; want one", c.Errors)
	}
	e := c.Errors[0]
	if e.Path != b || !strings.Contains(e.Error(), `tool "shared" is already provided by `+a) {
		t.Errorf("error = %v; want one for %s naming %s", e, b, a)
	}
}

func TestToolsAreSortedByName(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "a")
	writeSidecar(t, dir, "a", manifestFor("zeta", "beta"))
	wattest.Write(t, dir, "echo", "b")
	writeSidecar(t, dir, "b", manifestFor("alpha", "Upper", "gamma"))

	c := load(t, dir)
	want := []string{"Upper", "alpha", "beta", "gamma", "zeta"}
	if got := toolNames(c); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tools = %v; want %v", got, want)
	}
	for _, name := range want {
		if tool, ok := c.Lookup(name); !ok || tool.Spec.Name != name {
			t.Errorf("Lookup(%q) = %v, %v", name, tool, ok)
		}
	}
	if _, ok := c.Lookup("missing"); ok {
		t.Error("Lookup found a tool nobody declared")
	}
}

func TestOnlyWasmFilesDirectlyInTheDirectoryAreLoaded(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	writeSidecar(t, dir, "echo", manifestFor("echo"))
	// A directory named like a module, and a module inside a subdirectory.
	sub := filepath.Join(dir, "sub.wasm")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	wattest.Write(t, sub, "echo", "inner")
	writeSidecar(t, sub, "inner", manifestFor("inner"))
	// Files that are not modules, some of which would fail if read as one.
	writeFile(t, filepath.Join(dir, "README.md"), []byte("# tools"))
	writeFile(t, filepath.Join(dir, "echo.wasm.bak"), []byte("junk"))
	writeFile(t, filepath.Join(dir, "stray"+abi.SidecarSuffix), []byte("{"))

	c := load(t, dir)
	if len(c.Errors) > 0 {
		t.Errorf("errors: %v", c.Errors)
	}
	if got := toolNames(c); len(got) != 1 || got[0] != "echo" {
		t.Errorf("tools = %v; want [echo]", got)
	}
}

func TestLoadOfAMissingDirectoryFails(t *testing.T) {
	_, err := open(filepath.Join(t.TempDir(), "absent"), LoadOptions{Engine: newEngine(t), Ceilings: ceilings})
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v; want a not-exist error", err)
	}
}

func TestEmptyDirectory(t *testing.T) {
	c := load(t, t.TempDir())
	if len(c.Tools)+len(c.Modules)+len(c.Errors) != 0 {
		t.Errorf("catalog of an empty directory: %+v", c)
	}
}

// loadWithin runs Load, failing the test if it does not return: a FIFO
// opened for reading blocks until a writer comes, which here never does.
func loadWithin(t *testing.T, dir string) *Catalog {
	t.Helper()
	engine := newEngine(t)
	type result struct {
		c   *Catalog
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := open(dir, LoadOptions{Engine: engine, Ceilings: ceilings})
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.c
	case <-time.After(hangGuard):
		t.Fatal("Load hangs on a FIFO")
		return nil
	}
}

func TestFIFOsAreSkippedWithoutHanging(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "a_fifo.wasm")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A real module whose sidecar is a FIFO.
	fifoSidecar := wattest.Write(t, dir, "echo", "b_sidecar")
	if err := syscall.Mkfifo(filepath.Join(dir, "b_sidecar"+abi.SidecarSuffix), 0o644); err != nil {
		t.Fatal(err)
	}
	wattest.Write(t, dir, "echo", "c_good")
	writeSidecar(t, dir, "c_good", manifestFor("good"))

	c := loadWithin(t, dir)
	if got := toolNames(c); len(got) != 1 || got[0] != "good" {
		t.Errorf("tools = %v; want [good]", got)
	}
	for path, want := range map[string]string{
		fifo:        "a_fifo.wasm is not a regular file",
		fifoSidecar: "b_sidecar.manifest.json is not a regular file",
	} {
		if err := errorFor(c, path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error for %s = %v; want one saying %q", path, err, want)
		}
	}
}

func TestOversizedFilesAreRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	// Sparse files: their size is all that is checked, so they cost no disk.
	huge := filepath.Join(dir, "huge.wasm")
	writeFile(t, huge, nil)
	if err := os.Truncate(huge, MaxModuleSize+1); err != nil {
		t.Fatal(err)
	}
	writeSidecar(t, dir, "huge", manifestFor("huge"))
	bigManifest := wattest.Write(t, dir, "echo", "bigmanifest")
	sidecar := writeSidecar(t, dir, "bigmanifest", "")
	if err := os.Truncate(sidecar, abi.MaxManifestSize+1); err != nil {
		t.Fatal(err)
	}

	c := load(t, dir)
	if len(c.Tools) != 0 {
		t.Errorf("tools = %v; want none", toolNames(c))
	}
	for path, want := range map[string]string{
		huge:        fmt.Sprintf("huge.wasm is %d bytes, over the %d-byte limit", MaxModuleSize+1, MaxModuleSize),
		bigManifest: fmt.Sprintf("over the %d-byte limit", abi.MaxManifestSize),
	} {
		if err := errorFor(c, path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error for %s = %v; want one saying %q", path, err, want)
		}
	}
}

func TestReadRegularLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	writeFile(t, path, []byte("0123456789"))
	for _, tc := range []struct {
		limit   int64
		wantErr bool
	}{
		{9, true},
		{10, false},
		{11, false},
	} {
		data, _, err := readRegular(path, tc.limit)
		if gotErr := err != nil; gotErr != tc.wantErr {
			t.Errorf("limit %d: err = %v; want error %v", tc.limit, err, tc.wantErr)
		}
		if err == nil && string(data) != "0123456789" {
			t.Errorf("limit %d: data = %q", tc.limit, data)
		}
	}
	if _, _, err := readRegular(dir, 1<<20); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("reading a directory: err = %v; want 'not a regular file'", err)
	}
	if _, _, err := readRegular(filepath.Join(dir, "absent"), 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading a missing file: err = %v; want ErrNotExist", err)
	}
}

func TestClamp(t *testing.T) {
	ceil := sandbox.Limits{Timeout: 10 * time.Second, Memory: 64 << 20, Output: 1 << 20}
	for _, tc := range []struct {
		name   string
		asked  abi.Limits
		want   sandbox.Limits
		warned []string // limits the log must mention
	}{
		{"zero takes the ceiling", abi.Limits{}, ceil, nil},
		{"lower is kept",
			abi.Limits{Timeout: abi.Duration(time.Second), Memory: 1 << 20, Output: 4 << 10},
			sandbox.Limits{Timeout: time.Second, Memory: 1 << 20, Output: 4 << 10}, nil},
		{"equal is kept",
			abi.Limits{Timeout: abi.Duration(ceil.Timeout), Memory: abi.Size(ceil.Memory), Output: abi.Size(ceil.Output)},
			ceil, nil},
		{"higher is clamped",
			abi.Limits{Timeout: abi.Duration(time.Hour), Memory: 1 << 30, Output: 2 << 20},
			ceil, []string{"limit=timeout", "limit=memory", "limit=output"}},
		{"mixed",
			abi.Limits{Timeout: abi.Duration(time.Hour), Memory: 1 << 20},
			sandbox.Limits{Timeout: ceil.Timeout, Memory: 1 << 20, Output: ceil.Output}, []string{"limit=timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			got := Clamp(tc.asked, ceil, slog.New(slog.NewTextHandler(&logs, nil)), "x.wasm")
			if got != tc.want {
				t.Errorf("Clamp = %+v; want %+v", got, tc.want)
			}
			for _, w := range tc.warned {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log does not mention %s:\n%s", w, logs.String())
				}
			}
			if tc.warned == nil && logs.Len() > 0 {
				t.Errorf("unexpected log:\n%s", logs.String())
			}
		})
	}
	// A nil logger is allowed.
	if got := Clamp(abi.Limits{Memory: 1 << 40}, ceil, nil, "x.wasm"); got != ceil {
		t.Errorf("Clamp with nil logger = %+v; want %+v", got, ceil)
	}
}

func TestManifestLimitsAreClampedAtLoad(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	writeSidecar(t, dir, "echo", `{"abi":1,"limits":{"timeout":"1h","memory":"1MiB"},"tools":[{"name":"echo","description":"d","inputSchema":{"type":"object"}}]}`)
	c := load(t, dir)
	if len(c.Modules) != 1 {
		t.Fatalf("errors: %v", c.Errors)
	}
	want := sandbox.Limits{Timeout: ceilings.Timeout, Memory: 1 << 20, Output: ceilings.Output}
	if got := c.Modules[0].Limits; got != want {
		t.Errorf("Limits = %+v; want %+v", got, want)
	}
}

func loadOne(t *testing.T, wasm []byte) *Module {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "m.wasm")
	writeFile(t, path, wasm)
	writeSidecar(t, dir, "m", manifestFor("m"))
	m, tools, err := LoadFile(path, LoadOptions{Engine: newEngine(t), Ceilings: ceilings})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Module != m {
		t.Fatalf("LoadFile tools = %v", tools)
	}
	return m
}

func TestCompiledOnceForConcurrentCallers(t *testing.T) {
	m := loadOne(t, wattest.Build(t, "echo"))
	const callers = 16
	got := make([]*sandbox.Compiled, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			p, err := m.Compiled(context.Background())
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			got[i] = p
		})
	}
	wg.Wait()
	if got[0] == nil {
		t.Fatal("no compiled module")
	}
	for i, p := range got {
		if p != got[0] {
			t.Errorf("caller %d got %p; caller 0 got %p", i, p, got[0])
		}
	}
	if again, _ := m.Compiled(context.Background()); again != got[0] {
		t.Errorf("a later call got %p; want %p", again, got[0])
	}
	if m.wasm != nil {
		t.Error("the module's bytes are kept after compiling")
	}
}

func TestCompiledReportsCompileErrorsToEveryCaller(t *testing.T) {
	m := loadOne(t, uncompilable())
	_, err1 := m.Compiled(context.Background())
	_, err2 := m.Compiled(context.Background())
	if err1 == nil || err2 == nil {
		t.Fatalf("errors = %v, %v; want a compile error for both calls", err1, err2)
	}
	if err1 != err2 {
		t.Errorf("two calls got different errors (%v, %v): compiled twice?", err1, err2)
	}
}

func TestTheCompilersWordsAreLoggedAtDebug(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.wasm")
	writeFile(t, path, uncompilable())
	writeSidecar(t, dir, "m", manifestFor("m"))
	var logs bytes.Buffer
	m, _, err := LoadFile(path, LoadOptions{Engine: newEngine(t), Ceilings: ceilings, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Compiled(context.Background())
	var refused *sandbox.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Compiled = %v; want the compiler's refusal", err)
	}
	var line string
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "the compiler refused a module") {
			line = l
		}
	}
	if !strings.Contains(line, path) || !strings.Contains(line, strings.Fields(refused.Compiler)[0]) {
		t.Fatalf("no debug line with the file and the compiler's words %q:\n%s", refused.Compiler, logs.String())
	}
}

func TestCompiledHonoursContext(t *testing.T) {
	// A module whose compilation never finishes: the compiler is never
	// started and done is never closed.
	m := &Module{done: make(chan struct{}), needed: make(chan struct{})}
	m.once.Do(func() {})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if p, err := m.Compiled(ctx); p != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: Compiled = %v, %v; want context.Canceled", p, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	if p, err := m.Compiled(ctx); p != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired: Compiled = %v, %v; want context.DeadlineExceeded", p, err)
	}
}

func TestCompilationOutlivesACancelledCaller(t *testing.T) {
	m := loadOne(t, wattest.Build(t, "echo"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The first caller may see its cancellation or, if compiling won the
	// race, the result; either way compiling goes on for the next caller.
	if p, err := m.Compiled(ctx); err != nil && !errors.Is(err, context.Canceled) || err == nil && p == nil {
		t.Fatalf("cancelled caller: Compiled = %v, %v", p, err)
	}
	live, cancelLive := context.WithTimeout(context.Background(), hangGuard)
	defer cancelLive()
	p, err := m.Compiled(live)
	if err != nil || p == nil {
		t.Fatalf("later caller: Compiled = %v, %v; want the compiled module", p, err)
	}
}

func TestWarmCompilesEveryModule(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "a")
	writeSidecar(t, dir, "a", manifestFor("a"))
	writeFile(t, filepath.Join(dir, "b.wasm"), uncompilable())
	writeSidecar(t, dir, "b", manifestFor("b"))
	wattest.Write(t, dir, "argv", "c")
	writeSidecar(t, dir, "c", manifestFor("c"))

	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c, err := open(dir, LoadOptions{Engine: newEngine(t), Ceilings: ceilings})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Modules) != 3 {
		t.Fatalf("modules = %d; errors %v", len(c.Modules), c.Errors)
	}
	c.Warm(context.Background(), log)
	// Warm compiles in order, so once the last module is done every
	// earlier one has been tried.
	for _, m := range c.Modules {
		select {
		case <-m.done:
		case <-time.After(hangGuard):
			t.Fatalf("%s was not compiled by Warm", m.Path)
		}
	}
	if c.Modules[0].program == nil || c.Modules[2].program == nil {
		t.Error("a good module has no compiled program after Warm")
	}
	if c.Modules[1].err == nil {
		t.Error("the uncompilable module compiled")
	}
	// Warm logged b's failure before it went on to c.
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if out := logs.buf.String(); !strings.Contains(out, "module does not compile") || !strings.Contains(out, c.Modules[1].Path) {
		t.Errorf("the compile failure is not logged:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger used by another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestClosingTheEngineWhileCompilingIsSafe(t *testing.T) {
	// A server that stops while modules compile in the background (Warm, or
	// calls given up by their clients) closes the engine under the
	// compiler's feet; the compiles must fail, not crash the process.
	dir := t.TempDir()
	const n = 16
	for i := range n {
		stem := fmt.Sprintf("m%02d", i)
		wattest.Write(t, dir, "probe", stem)
		writeSidecar(t, dir, stem, manifestFor(stem))
	}
	engine, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := open(dir, LoadOptions{Engine: engine, Ceilings: ceilings})
	if err != nil || len(c.Modules) != n {
		t.Fatalf("Load: %v, %d modules", err, len(c.Modules))
	}
	// Start every compile, each abandoned at once by its caller.
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, m := range c.Modules {
		m.Compiled(gone)
	}
	// Close as soon as one compile has finished, while others still run.
	cases := make([]reflect.SelectCase, n)
	for i, m := range c.Modules {
		cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(m.done)}
	}
	reflect.Select(cases)
	if err := engine.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Modules {
		select {
		case <-m.done:
		case <-time.After(hangGuard):
			t.Fatalf("compiling %s never ended", m.Path)
		}
	}
	// Compiling after the close fails cleanly.
	late := loadOne(t, wattest.Build(t, "echo"))
	late.inputs.engine = engine
	if _, err := late.Compiled(context.Background()); err == nil {
		t.Error("a module compiled on a closed engine")
	}
}

// A manifest's schemas are bounded together, so that a manifest of many
// tools each at the bound of one schema cannot cost seconds to load.
func TestManifestSchemasAreBoundedTogether(t *testing.T) {
	// Each schema holds about 600 nodes: under schema.MaxNodes, but
	// eight of them pass MaxSchemaNodes.
	props := make([]string, 600)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{}`, i)
	}
	big := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	var tools []string
	for i := range 8 {
		tools = append(tools, fmt.Sprintf(`{"name":"t%d","description":"d","inputSchema":%s}`, i, big))
	}
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	manifest := `{"abi":1,"tools":[` + strings.Join(tools, ",") + `]}`
	if err := os.WriteFile(filepath.Join(dir, "echo"+abi.SidecarSuffix), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadFile(filepath.Join(dir, "echo.wasm"), LoadOptions{Engine: newEngine(t)})
	if err == nil || !strings.Contains(err.Error(), "objects and booleans in all") {
		t.Fatalf("LoadFile = %v; want the manifest's schemas refused together", err)
	}
}

// open opens a registry on dir, as at a server's start, and returns its
// catalog.
func open(dir string, opts LoadOptions) (*Catalog, error) {
	r, err := Open(Options{Dir: dir, LoadOptions: opts})
	if err != nil {
		return nil, err
	}
	return r.Current(), nil
}

// stallingEngine is an engine whose modules compile in
// wattest.StallingWorker, stalling over a module of stall bytes, with the
// cache in cacheDir ("" for none) and one compile slot.
func stallingEngine(t *testing.T, stall int, cacheDir string) (*sandbox.Engine, func() string) {
	t.Helper()
	path, args, next := wattest.StallingWorker(t, stall)
	e, err := sandbox.NewEngine(context.Background(), sandbox.Config{Engine: os.Getenv("WASMCP_ENGINE"), CacheDir: cacheDir,
		Compile: sandbox.CompileLimits{Concurrency: 1}, Worker: &sandbox.Worker{Path: path, Args: args}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e, next
}

// slowAndEcho writes a directory of two modules: slow, the smaller, which
// a stalling worker stalls over, and echo.
func slowAndEcho(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "slow.wasm"), uncompilable())
	writeSidecar(t, dir, "slow", manifestFor("slow"))
	wattest.Write(t, dir, "echo", "echo")
	writeSidecar(t, dir, "echo", manifestFor("echo"))
	return dir
}

// The warm-up's compilations are made ahead of need: a module a caller
// waits for compiles in the slot of one of them, and the warm-up goes on
// once it is done.
func TestACallersModuleDoesNotWaitForTheWarmUp(t *testing.T) {
	dir := slowAndEcho(t)
	engine, next := stallingEngine(t, len(uncompilable()), "")
	c, err := open(dir, LoadOptions{Engine: engine, Ceilings: ceilings})
	if err != nil || len(c.Modules) != 2 {
		t.Fatalf("Load: %v, %d modules", err, len(c.Modules))
	}
	echo, slow := c.Modules[0], c.Modules[1]
	warmed := c.Warm(context.Background(), slog.New(slog.DiscardHandler))
	// slow is the smaller module, so the warm-up compiles it first.
	if got := next(); got != fmt.Sprint(len(uncompilable())) {
		t.Fatalf("the warm-up's first worker had a module of %s bytes; want slow's", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if _, err := echo.Compiled(ctx); err != nil {
		t.Fatalf("echo, while the warm-up compiles slow: %v", err)
	}
	select {
	case <-slow.done:
		t.Fatal("slow's compilation ended before echo's")
	case <-warmed:
		t.Fatal("the warm-up ended before slow's compilation")
	default:
	}
	if closed(slow.needed) {
		t.Fatal("the warm-up made slow's compilation one a caller waits for")
	}
}

// After a restart, the warm-up loads the modules in the cache before it
// compiles the others, however small: a module that compiles for as long
// as its limit allows does not keep those waiting either.
func TestTheWarmUpLoadsCachedModulesFirst(t *testing.T) {
	dir, cache := slowAndEcho(t), wattest.CacheDir(t)
	first, _ := stallingEngine(t, len(uncompilable()), cache)
	c, err := open(dir, LoadOptions{Engine: first, Ceilings: ceilings})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Modules[0].Compiled(context.Background()); err != nil {
		t.Fatalf("echo: %v", err)
	}
	restarted, next := stallingEngine(t, len(uncompilable()), cache)
	if c, err = open(dir, LoadOptions{Engine: restarted, Ceilings: ceilings}); err != nil {
		t.Fatal(err)
	}
	c.Warm(context.Background(), slog.New(slog.DiscardHandler))
	echo, slow := c.Modules[0], c.Modules[1]
	if got := next(); got != fmt.Sprint(echo.Size) {
		t.Fatalf("the warm-up's first worker had a module of %s bytes; want echo's (%d), which is in the cache", got, echo.Size)
	}
	if got := next(); got != fmt.Sprint(slow.Size) {
		t.Fatalf("the warm-up's second worker had a module of %s bytes; want slow's (%d)", got, slow.Size)
	}
	select {
	case <-echo.done:
	default:
		t.Fatal("the warm-up compiled slow before echo was done")
	}
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestResourcesAreServedAcrossModulesAndDuplicatesNameBothFiles(t *testing.T) {
	dir := t.TempDir()
	b := wattest.Write(t, dir, "echo", "b")
	writeSidecar(t, dir, "b", `{"abi":1,"resources":[{"uri":"shared://x","name":"x"},{"uri":"b://only","name":"b"}],
		"resourceTemplates":[{"uriTemplate":"shared://{id}","name":"t"},{"uriTemplate":"b://{id}","name":"tb"}]}`)
	a := wattest.Write(t, dir, "argv", "a")
	writeSidecar(t, dir, "a", `{"abi":1,"resources":[{"uri":"shared://x","name":"x","text":"from a"}],
		"resourceTemplates":[{"uriTemplate":"shared://{id}","name":"t"}]}`)

	c := load(t, dir)
	if len(c.Tools) != 0 || len(c.Modules) != 2 {
		t.Fatalf("%d tools, %d modules; want 0 and 2 (modules of resources alone)", len(c.Tools), len(c.Modules))
	}
	if r, ok := c.Resource("shared://x"); !ok || r.Module.Path != a || *r.Spec.Text != "from a" {
		t.Errorf("shared://x: ok=%v; want it served by %s", ok, a)
	}
	if r, ok := c.Resource("b://only"); !ok || r.Module.Path != b {
		t.Errorf("b://only: ok=%v; want it served by %s", ok, b)
	}
	if tm, ok := c.Template("shared://{id}"); !ok || tm.Module.Path != a {
		t.Errorf("shared://{id}: ok=%v; want it served by %s", ok, a)
	}
	var uris, templates []string
	for _, r := range c.Resources {
		uris = append(uris, r.Spec.URI)
	}
	for _, tm := range c.Templates {
		templates = append(templates, tm.Spec.URITemplate)
	}
	if strings.Join(uris, " ") != "b://only shared://x" || strings.Join(templates, " ") != "b://{id} shared://{id}" {
		t.Errorf("resources %v, templates %v; want each sorted, without duplicates", uris, templates)
	}
	if len(c.Errors) != 2 {
		t.Fatalf("errors = %v; want two", c.Errors)
	}
	for i, want := range []string{`resource "shared://x" serves URIs of shared://x, part of which ` + a + ` serves`, `resource template "shared://{id}" serves URIs of shared:, part of which ` + a + ` serves`} {
		if e := c.Errors[i]; e.Path != b || !strings.Contains(e.Error(), want) {
			t.Errorf("error = %v; want one for %s saying %s", e, b, want)
		}
	}
}

func TestDuplicatePromptsNameBothFiles(t *testing.T) {
	dir := t.TempDir()
	b := wattest.Write(t, dir, "echo", "b")
	writeSidecar(t, dir, "b", `{"abi":1,"prompts":[{"name":"shared"},{"name":"only_b","messages":[{"role":"user","content":{"type":"text","text":"b"}}]}]}`)
	a := wattest.Write(t, dir, "argv", "a")
	writeSidecar(t, dir, "a", `{"abi":1,"prompts":[{"name":"shared"}]}`)
	c := load(t, dir)
	if p, ok := c.Prompt("shared"); !ok || p.Module.Path != a || p.Entry == nil || p.Entry.Spec.Name != "prompts/get" {
		t.Errorf("shared: ok=%v; want it served by %s's prompts/get", ok, a)
	}
	if p, ok := c.Prompt("only_b"); !ok || p.Module.Path != b || p.Entry != nil {
		t.Errorf("only_b: ok=%v; want it served by %s from its messages", ok, b)
	}
	if len(c.Prompts) != 2 || c.Prompts[0].Spec.Name != "only_b" {
		t.Errorf("prompts = %v; want two, sorted", c.Prompts)
	}
	if len(c.Errors) != 1 || c.Errors[0].Path != b || !strings.Contains(c.Errors[0].Error(), `prompt "shared" is already provided by `+a) {
		t.Errorf("errors = %v; want one for %s naming %s", c.Errors, b, a)
	}
}
