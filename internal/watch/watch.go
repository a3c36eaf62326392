// Package watch tells when what the server serves from has changed on disk,
// so that it can reload with no restart: the modules and manifests of the
// tool directory, and single files beside it such as the policy.
package watch

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wasmcp/wasmcp/abi"
)

// DefaultQuiet is how long the watched files must be still before a reload:
// long enough to coalesce the burst of events one copy or editor save
// makes, short enough that a change is served within a second.
const DefaultQuiet = 250 * time.Millisecond

// relevant reports whether a change to the named file in the tool directory
// can change the tool set: modules, their sidecar manifests, and the
// signatures of both (a policy may require them). Editors' swap, backup
// and temporary files are not.
func relevant(name string) bool {
	base := filepath.Base(name)
	if strings.HasPrefix(base, ".") {
		return false
	}
	base = strings.TrimSuffix(base, abi.SignatureSuffix)
	return strings.HasSuffix(base, ".wasm") || strings.HasSuffix(base, abi.SidecarSuffix)
}

// Dir calls reload once dir and files have been quiet for the given time
// after a change, until ctx ends; it returns once the watch is set up. In
// dir, a change is one to a module or a sidecar manifest: a file named
// *.wasm or *.manifest.json that is not hidden (subdirectories are not
// watched). Of files, a change is anything that happens to the path: the
// file is written, created, replaced by a rename (as editors and
// `wasmcp policy approve` save), removed or renamed away. A file need not
// exist; its directory must, and is watched in the file's stead, so that
// a replacement is seen. A symbolic link is followed by its own name only:
// a change to its target elsewhere is not seen.
//
// reload gets the paths that changed, made absolute and sorted, or nil if
// the watcher lost events and anything may have changed. A watched
// directory that is removed or renamed is named itself, and is not
// watched any more. reload runs on the watcher's goroutine: a reload never
// runs twice at once, and changes during one bring another after it.
//
// A half-written file is not a concern here: a reload that reads one finds
// a module that does not load, keeps serving the previous version, and
// the write's later events bring another reload.
func Dir(ctx context.Context, dir string, files []string, quiet time.Duration, log *slog.Logger, reload func(changed []string)) error {
	s, err := newScope(dir, files)
	if err != nil {
		return err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	for d := range s.dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return fmt.Errorf("watching %s: %w", d, err)
		}
	}
	go s.run(ctx, w, quiet, log, reload)
	return nil
}

// scope is what one watcher watches, by absolute path: fsnotify names each
// event by the directory it was added as, joined with the file's name.
type scope struct {
	dir   string
	files map[string]bool
	dirs  map[string]bool // dir and the directories of files
}

func newScope(dir string, files []string) (*scope, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", dir, err)
	}
	s := &scope{dir: abs, files: map[string]bool{}, dirs: map[string]bool{abs: true}}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", f, err)
		}
		s.files[abs] = true
		s.dirs[filepath.Dir(abs)] = true
	}
	return s, nil
}

// changed returns the watched path that ev changes, if any.
func (s *scope) changed(ev fsnotify.Event) (string, bool) {
	switch {
	case s.files[ev.Name]:
		return ev.Name, true
	case s.dirs[ev.Name]:
		// An event on a watched directory itself: only its end matters.
		return ev.Name, ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	case filepath.Dir(ev.Name) == s.dir && relevant(ev.Name):
		return ev.Name, true
	}
	return "", false
}

func (s *scope) run(ctx context.Context, w *fsnotify.Watcher, quiet time.Duration, log *slog.Logger, reload func([]string)) {
	defer w.Close()
	timer := time.NewTimer(quiet)
	timer.Stop()
	pending := map[string]bool{}
	lost := false
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			name, ok := s.changed(ev)
			if !ok {
				continue
			}
			if s.dirs[name] {
				log.Warn("a watched directory is gone: changes in it are no longer seen", "dir", name, "op", ev.Op.String())
			} else {
				log.Debug("watched file changed", "file", name, "op", ev.Op.String())
			}
			pending[name] = true
			timer.Reset(quiet)
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// An overflowed event queue loses changes: reload to be sure.
			log.Warn("watching for changes", "error", err)
			lost = true
			timer.Reset(quiet)
		case <-timer.C:
			var changed []string
			if !lost {
				changed = slices.Sorted(maps.Keys(pending))
			}
			clear(pending)
			lost = false
			reload(changed)
		}
	}
}
