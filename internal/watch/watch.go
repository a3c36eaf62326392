// Package watch tells when a tool directory's contents change, so that the
// server can reload it: a tool is updated by copying a file, with no
// restart.
package watch

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wasmcp/wasmcp/abi"
)

// DefaultQuiet is how long the directory must be still before a reload:
// long enough to coalesce the burst of events one copy or editor save
// makes, short enough that a change is served within a second.
const DefaultQuiet = 250 * time.Millisecond

// Relevant reports whether a change to the named file can change the tool
// set: modules and their sidecar manifests. Editors' swap, backup and
// temporary files are not.
func Relevant(name string) bool {
	base := filepath.Base(name)
	if strings.HasPrefix(base, ".") {
		return false
	}
	return strings.HasSuffix(base, ".wasm") || strings.HasSuffix(base, abi.SidecarSuffix)
}

// Dir calls reload once the directory has been quiet for the given time
// after a relevant change, until ctx ends. A reload never runs twice at
// once: changes during a reload start another after it.
//
// A half-written file is not a concern here: a reload that reads one finds
// a module that does not load, keeps serving the previous version, and
// the write's later events bring another reload.
func Dir(ctx context.Context, dir string, quiet time.Duration, log *slog.Logger, reload func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	go func() {
		defer w.Close()
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if Relevant(ev.Name) {
					log.Debug("tool directory changed", "file", ev.Name, "op", ev.Op.String())
					timer.Reset(quiet)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflowed event queue loses changes: reload to be sure.
				log.Warn("watching the tool directory", "error", err)
				timer.Reset(quiet)
			case <-timer.C:
				reload()
			}
		}
	}()
	return nil
}
