package sandbox

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"
	"unsafe"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
	"golang.org/x/sys/unix"
)

// rootFS is a sys.FS whose every operation goes through an os.Root, or,
// where os.Root's own semantics differ from the POSIX call wazero made
// before (unlink versus rmdir, rename onto a directory, an open that must
// not follow a link in its last element), through the *at system call on
// a parent directory that the os.Root opened. Either way no step of a
// lookup leaves the mount, whatever is renamed meanwhile. The errnos are
// those of sysfs.DirFS, which this replaces, but for what would lead out:
// a path through a link out of the mount, or the absolute target of a
// link, is EPERM.
type rootFS struct {
	// UnimplementedFS answers Link and Symlink, which confinedFS refuses
	// before they get here.
	experimentalsys.UnimplementedFS
	root *os.Root
}

func newRootFS(root *os.Root) (experimentalsys.FS, error) {
	return &rootFS{root: root}, nil
}

// clean makes p relative to the mount's root, with ".." at the top meaning
// the top, as in a chroot (wazero refuses such paths before they get here).
func clean(p string) string {
	if p = path.Clean("/" + p)[1:]; p == "" {
		return "."
	}
	return p
}

// errnoOf turns an error into wazero's errno. An os.Root error that is no
// system call's is its refusal of a path that leaves the root.
func errnoOf(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if !errors.As(err, new(syscall.Errno)) {
		return experimentalsys.EPERM
	}
	return experimentalsys.UnwrapOSError(err)
}

// inParent calls f with a descriptor of name's parent directory, opened
// through the root, and name's last element.
func (r *rootFS) inParent(name string, f func(dir int, base string) error) error {
	dir, base := path.Split(name)
	if dir == "" {
		dir = "."
	}
	d, err := r.root.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return f(int(d.Fd()), base)
}

// open opens name through the root. os.Root follows a link in the last
// element even when asked not to, so an open with O_NOFOLLOW is an openat
// in the parent.
func (r *rootFS) open(name string, flag experimentalsys.Oflag, perm fs.FileMode) (*os.File, experimentalsys.Errno) {
	oflag := osOpenFlag(flag)
	var f *os.File
	var err error
	if flag&experimentalsys.O_NOFOLLOW == 0 {
		f, err = r.root.OpenFile(name, oflag, perm)
	} else {
		err = r.inParent(name, func(dir int, base string) error {
			fd, err := unix.Openat(dir, base, oflag|unix.O_CLOEXEC, uint32(perm))
			if err == nil {
				f = os.NewFile(uintptr(fd), base)
			}
			return err
		})
	}
	return f, errnoOf(err)
}

func (r *rootFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	name := clean(p)
	// O_APPEND is set afterwards, so that SetAppend can clear it: os.File
	// fixes its own append mode when it opens.
	f, errno := r.open(name, flag&^experimentalsys.O_APPEND, perm)
	if errno != 0 {
		return nil, errno
	}
	h := &handle{File: f, nonblock: flag&experimentalsys.O_NONBLOCK != 0}
	if flag&experimentalsys.O_APPEND != 0 {
		if errno = h.setAppend(true); errno != 0 {
			f.Close()
			return nil, errno
		}
	}
	o := &openedFS{h: h}
	file, errno := (&sysfs.AdaptFS{FS: o}).OpenFile(name, flag, perm)
	if errno != 0 {
		f.Close()
		return nil, errno
	}
	return &rootFile{PollableFile: file.(experimentalsys.PollableFile), open: o}, 0
}

func (r *rootFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Lstat(clean(p))
	if err != nil {
		return sys.Stat_t{}, errnoOf(err)
	}
	return sys.NewStat_t(fi), 0
}

func (r *rootFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Stat(clean(p))
	if err != nil {
		return sys.Stat_t{}, errnoOf(err)
	}
	return sys.NewStat_t(fi), 0
}

