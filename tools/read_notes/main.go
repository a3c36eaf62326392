// Command read_notes is a wasmcp tool that reads text files from a
// directory the operator mounts at /notes, and nothing else.
package main

import (
	"errors"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// root is where the policy mounts the notes directory.
const root = "/notes"

type args struct {
	Path string `json:"path"`
}

// read lists the notes directory when path is empty, or returns a note.
// The host keeps every path inside the mount; cleaning here only makes
// errors read better.
func read(in args) (string, error) {
	if err := mounted(root); err != nil {
		return "", err
	}
	rel := path.Clean("/" + in.Path)
	full := path.Join(root, rel)
	info, err := os.Stat(full)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no note %q", in.Path)
		}
		return "", fmt.Errorf("cannot read %q: %v", in.Path, err)
	}
	if info.IsDir() {
		entries, err := os.ReadDir(full)
		if err != nil {
			return "", fmt.Errorf("cannot list %q: %v", in.Path, err)
		}
		var names []string
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			names = append(names, name)
		}
		sort.Strings(names)
		return strings.Join(names, "\n"), nil
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return "", fmt.Errorf("cannot read %q: %v", in.Path, err)
	}
	return string(b), nil
}

// mounted checks that dir, the mount the tool asks for, exists. Without a
// grant the sandbox has no directory there, and WASI answers a path under
// no mount with EBADF ("Bad file number"), which says nothing of the cause.
func mounted(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("no notes directory is mounted at %s: the server's operator has not granted one; "+
			"they grant it in the server's policy file, under modules: read_notes: dirs: %s: {host: DIRECTORY}", dir, dir)
	}
	return nil
}

func main() {
	guest.Main(guest.Text("read_notes", read))
}
