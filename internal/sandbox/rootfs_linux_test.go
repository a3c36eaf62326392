package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// raceTree is a mount holding the operator's d/link, a link to a directory
// outside the mount, and the guest's own directory at x, with x/link/secret
// a decoy. It returns the mount and the outside directory, which holds
// "secret" and an empty directory "sub".
func raceTree(t *testing.T) (mount, outside string) {
	t.Helper()
	top := t.TempDir()
	mount, outside = filepath.Join(top, "m"), filepath.Join(top, "outside")
	for _, d := range []string{filepath.Join(outside, "sub"), filepath.Join(mount, "d"), filepath.Join(mount, "x", "link")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		filepath.Join(outside, "secret"):            "TOPSECRET",
		filepath.Join(mount, "x", "link", "secret"): "decoy",
		filepath.Join(mount, "x", "own"):            "own",
		filepath.Join(mount, "f"):                   "f",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(mount, "d", "link")); err != nil {
		t.Fatal(err)
	}
	return mount, outside
}

// swapIn moves the guest's x to e and the operator's d to x: what a second
// call of the guest can do at any moment.
func swapIn(t *testing.T, mount string) {
	t.Helper()
	if err := os.Rename(filepath.Join(mount, "x"), filepath.Join(mount, "e")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(mount, "d"), filepath.Join(mount, "x")); err != nil {
		t.Fatal(err)
	}
}

// swapFirst is a mount's file system with swapIn run before each operation
// reaches it: after whatever confinedFS checks of the name, before the
// lookup that uses it.
type swapFirst struct {
	experimentalsys.FS
	swap func()
}

func (s swapFirst) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	s.swap()
	return s.FS.OpenFile(p, flag, perm)
}

func (s swapFirst) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	s.swap()
	return s.FS.Lstat(p)
}

func (s swapFirst) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	s.swap()
	return s.FS.Stat(p)
}

func (s swapFirst) Readlink(p string) (string, experimentalsys.Errno) {
	s.swap()
	return s.FS.Readlink(p)
}

func (s swapFirst) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	s.swap()
	return s.FS.Mkdir(p, perm)
}

func (s swapFirst) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	s.swap()
	return s.FS.Chmod(p, perm)
}

func (s swapFirst) Rename(from, to string) experimentalsys.Errno {
	s.swap()
	return s.FS.Rename(from, to)
}

func (s swapFirst) Rmdir(p string) experimentalsys.Errno {
	s.swap()
	return s.FS.Rmdir(p)
}

func (s swapFirst) Unlink(p string) experimentalsys.Errno {
	s.swap()
	return s.FS.Unlink(p)
}

func (s swapFirst) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	s.swap()
	return s.FS.Utimens(p, atim, mtim)
}

// outsideState describes the outside directory: its entries, their modes
// and modification times, and what secret holds.
func outsideState(t *testing.T, outside string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, err := d.Info()
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	secret, _ := os.ReadFile(filepath.Join(outside, "secret"))
	return b.String() + string(secret)
}