// Readlink refuses an absolute target, as wasmtime's cap-std does: it is a
// host path, which the guest could not follow and should not see.
func (r *rootFS) Readlink(p string) (string, experimentalsys.Errno) {
	target, err := r.root.Readlink(clean(p))
	if err != nil {
		return "", errnoOf(err)
	}
	if path.IsAbs(target) {
		return "", experimentalsys.EPERM
	}
	return target, 0
}

func (r *rootFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	errno := errnoOf(r.root.Mkdir(clean(p), perm))
	if errno == experimentalsys.ENOTDIR {
		errno = experimentalsys.ENOENT // as sysfs.DirFS answers
	}
	return errno
}

func (r *rootFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return errnoOf(r.root.Chmod(clean(p), perm))
}

// Rename is renameat(2) rather than os.Root.Rename, which refuses to
// replace a directory where POSIX, and wazero before, replace an empty one.
func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	from, to = clean(from), clean(to)
	if from == to {
		return 0
	}
	return errnoOf(r.inParent(from, func(fromDir int, fromBase string) error {
		return r.inParent(to, func(toDir int, toBase string) error {
			return unix.Renameat(fromDir, fromBase, toDir, toBase)
		})
	}))
}

// Rmdir and Unlink are unlinkat(2) rather than os.Root.Remove, which
// removes a file or a directory, whichever is there.
func (r *rootFS) Rmdir(p string) experimentalsys.Errno {
	return errnoOf(r.inParent(clean(p), func(dir int, base string) error {
		return unix.Unlinkat(dir, base, unix.AT_REMOVEDIR)
	}))
}

func (r *rootFS) Unlink(p string) experimentalsys.Errno {
	return errnoOf(r.inParent(clean(p), func(dir int, base string) error {
		if err := unix.Unlinkat(dir, base, 0); err != unix.EPERM {
			return err
		}
		return unix.EISDIR // as sysfs.DirFS answers
	}))
}

func (r *rootFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	return errnoOf(r.root.Chtimes(clean(p), omitTime(atim), omitTime(mtim)))
}

// omitTime is t as os.Chtimes takes it: the zero time leaves it unchanged.
func omitTime(t int64) time.Time {
	if t == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, t)
}

// osOpenFlag is flag as open(2) takes it.
func osOpenFlag(flag experimentalsys.Oflag) int {
	var o int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR) {
	case experimentalsys.O_WRONLY:
		o = os.O_WRONLY
	case experimentalsys.O_RDWR:
		o = os.O_RDWR
	}
	for _, f := range [...]struct {
		sys experimentalsys.Oflag
		os  int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND},
		{experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL},
		{experimentalsys.O_SYNC, os.O_SYNC},
		{experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_DIRECTORY, unix.O_DIRECTORY},
		{experimentalsys.O_DSYNC, unix.O_DSYNC},
		{experimentalsys.O_NOFOLLOW, unix.O_NOFOLLOW},
		{experimentalsys.O_NONBLOCK, unix.O_NONBLOCK},
		{experimentalsys.O_RSYNC, unix.O_RSYNC},
	} {
		if flag&f.sys != 0 {
			o |= f.os
		}
	}
	return o
}

// rootFile is what rootFS opens: wazero's own adapter of an fs.File
// (sysfs.AdaptFS's), over the *os.File the root opened, and what that
// adapter leaves unimplemented. wazero's adapter of an *os.File (sysfs's
// osFile) cannot be had outside wazero: it comes only from DirFS, which
// looks paths up itself, and from NewStdioFile, whose Stat is fixed and
// whose Close does nothing.
type rootFile struct {
	// AdaptFS's files forward IsNonblock, SetNonblock and Poll to their
	// fs.File, so they are PollableFiles.
	experimentalsys.PollableFile
	open *openedFS
}

func (f *rootFile) IsAppend() bool { return f.open.h.append }

