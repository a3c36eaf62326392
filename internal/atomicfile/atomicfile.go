// Package atomicfile writes files whole or not at all, so that a reader
// (a server reloading its tool directory, a client reading its config)
// never sees one half-written, and a write that fails leaves what was
// there.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write writes data to a new file beside path, with perm, and renames it
// to path.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
