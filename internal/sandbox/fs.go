package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// Mount is a host directory a run sees at a guest path.
type Mount struct {
	Host, Guest string
	Write       bool
}

// confinedFS serves one mounted directory and keeps every path inside it.
// wazero's directory file system follows symbolic links wherever they
// point, so each path is first resolved through an os.Root, which refuses
// any that leaves the directory, by "..", by a symbolic link, or both.
// A guest may not make links, so links are the operator's and fixed; the
// check before each operation is then enough.
type confinedFS struct {
	experimentalsys.FS
	root *os.Root
}

func newConfinedFS(m Mount) (*confinedFS, error) {
	root, err := os.OpenRoot(m.Host)
	if err != nil {
		return nil, err
	}
	var inner experimentalsys.FS = sysfs.DirFS(m.Host)
	if !m.Write {
		inner = &sysfs.ReadFS{FS: inner}
	}
	return &confinedFS{FS: inner, root: root}, nil
}

// resolve cleans p as the mount's root sees it ("../x" at the top is "x",
// as in a chroot) and checks that it, or if it does not exist yet its
// parent, resolves within the mount. Every operation uses the cleaned
// path, so what was checked is what is used.
func (c *confinedFS) resolve(p string) (string, experimentalsys.Errno) {
	p = path.Clean("/" + p)[1:]
	if p == "" {
		p = "."
	}
	_, err := c.root.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		_, err = c.root.Stat(path.Dir(p))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", experimentalsys.EPERM
	}
	return p, 0
}

func (c *confinedFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	p, e := c.resolve(p)
	if e != 0 {
		return nil, e
	}
	return c.FS.OpenFile(p, flag, perm)
}

func (c *confinedFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	p, e := c.resolve(p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	return c.FS.Lstat(p)
}

func (c *confinedFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	p, e := c.resolve(p)
	if e != 0 {
		return sys.Stat_t{}, e
	}
	return c.FS.Stat(p)
}

func (c *confinedFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	p, e := c.resolve(p)
	if e != 0 {
		return e
	}
	return c.FS.Mkdir(p, perm)
}

func (c *confinedFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	p, e := c.resolve(p)
	if e != 0 {
		return e
	}
	return c.FS.Chmod(p, perm)
}

func (c *confinedFS) Rename(from, to string) experimentalsys.Errno {
	from, e := c.resolve(from)
	if e != 0 {
		return e
	}
	if to, e = c.resolve(to); e != 0 {
		return e
	}
	return c.FS.Rename(from, to)
}

func (c *confinedFS) Rmdir(p string) experimentalsys.Errno {
	p, e := c.resolve(p)
	if e != 0 {
		return e
	}
	return c.FS.Rmdir(p)
}

func (c *confinedFS) Unlink(p string) experimentalsys.Errno {
	p, e := c.resolve(p)
	if e != 0 {
		return e
	}
	return c.FS.Unlink(p)
}

// Link and Symlink are refused: a guest that could make links could point
// one outside its mount.
func (c *confinedFS) Link(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

func (c *confinedFS) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

func (c *confinedFS) Readlink(p string) (string, experimentalsys.Errno) {
	p, e := c.resolve(p)
	if e != 0 {
		return "", e
	}
	return c.FS.Readlink(p)
}

func (c *confinedFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	p, e := c.resolve(p)
	if e != 0 {
		return e
	}
	return c.FS.Utimens(p, atim, mtim)
}
