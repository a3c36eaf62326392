package registry

import (
	"io/fs"
	"syscall"
)

// statID reads a fileID out of what stat returned.
func statID(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: fi.Mode(), size: fi.Size(), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