// SetAppend sets the descriptor's O_APPEND, where wazero's osFile opens its
// path again. (wazero asks it only of regular files.)
func (f *rootFile) SetAppend(enable bool) experimentalsys.Errno {
	return f.open.h.setAppend(enable)
}

// fail is errno as wazero's files report a failure of what only a file,
// not a directory, can do.
func (f *rootFile) fail(errno experimentalsys.Errno) experimentalsys.Errno {
	if isDir, e := f.IsDir(); e == 0 && isDir {
		return experimentalsys.EISDIR
	}
	return errno
}

func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if size < 0 {
		return experimentalsys.EINVAL
	}
	if errno := experimentalsys.UnwrapOSError(f.open.h.Truncate(size)); errno != 0 {
		return f.fail(errno)
	}
	return 0
}

func (f *rootFile) Sync() experimentalsys.Errno {
	return experimentalsys.UnwrapOSError(f.open.h.Sync())
}

func (f *rootFile) Datasync() experimentalsys.Errno {
	return experimentalsys.UnwrapOSError(unix.Fdatasync(int(f.open.h.Fd())))
}

// Utimens is utimensat(2) on the descriptor itself (a NULL path), as
// wazero's osFile does; x/sys/unix's UtimesNanoAt always passes a path.
func (f *rootFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	ts := [2]unix.Timespec{timespec(atim), timespec(mtim)}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, f.open.h.Fd(), 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if e != 0 {
		return experimentalsys.UnwrapOSError(e)
	}
	return 0
}

func timespec(t int64) unix.Timespec {
	if t == experimentalsys.UTIME_OMIT {
		return unix.Timespec{Nsec: unix.UTIME_OMIT}
	}
	return unix.NsecToTimespec(t)
}

// openedFS is a file system of one file, already open, for AdaptFS to
// adapt. AdaptFS opens a directory again to rewind it: it then gets a
// duplicate of the descriptor, at the start, so that no name is looked up
// again, and the directory read is the one the guest opened, wherever it
// has been moved since.
type openedFS struct {
	h      *handle
	handed bool
}

func (o *openedFS) Open(string) (fs.File, error) {
	if !o.handed {
		o.handed = true
		return o.h, nil
	}
	fd, err := unix.FcntlInt(o.h.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		unix.Close(fd)
		return nil, err
	}
	h := *o.h
	h.File = os.NewFile(uintptr(fd), o.h.Name())
	o.h = &h
	return o.h, nil
}

// handle is the fs.File that AdaptFS adapts: the *os.File, its
// O_NONBLOCK, which AdaptFS leaves to the fs.File, and its O_APPEND.
type handle struct {
	*os.File
	nonblock, append bool
}

// errWriteAtInAppendMode is os.File's refusal (EIO to the guest), kept as
// wazero's files had it.
var errWriteAtInAppendMode = errors.New("pwrite on a file in append mode")

// WriteAt refuses in append mode, where the kernel would append instead,
// as os.File refuses for a file it opened with O_APPEND.
func (h *handle) WriteAt(b []byte, off int64) (int, error) {
	if h.append {
		return 0, errWriteAtInAppendMode
	}
	return h.File.WriteAt(b, off)
}

// setAppend sets or clears O_APPEND, which Linux's fcntl can change.
func (h *handle) setAppend(enable bool) experimentalsys.Errno {
	fl, err := unix.FcntlInt(h.Fd(), unix.F_GETFL, 0)
	if err == nil {
		if enable {
			fl |= unix.O_APPEND
		} else {
			fl &^= unix.O_APPEND
		}
		_, err = unix.FcntlInt(h.Fd(), unix.F_SETFL, fl)
	}
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	h.append = enable
	return 0
}

func (h *handle) IsNonblock() bool { return h.nonblock }

func (h *handle) SetNonblock(enable bool) experimentalsys.Errno {
	errno := experimentalsys.UnwrapOSError(unix.SetNonblock(int(h.Fd()), enable))
	if errno == 0 {
		h.nonblock = enable
	}
	return errno
}
