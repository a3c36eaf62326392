package sandbox

import (
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// Mount is a host directory a run sees at a guest path.
type Mount struct {
	Host, Guest string
	Write       bool
}

// confinedFS is a mount as wazero serves it. Every operation resolves its
// path through an os.Root (rootFS): each step is an openat on the
// directory the previous step opened, so neither "..", nor a link, nor a
// directory renamed in the middle of a lookup can lead out. A check of the
// name followed by a second lookup of the same name would not hold: between
// the two, another call could move a directory holding the operator's link
// out into place. Read-only, the default, is wazero's ReadFS, and no guest
// may make links.
type confinedFS struct {
	experimentalsys.FS
	root  *os.Root
	write bool
}

func newConfinedFS(m Mount) (*confinedFS, error) {
	root, err := os.OpenRoot(m.Host)
	if err != nil {
		return nil, err
	}
	fsys, err := newRootFS(root)
	if err != nil {
		root.Close()
		return nil, err
	}
	if !m.Write {
		fsys = &sysfs.ReadFS{FS: fsys}
	}
	return &confinedFS{FS: fsys, root: root, write: m.Write}, nil
}

// OpenFile refuses, in a read-only mount, what ReadFS lets through: a file
// created or truncated by an open for reading (WASI lets a guest ask for
// O_CREAT or O_TRUNC with only the right to read).
func (c *confinedFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if !c.write && flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) != 0 {
		return nil, experimentalsys.EROFS
	}
	return c.FS.OpenFile(p, flag, perm)
}

// Link and Symlink are refused: a guest that could make links could point
// one outside its mount, for the host and for the other engine to follow.
func (c *confinedFS) Link(string, string) experimentalsys.Errno { return experimentalsys.EPERM }

func (c *confinedFS) Symlink(string, string) experimentalsys.Errno { return experimentalsys.EPERM }