// TestRenameBetweenCheckAndUseStaysInside makes the swap of the red team's
// race happen, deterministically, after confinedFS has seen the name (x,
// the guest's own directory) and before the lookup that uses it (x, now
// the operator's d, whose link leads out). Every operation is refused and
// nothing outside is read or changed. The check-then-reopen that this
// replaces read the secret and wrote beside it.
func TestRenameBetweenCheckAndUseStaysInside(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   func(experimentalsys.FS) experimentalsys.Errno
	}{
		{"read", func(c experimentalsys.FS) experimentalsys.Errno {
			f, errno := c.OpenFile("x/link/secret", experimentalsys.O_RDONLY, 0)
			if errno == 0 {
				buf := make([]byte, 64)
				n, _ := f.Read(buf)
				f.Close()
				t.Errorf("read %q through the swapped directory", buf[:n])
			}
			return errno
		}},
		{"create", func(c experimentalsys.FS) experimentalsys.Errno {
			f, errno := c.OpenFile("x/link/pwned", experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644)
			if errno == 0 {
				f.Close()
			}
			return errno
		}},
		{"create without following", func(c experimentalsys.FS) experimentalsys.Errno {
			f, errno := c.OpenFile("x/link/pwned", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_NOFOLLOW, 0o644)
			if errno == 0 {
				f.Close()
			}
			return errno
		}},
		{"stat", func(c experimentalsys.FS) experimentalsys.Errno { _, e := c.Stat("x/link/secret"); return e }},
		{"lstat", func(c experimentalsys.FS) experimentalsys.Errno { _, e := c.Lstat("x/link/secret"); return e }},
		{"mkdir", func(c experimentalsys.FS) experimentalsys.Errno { return c.Mkdir("x/link/new", 0o755) }},
		{"chmod", func(c experimentalsys.FS) experimentalsys.Errno { return c.Chmod("x/link/secret", 0o777) }},
		{"utimens", func(c experimentalsys.FS) experimentalsys.Errno { return c.Utimens("x/link/secret", 1e9, 1e9) }},
		{"rename out", func(c experimentalsys.FS) experimentalsys.Errno { return c.Rename("f", "x/link/f") }},
		{"rename in", func(c experimentalsys.FS) experimentalsys.Errno { return c.Rename("x/link/secret", "stolen") }},
		{"unlink", func(c experimentalsys.FS) experimentalsys.Errno { return c.Unlink("x/link/secret") }},
		{"rmdir", func(c experimentalsys.FS) experimentalsys.Errno { return c.Rmdir("x/link/sub") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mount, outside := raceTree(t)
			before := outsideState(t, outside)
			cfs, err := newConfinedFS(Mount{Host: mount, Guest: "/m", Write: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cfs.root.Close()
			cfs.FS = swapFirst{FS: cfs.FS, swap: func() { swapIn(t, mount) }}
			if errno := tc.op(cfs); errno != experimentalsys.EPERM {
				t.Errorf("errno %v; want EPERM (the path leads out of the mount)", errno)
			}
			if after := outsideState(t, outside); after != before {
				t.Errorf("the directory outside the mount changed:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// TestLinksOutAreRefused follows the operator's links out of the mount,
// absolute and relative, in every operation: each is EPERM. The link
// itself is the mount's: it can be looked at, moved and removed, but its
// absolute target, a host path, is not told.
func TestLinksOutAreRefused(t *testing.T) {
	mount, outside := raceTree(t)
	if err := os.Symlink("../../outside", filepath.Join(mount, "d", "rel")); err != nil {
		t.Fatal(err)
	}
	before := outsideState(t, outside)
	cfs, err := newConfinedFS(Mount{Host: mount, Guest: "/m", Write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cfs.root.Close()
	for _, link := range []string{"d/link", "d/rel"} {
		for name, errno := range map[string]experimentalsys.Errno{
			"open":      openErrno(cfs, link+"/secret", experimentalsys.O_RDONLY),
			"open link": openErrno(cfs, link, experimentalsys.O_RDONLY),
			"create":    openErrno(cfs, link+"/new", experimentalsys.O_RDWR|experimentalsys.O_CREAT),
			"stat":      second(cfs.Stat(link + "/secret")),
			"stat link": second(cfs.Stat(link)),
			"mkdir":     cfs.Mkdir(link+"/new", 0o755),
			"rename":    cfs.Rename("f", link+"/f"),
			"unlink":    cfs.Unlink(link + "/secret"),
			"rmdir":     cfs.Rmdir(link + "/sub"),
			"utimens":   cfs.Utimens(link, 1e9, 1e9),
			"chmod":     cfs.Chmod(link, 0o777),
		} {
			if errno != experimentalsys.EPERM {
				t.Errorf("%s through %s: errno %v; want EPERM", name, link, errno)
			}
		}
		if errno := openErrno(cfs, link, experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW); errno != experimentalsys.ELOOP {
			t.Errorf("opening %s without following: errno %v; want ELOOP", link, errno)
		}
		if st, errno := cfs.Lstat(link); errno != 0 || st.Mode&fs.ModeSymlink == 0 {
			t.Errorf("lstat %s = %v, %v; want the link itself", link, st.Mode, errno)
		}
	}
	if _, errno := cfs.Readlink("d/link"); errno != experimentalsys.EPERM {
		t.Errorf("readlink of an absolute link: errno %v; want EPERM", errno)
	}
	if target, errno := cfs.Readlink("d/rel"); errno != 0 || target != "../../outside" {
		t.Errorf("readlink of a relative link = %q, %v", target, errno)
	}
	if after := outsideState(t, outside); after != before {
		t.Errorf("the directory outside the mount changed:\n%s\nwas\n%s", after, before)
	}
	// ".." stops at the mount's top, as in a chroot.
	if st, errno := cfs.Stat("../../f"); errno != 0 || st.Size != 1 {
		t.Errorf("stat ../../f = %+v, %v; want the mount's f", st, errno)
	}
	if errno := cfs.Rename("d/link", "moved"); errno != 0 {
		t.Errorf("moving the link itself: errno %v", errno)
	}
	if errno := cfs.Unlink("moved"); errno != 0 {
		t.Errorf("removing the link itself: errno %v", errno)
	}
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Errorf("removing the link removed its target: %v", err)
	}
}

func openErrno(c experimentalsys.FS, p string, flag experimentalsys.Oflag) experimentalsys.Errno {
	f, errno := c.OpenFile(p, flag, 0o644)
	if errno == 0 {
		f.Close()
	}
	return errno
}

func second[T any](_ T, errno experimentalsys.Errno) experimentalsys.Errno { return errno }

// TestOpenDirectoryAfterRename opens the guest's own directory, then has
// it moved away and the operator's directory (with its link out) moved to
// its name. The open directory still reads as the guest's, rewound too:
// its descriptor is read, not its name. A path under the name (which is
// how wazero opens relative to a directory descriptor) meets the link,
// and is refused.
func TestOpenDirectoryAfterRename(t *testing.T) {
	mount, _ := raceTree(t)
	cfs, err := newConfinedFS(Mount{Host: mount, Guest: "/m", Write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cfs.root.Close()
	dir, errno := cfs.OpenFile("x", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer dir.Close()
	swapIn(t, mount)
	want := "link dir, own file"
	if got := entries(t, dir); got != want {
		t.Errorf("the open directory lists %s; want %s", got, want)
	}
	if _, errno := dir.Seek(0, 0); errno != 0 {
		t.Fatal(errno)
	}
	if got := entries(t, dir); got != want {
		t.Errorf("rewound, the open directory lists %s; want %s", got, want)
	}
	if errno := openErrno(cfs, "x/link/secret", experimentalsys.O_RDONLY); errno != experimentalsys.EPERM {
		t.Errorf("a path under the directory's old name: errno %v; want EPERM", errno)
	}
}

// entries lists what Readdir returns, two at a time.
func entries(t *testing.T, f experimentalsys.File) string {
	t.Helper()
	var got []string
	for {
		ds, errno := f.Readdir(2)
		if errno != 0 {
			t.Fatal(errno)
		}
		for _, d := range ds {
			kind := "file"
			if d.Type.IsDir() {
				kind = "dir"
			} else if d.Type&fs.ModeSymlink != 0 {
				kind = "link"
			}
			got = append(got, d.Name+" "+kind)
		}
		if len(ds) < 2 {
			break
		}
	}
	slices.Sort(got)
	return strings.Join(got, ", ")
}

// TestReadOnlyMountRefusesCreateAndTruncate opens for reading with
// O_CREAT or O_TRUNC, which WASI lets a guest ask for with only the right
// to read and which wazero's ReadFS lets through: in a read-only mount
// both are EROFS, and nothing is created or truncated.
func TestReadOnlyMountRefusesCreateAndTruncate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfs, err := newConfinedFS(Mount{Host: dir, Guest: "/m"})
	if err != nil {
		t.Fatal(err)
	}
	defer cfs.root.Close()
	if errno := openErrno(cfs, "new", experimentalsys.O_RDONLY|experimentalsys.O_CREAT); errno != experimentalsys.EROFS {
		t.Errorf("create: errno %v; want EROFS", errno)
	}
	if errno := openErrno(cfs, "f", experimentalsys.O_RDONLY|experimentalsys.O_TRUNC); errno != experimentalsys.EROFS {
		t.Errorf("truncate: errno %v; want EROFS", errno)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "contents" {
		t.Errorf("f holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("a read-only mount got a new file")
	}
}

// TestErrnosAsDirFS runs the same operations on two copies of a tree (no
// link in it leads out), one through wazero's DirFS, which the confined
// file system replaces, the other through the confined one, and compares
// every answer: errnos, what was read and listed, file types and sizes.
// Paths are cleaned for DirFS as the confined file system cleans them.
func TestErrnosAsDirFS(t *testing.T) {
	ref, got := t.TempDir(), t.TempDir()
	for _, dir := range []string{ref, got} {
		for _, d := range []string{"d", "e", "n", "sub"} {
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, data := range map[string]string{"f": "contents", "d/g": "gee", "n/h": "h", "n/i": "i", "n/j": "j"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for link, target := range map[string]string{"ln": "f", "lnd": "d", "dangling": "nothere", "sub/up": "../f"} {
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfs, err := newConfinedFS(Mount{Host: got, Guest: "/m", Write: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cfs.root.Close()
	want := cleaned{sysfs.DirFS(ref)}
	for _, step := range errnoScript() {
		if w, g := step.run(want), step.run(cfs); w != g {
			t.Errorf("%s: %s; DirFS: %s", step.name, g, w)
		}
	}
}

// cleaned is a file system with each path cleaned first.
type cleaned struct{ experimentalsys.FS }

func (c cleaned) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	return c.FS.OpenFile(clean(p), flag, perm)
}
func (c cleaned) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) { return c.FS.Lstat(clean(p)) }
func (c cleaned) Stat(p string) (sys.Stat_t, experimentalsys.Errno)  { return c.FS.Stat(clean(p)) }
func (c cleaned) Readlink(p string) (string, experimentalsys.Errno)  { return c.FS.Readlink(clean(p)) }
func (c cleaned) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	return c.FS.Mkdir(clean(p), perm)
}
func (c cleaned) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return c.FS.Chmod(clean(p), perm)
}
func (c cleaned) Rename(from, to string) experimentalsys.Errno {
	return c.FS.Rename(clean(from), clean(to))
}
func (c cleaned) Rmdir(p string) experimentalsys.Errno  { return c.FS.Rmdir(clean(p)) }
func (c cleaned) Unlink(p string) experimentalsys.Errno { return c.FS.Unlink(clean(p)) }
func (c cleaned) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	return c.FS.Utimens(clean(p), atim, mtim)
}

type errnoStep struct {
	name string
	run  func(experimentalsys.FS) string
}

// errnoScript is the operations TestErrnosAsDirFS compares, in order: each
// may change the tree for those after it.
func errnoScript() []errnoStep {
	var steps []errnoStep
	add := func(name string, run func(experimentalsys.FS) string) {
		steps = append(steps, errnoStep{name, run})
	}
	add("a file's operations", fileScript)
	add("a directory's operations", dirScript)
	paths := []string{".", "f", "d", "d/g", "e", "ln", "lnd", "lnd/g", "dangling", "missing",
		"f/x", "missing/x", "d/", "f/", "sub/up", "sub/../f", "../f"}
	for _, p := range paths {
		add("stat "+p, func(c experimentalsys.FS) string { return statString(c.Stat(p)) })
		add("lstat "+p, func(c experimentalsys.FS) string { return statString(c.Lstat(p)) })
		add("readlink "+p, func(c experimentalsys.FS) string { s, e := c.Readlink(p); return fmt.Sprint(s, e) })
	}
	const (
		rd   = experimentalsys.O_RDONLY
		rw   = experimentalsys.O_RDWR
		dir  = experimentalsys.O_DIRECTORY
		nof  = experimentalsys.O_NOFOLLOW
		crt  = experimentalsys.O_CREAT
		excl = experimentalsys.O_EXCL
	)
	for _, flag := range []experimentalsys.Oflag{rd, rd | dir, rd | nof, rd | dir | nof, rw, rw | nof,
		experimentalsys.O_WRONLY | experimentalsys.O_APPEND, rw | crt | excl, rw | crt | nof, rw | crt,
		experimentalsys.O_WRONLY | experimentalsys.O_TRUNC} {
		for _, p := range paths {
			add(fmt.Sprintf("open %s %#x", p, flag), func(c experimentalsys.FS) string { return openString(c, p, flag) })
		}
	}
	for _, p := range []string{"new", "d", "ln", "missing/x", "f/x", "dangling", "new/sub"} {
		add("mkdir "+p, func(c experimentalsys.FS) string { return fmt.Sprint(c.Mkdir(p, 0o755)) })
	}
	for _, p := range [][2]string{{"f", "f"}, {"missing", "x"}, {"f", "d"}, {"d", "f"}, {"d", "n"}, {"d", "e"},
		{"e", "e2"}, {"new", "new/inside"}, {"ln", "ln2"}, {"f", "sub/f2"}, {"sub/f2", "f"}, {"n/h", "f/x"}} {
		add("rename "+p[0]+" "+p[1], func(c experimentalsys.FS) string { return fmt.Sprint(c.Rename(p[0], p[1])) })
	}
	for _, p := range []string{"missing", "n", "f/x", "ln2", "dangling", "lnd"} {
		add("unlink "+p, func(c experimentalsys.FS) string { return fmt.Sprint(c.Unlink(p)) })
	}
	for _, p := range []string{"missing", "n", "n/h", "lnd", "new/sub", "new", "sub/../new"} {
		add("rmdir "+p, func(c experimentalsys.FS) string { return fmt.Sprint(c.Rmdir(p)) })
	}
	for _, p := range []string{"f", "missing", "sub/up", "n"} {
		add("utimens "+p, func(c experimentalsys.FS) string {
			e := c.Utimens(p, 1e9, 2e9)
			st, se := c.Stat(p)
			e2 := c.Utimens(p, experimentalsys.UTIME_OMIT, 3e9)
			st2, _ := c.Stat(p)
			return fmt.Sprint(e, se, st.Atim, st.Mtim, e2, st2.Atim, st2.Mtim, c.Utimens(p, experimentalsys.UTIME_OMIT, experimentalsys.UTIME_OMIT))
		})
		add("chmod "+p, func(c experimentalsys.FS) string {
			e := c.Chmod(p, 0o600)
			st, _ := c.Stat(p)
			return fmt.Sprint(e, st.Mode)
		})
	}
	return steps
}

func statString(st sys.Stat_t, errno experimentalsys.Errno) string {
	if errno != 0 {
		return errno.Error()
	}
	size := st.Size
	if st.Mode.IsDir() {
		size = 0 // a directory's size depends on what it held
	}
	return fmt.Sprintf("%v %d %d", st.Mode, size, st.Nlink)
}

// openString opens p and describes the file: its type, and what it holds
// or lists.
func openString(c experimentalsys.FS, p string, flag experimentalsys.Oflag) string {
	f, errno := c.OpenFile(p, flag, 0o644)
	if errno != 0 {
		return errno.Error()
	}
	defer f.Close()
	isDir, de := f.IsDir()
	st, se := f.Stat()
	s := fmt.Sprint(isDir, de, statString(st, se), f.IsAppend())
	if isDir {
		ds, e := f.Readdir(-1)
		var names []string
		for _, d := range ds {
			names = append(names, d.Name+fmt.Sprint(d.Type))
		}
		slices.Sort(names)
		return s + fmt.Sprint(names, e)
	}
	buf := make([]byte, 64)
	n, e := f.Read(buf)
	return s + fmt.Sprintf(" %q %v", buf[:n], e)
}

// fileScript runs a file's operations, from reads and writes to append
// mode, and then the same once it is closed.
func fileScript(c experimentalsys.FS) string {
	f, errno := c.OpenFile("d/g", experimentalsys.O_RDWR, 0)
	if errno != 0 {
		return errno.Error()
	}
	var out []string
	put := func(v ...any) { out = append(out, fmt.Sprint(v...)) }
	buf := make([]byte, 16)
	put(f.Write([]byte("XY")))
	put(f.Seek(0, 1))
	put(f.Seek(0, 0))
	n, e := f.Read(buf)
	put(string(buf[:n]), e)
	n, e = f.Pread(buf[:2], 1)
	put(string(buf[:n]), e)
	put(f.Pwrite([]byte("Z"), 5))
	put(f.Seek(-1, 9))
	put(f.Truncate(-1), f.Truncate(4))
	st, e := f.Stat()
	put(statString(st, e))
	put(f.Sync(), f.Datasync())
	put(f.Utimens(1e9, experimentalsys.UTIME_OMIT))
	st, _ = f.Stat()
	put(st.Atim)
	put(f.SetAppend(true), f.IsAppend())
	put(f.Write([]byte("A")))
	put(f.Pwrite([]byte("B"), 0))
	put(f.SetAppend(false), f.IsAppend())
	put(f.Pwrite([]byte("C"), 0))
	put(f.Write([]byte("D")))
	if pf, ok := f.(experimentalsys.PollableFile); ok {
		put(pf.IsNonblock(), pf.SetNonblock(true), pf.IsNonblock(), pf.SetNonblock(false))
	} else {
		put("not pollable")
	}
	n, e = f.Pread(buf, 0)
	put(string(buf[:n]), e)
	put(f.Readdir(1))
	put(f.Close(), f.Close())
	put(f.Read(buf))
	put(f.Write(buf))
	put(f.Stat())
	put(f.Truncate(1))
	return strings.Join(out, "; ")
}

// dirScript reads a directory in parts, rewinds it, and tries on it what
// only a file can do.
func dirScript(c experimentalsys.FS) string {
	f, errno := c.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if errno != 0 {
		return errno.Error()
	}
	var out []string
	put := func(v ...any) { out = append(out, fmt.Sprint(v...)) }
	for range 3 {
		ds, e := f.Readdir(1)
		put(len(ds), e)
	}
	put(f.Seek(0, 0))
	ds, e := f.Readdir(-1)
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
	}
	slices.Sort(names)
	put(names, e)
	buf := make([]byte, 4)
	put(f.Read(buf))
	put(f.Pread(buf, 0))
	put(f.Write(buf))
	put(f.Pwrite(buf, 0))
	put(f.Truncate(0))
	put(f.Sync(), f.Datasync())
	put(f.Utimens(1e9, 1e9))
	if pf, ok := f.(experimentalsys.PollableFile); ok {
		put(pf.SetNonblock(false))
	}
	put(f.Close())
	return strings.Join(out, "; ")
}
