package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/wasmcp/wasmcp/internal/atomicfile"
)

// The engine keeps two kinds of record in the compilation cache, each a
// file named by a SHA-256 of everything its verdict depends on, so that a
// new module, new limits or a new engine find none.
//
// A refusal says that a module's compilation passed the time or the
// memory limit, so that a restart refuses it at once instead of paying for
// it again. It holds only which limit was passed: the message is made
// from the limits, as it was the first time, so no file's content reaches
// a model. A refusal can only refuse a module, never let one run.
//
// A mark says that a module compiled, so its code is in the engine's
// cache: compiling it again is loading it, which takes a slot of its own
// (Engine.CompileWith). A mark is a hint and never trusted further: the
// module still compiles in a worker, within the limits, because the
// engine's files may have gone since (its own eviction, a cleaner of old
// files, a cache restored without them). A mark that lies costs one
// compilation in the loading slot, no more than its bounds.
//
// The cache is writable only by the server's user (checkCacheDir).

// The directories of the records in a compilation cache.
const (
	refusalsDir = "wasmcp-refused"
	marksDir    = "wasmcp-cached"
)

// What a record holds, for each limit.
const (
	refusedTime   = "time\n"
	refusedMemory = "memory\n"
)

// recordPath names the record in dir for wasm, by this build's engine
// and whatever else the verdict depends on (extra).
func (e *Engine) recordPath(dir, extra string, wasm []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", e.name, engineBuild, extra)
	h.Write(wasm)
	return filepath.Join(e.cacheDir, dir, hex.EncodeToString(h.Sum(nil)))
}

// refusalPath names the refusal for wasm under the engine's current
// limits.
func (e *Engine) refusalPath(wasm []byte) string {
	return e.recordPath(refusalsDir, fmt.Sprintf("%d %d", e.limits.Timeout, e.limits.memoryFor(len(wasm))), wasm)
}

// markPath names the mark for wasm, as CompileWith was given it: the
// engine's cache holds the same code whatever the limits.
func (e *Engine) markPath(wasm []byte) string { return e.recordPath(marksDir, "", wasm) }

// Cached reports whether wasm compiled before with this cache, so that
// compiling it again loads its code from the cache: CompileWith then
// neither waits for a compilation of another module nor keeps one
// waiting. It is a hint, which the compile limits still bound.
func (e *Engine) Cached(wasm []byte) bool {
	if e.cacheDir == "" {
		return false
	}
	fi, err := os.Lstat(e.markPath(wasm))
	return err == nil && fi.Mode().IsRegular()
}

// mark records that wasm compiled. A mark that cannot be written costs
// only the next compilation of wasm a place in the queue of compilations.
func (e *Engine) mark(wasm []byte) {
	if e.cacheDir == "" {
		return
	}
	path := e.markPath(wasm)
	if err := writeRecord(filepath.Dir(path), path, ""); err != nil {
		e.log.Warn("cannot mark a module compiled; it will wait for other compilations the next time it loads", "error", err)
	}
}

// recall returns the error of an earlier compilation of wasm that passed a
// limit, and the record's path, or nil if there is none.
func (e *Engine) recall(wasm []byte) (*compileError, string) {
	if e.cacheDir == "" {
		return nil, ""
	}
	path := e.refusalPath(wasm)
	// Lstat, not Stat: a record is a regular file the server wrote,
	// never a link, and never large.
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 16 {
		return nil, ""
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 16))
	switch string(b) {
	case refusedTime:
		return e.limitError(ErrCompileTime, len(wasm)), path
	case refusedMemory:
		return e.limitError(ErrCompileMemory, len(wasm)), path
	}
	return nil, ""
}

// remember records that compiling wasm passed the limit err names. A
// record that cannot be written is logged: the module is then compiled
// again at the next start, as before.
func (e *Engine) remember(wasm []byte, err *compileError) {
	if e.cacheDir == "" {
		return
	}
	what := refusedMemory
	if errors.Is(err, ErrCompileTime) {
		what = refusedTime
	}
	path := e.refusalPath(wasm)
	if werr := writeRecord(filepath.Dir(path), path, what); werr != nil {
		e.log.Warn("cannot record a module's compile refusal; it will be compiled again at the next start", "error", werr)
	}
}

// writeRecord writes a record whole or not at all: into a file of its
// own, renamed into place.
func writeRecord(dir, path, content string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(content), 0o600)
}

// engineBuild identifies the engines this binary was built with: a new
// version of either may compile a module faster, or in less memory, so
// what an older one refused is tried again.
var engineBuild = func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	var b strings.Builder
	for _, d := range info.Deps {
		if strings.Contains(d.Path, "wazero") || strings.Contains(d.Path, "wasmtime") {
			fmt.Fprintf(&b, "%s@%s %s;", d.Path, d.Version, d.Sum)
		}
	}
	return b.String()
}()
