package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// settle makes the catalog's stamps as if taken an hour after the files
// last changed, as in a directory in service.
func settle(c *Catalog) {
	for path, l := range c.loads {
		l.stamp.at = l.stamp.at.Add(time.Hour)
		c.loads[path] = l
	}
}

// reread scans dir after prev and returns, by file name, whether each
// file was read again, checking that one that was not gives what it gave
// in prev; and the catalog plan makes of the scan.
func reread(t *testing.T, dir string, opts LoadOptions, prev *Catalog) (map[string]bool, *Catalog) {
	t.Helper()
	files, err := scan(dir, opts, prev)
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, f := range files {
		read[filepath.Base(f.path)] = !f.reused
		if was := prev.loads[f.path]; f.reused && (f.m != was.m || f.err != was.err) {
			t.Fatalf("%s was not read, but does not give what it gave", f.path)
		}
	}
	next, _ := run(prev, policyRead{}, files...)
	return read, next
}

// scanned is the catalog of a first scan of dir.
func scanned(t *testing.T, dir string, opts LoadOptions) *Catalog {
	t.Helper()
	files, err := scan(dir, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := run(nil, policyRead{}, files...)
	return cat
}

func statOf(t *testing.T, path string) fileID {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := statID(fi)
	if !ok {
		t.Fatal("no fileID on this platform")
	}
	return id
}

func TestAReloadReadsOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	opts := LoadOptions{Engine: newEngine(t), Ceilings: ceilings}
	for _, stem := range []string{"a", "b", "c", "d"} {
		wattest.Write(t, dir, "echo", stem)
		writeSidecar(t, dir, stem, manifestFor(stem))
	}
	writeFile(t, filepath.Join(dir, "e.wasm"), embed(t, wattest.Build(t, "echo"), manifestFor("e")))
	writeFile(t, filepath.Join(dir, "f.wasm"), embed(t, wattest.Build(t, "echo"), manifestFor("f")))
	writeSidecar(t, dir, "f", manifestFor("f2"))
	cat := scanned(t, dir, opts)
	settle(cat)

	// b's manifest is rewritten; c's module is written again in place, and
	// its modification time put back (cp -p, rsync -t): only its change
	// time tells; d's sidecar goes, and its module embeds a manifest; e
	// gets a sidecar; f's goes, leaving the manifest it embeds.
	writeSidecar(t, dir, "b", manifestFor("b2"))
	c := filepath.Join(dir, "c.wasm")
	fi, err := os.Stat(c)
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := os.ReadFile(c)
	if err != nil {
		t.Fatal(err)
	}
	was := cat.loads[c].stamp.wasm
	writeFile(t, c, wasm)
	// Until the file system's clock has ticked since c was first written:
	// within one tick, the change time cannot tell (see the racy window).
	for deadline := time.Now().Add(hangGuard); statOf(t, c).ctime == was.ctime; {
		if time.Now().After(deadline) {
			t.Fatal("c's change time stays the same: stat gives none")
		}
		if err := os.Chtimes(c, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(c, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now := statOf(t, c); now.size != was.size || now.mtime != was.mtime || now.ino != was.ino {
		t.Fatalf("c's stat %+v; want all but its change time as in %+v", now, was)
	}
	if err := os.Remove(sidecarOf(filepath.Join(dir, "d.wasm"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "d.wasm"), embed(t, wattest.Build(t, "echo"), manifestFor("d")))
	writeSidecar(t, dir, "e", manifestFor("e2"))
	if err := os.Remove(sidecarOf(filepath.Join(dir, "f.wasm"))); err != nil {
		t.Fatal(err)
	}

	read, next := reread(t, dir, opts, cat)
	want := map[string]bool{"a.wasm": false, "b.wasm": true, "c.wasm": true, "d.wasm": true, "e.wasm": true, "f.wasm": true}
	for name, w := range want {
		if read[name] != w {
			t.Errorf("%s read again: %v; want %v (all: %v)", name, read[name], w, read)
		}
	}
	for _, tool := range []string{"b2", "e2", "f"} {
		if _, ok := next.Lookup(tool); !ok {
			t.Errorf("%s, from a changed manifest, is not served", tool)
		}
	}

	// Once settled, nothing that stays the same is read again.
	settle(next)
	read, _ = reread(t, dir, opts, next)
	for name, again := range read {
		if again {
			t.Errorf("%s was read again, unchanged", name)
		}
	}
}

// A file rewritten with the same size within the tick of the file
// system's clock in which its stamp was taken stats as it did: its stamp
// is not trusted until it is older than the racy window. The rewrite is
// made deterministic by giving the stamp what stat says after it.
func TestAFileRewrittenWithinItsStampsTickIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	opts := LoadOptions{Engine: newEngine(t), Ceilings: ceilings}
	path := wattest.Write(t, dir, "echo", "a")
	sidecar := writeSidecar(t, dir, "a", manifestFor("a"))
	cat := scanned(t, dir, opts)
	writeSidecar(t, dir, "a", manifestFor("b")) // as long as "a"'s
	l := cat.loads[path]
	l.stamp.wasm, l.stamp.sidecar = statOf(t, path), statOf(t, sidecar)
	if l.stamp.sidecar.size != cat.loads[path].stamp.sidecar.size {
		t.Fatal("the manifests differ in size")
	}
	changed := time.Unix(0, max(l.stamp.wasm.ctime, l.stamp.sidecar.ctime))
	for _, at := range []time.Time{changed, changed.Add(racyWindow)} {
		l.stamp.at = at
		cat.loads[path] = l
		read, next := reread(t, dir, opts, cat)
		if _, ok := next.Lookup("b"); !read["a.wasm"] || !ok {
			t.Errorf("stamp taken %v after the rewrite: read again %v; want the new manifest served", at.Sub(changed), read["a.wasm"])
		}
	}
}

func TestAStampIsSettledOnlyPastTheRacyWindow(t *testing.T) {
	at := time.Unix(1e6, 0)
	before := func(d time.Duration) int64 { return at.Add(-d).UnixNano() }
	for _, tc := range []struct {
		what string
		s    stamp
		want bool
	}{
		{"module old enough, no sidecar", stamp{wasm: fileID{ctime: before(racyWindow + 1)}, at: at, ok: true}, true},
		{"module changed a window before", stamp{wasm: fileID{ctime: before(racyWindow)}, at: at, ok: true}, false},
		{"module changed after the stamp", stamp{wasm: fileID{ctime: before(-time.Second)}, at: at, ok: true}, false},
		{"sidecar old enough too", stamp{wasm: fileID{ctime: before(time.Hour)}, sidecar: fileID{ino: 2, ctime: before(racyWindow + 1)}, at: at, ok: true}, true},
		{"sidecar changed a window before", stamp{wasm: fileID{ctime: before(time.Hour)}, sidecar: fileID{ino: 2, ctime: before(racyWindow)}, at: at, ok: true}, false},
		{"a stamp the platform could not fill", stamp{wasm: fileID{ctime: before(time.Hour)}, at: at}, false},
	} {
		if got := tc.s.settled(); got != tc.want {
			t.Errorf("%s: settled = %v; want %v", tc.what, got, tc.want)
		}
	}
}

// A load depends on the engine and the ceilings too: one with others
// reads the files again, and serves what it read.
func TestAFileLoadedWithOtherInputsIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	opts := LoadOptions{Engine: newEngine(t), Ceilings: ceilings}
	path := wattest.Write(t, dir, "echo", "a")
	writeSidecar(t, dir, "a", manifestFor("a"))
	cat := scanned(t, dir, opts)
	settle(cat)
	lower := opts
	lower.Ceilings.Timeout /= 2
	other := opts
	other.Engine = newEngine(t)
	for what, o := range map[string]LoadOptions{"lower ceilings": lower, "another engine": other} {
		read, next := reread(t, dir, o, cat)
		m := served(next, "a")
		if !read["a.wasm"] || m == nil || m.Limits.Timeout != o.Ceilings.Timeout || m.inputs.engine != o.Engine {
			t.Errorf("%s: read again %v; want the module loaded anew", what, read["a.wasm"])
		}
	}
	if read, _ := reread(t, dir, opts, cat); read[filepath.Base(path)] {
		t.Error("the same inputs read the file again")
	}
}

// A file that does not load gives the same error while it stays the same;
// one that could not be read is read again.
func TestAFileThatDoesNotLoadIsReadAgainOnlyOnceChanged(t *testing.T) {
	dir := t.TempDir()
	opts := LoadOptions{Engine: newEngine(t), Ceilings: ceilings}
	bad := wattest.Write(t, dir, "echo", "bad")
	writeSidecar(t, dir, "bad", manifestFor("has space"))
	unreadable := wattest.Write(t, dir, "echo", "unreadable")
	if err := os.Mkdir(sidecarOf(unreadable), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := scanned(t, dir, opts)
	if len(cat.Errors) != 2 {
		t.Fatalf("errors %v; want bad's and unreadable's", cat.Errors)
	}
	settle(cat)
	read, next := reread(t, dir, opts, cat)
	if read["bad.wasm"] || !read["unreadable.wasm"] {
		t.Errorf("read again: %v; want only unreadable.wasm", read)
	}
	if err := errorFor(next, bad); err == nil || err.(LoadError).Err != cat.loads[bad].err {
		t.Errorf("bad.wasm: %v; want its error again", err)
	}
	// bad's manifest is fixed; unreadable's sidecar goes, leaving it none.
	settle(next)
	writeSidecar(t, dir, "bad", manifestFor("good"))
	if err := os.Remove(sidecarOf(unreadable)); err != nil {
		t.Fatal(err)
	}
	read, last := reread(t, dir, opts, next)
	if !read["bad.wasm"] || served(last, "good") == nil {
		t.Errorf("a fixed manifest: read again %v; want its tool served", read["bad.wasm"])
	}
	if err := errorFor(last, unreadable); err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Errorf("unreadable.wasm without a sidecar: %v; want no manifest", err)
	}
}

// The policy is no input of a load: a changed one is taken at the reload
// that finds it, reading no module again.
func TestAChangedPolicyIsTakenWithoutReadingModules(t *testing.T) {
	dir := t.TempDir()
	path := wattest.Write(t, dir, "echo", "a")
	writeSidecar(t, dir, "a", manifestFor("a"))
	policyFile := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policyFile, []byte("modules: {}\n"))
	r, err := Open(Options{Dir: dir, PolicyFile: policyFile, LoadOptions: LoadOptions{Engine: newEngine(t), Ceilings: ceilings}})
	if err != nil {
		t.Fatal(err)
	}
	first := r.Current()
	settle(first)
	writeFile(t, policyFile, []byte("modules:\n  a: {}\n"))
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	next := r.Current()
	if next.Policy == first.Policy || next.loads[path].stamp != first.loads[path].stamp {
		t.Errorf("policy changed %v, module's stamp kept %v; want both", next.Policy != first.Policy, next.loads[path].stamp == first.loads[path].stamp)
	}
}

func TestPlanKeepsWhatEachReadableFileGave(t *testing.T) {
	st := func(ino uint64) stamp { return stamp{wasm: fileID{ino: ino}, ok: true} }
	a := fake("a.wasm", "k1", "x")
	prev, _ := run(nil, policyRead{}, loaded{path: "a.wasm", m: a, stamp: st(1)}, loaded{path: "b.wasm", m: fake("b.wasm", "k2", "y"), stamp: st(2)})
	// a is read again, unchanged in content; b no longer loads; c is new;
	// d could not be read.
	bErr := errors.New("bad magic")
	next, _ := run(prev, policyRead{},
		loaded{path: "a.wasm", m: fake("a.wasm", "k1", "x"), stamp: st(3)},
		loaded{path: "b.wasm", err: bErr, stamp: st(4)},
		loaded{path: "c.wasm", m: fake("c.wasm", "k3", "z"), stamp: st(5)},
		loaded{path: "d.wasm", err: os.ErrPermission})
	if l := next.loads["a.wasm"]; served(next, "x") != a || l.m != a || l.stamp != st(3) {
		t.Errorf("a: kept %v, load %+v; want the module kept as it was, with the new stamp", served(next, "x") == a, l)
	}
	if l := next.loads["b.wasm"]; l.m != nil || l.err != bErr || l.stamp != st(4) {
		t.Errorf("b: load %+v; want its error, not the version kept serving", l)
	}
	if l := next.loads["c.wasm"]; l.m != served(next, "z") || l.stamp != st(5) {
		t.Errorf("c: load %+v", l)
	}
	if _, ok := next.loads["d.wasm"]; ok {
		t.Error("a file that could not be read is kept: it would not be read again")
	}
}
