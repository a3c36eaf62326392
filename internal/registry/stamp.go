package registry

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// fileID is what stat says of a file that changes whenever its content
// does: where it is (device and inode), its type, its size, and its
// modification and change times. The change time is the one a user cannot
// set: writing a file, or copying one over it with its times kept (cp -p,
// rsync -t, tar), sets it to the file system's clock, whatever the size
// and the modification time then say.
type fileID struct {
	dev, ino     uint64
	mode         fs.FileMode
	size         int64
	mtime, ctime int64 // nanoseconds since 1970
}

// loadInputs are what loading a module depends on besides its files: the
// engine that checks it (and compiles it), and the ceilings its limits
// are clamped to. The policy is not one: it is applied to a tool when it
// runs, from the catalog that serves it.
type loadInputs struct {
	engine   *sandbox.Engine
	ceilings sandbox.Limits
}

func (o LoadOptions) inputs() loadInputs {
	return loadInputs{engine: o.Engine, ceilings: o.Ceilings}
}

// stamp is what stat said of a module's file and its sidecar before they
// were read, when, and with which inputs they were loaded: at a later
// reload, a load with the same inputs of files that stat the same would
// give the same result, if the stamp is settled, so the files need not be
// read again.
type stamp struct {
	wasm, sidecar fileID // sidecar is the zero fileID when there was none
	// wasmSig and sidecarSig are their signature files', the zero fileID
	// for one there was none of (or that could not be read): a
	// signature is part of what a load gave.
	wasmSig, sidecarSig fileID
	inputs              loadInputs
	at                  time.Time
	// ok: both files were read (or the sidecar was found to be absent),
	// and the platform gives every field of fileID. A load that failed
	// reading a file has no stamp that holds, so it is tried again.
	ok bool
}

// racyWindow is how long after its last change a file's stamp is not
// trusted. A file rewritten within one tick of the file system's clock of
// the stat keeps its times, and if also its size and inode, its stamp. So
// a stamp is settled only if both files last changed well before it was
// taken, by more than any tick (a jiffy on Linux, 2 s on FAT) and any skew
// between the server's clock and the file system's (NFS). A file that
// changed within the window is read again at the next reload, which takes
// a new stamp.
const racyWindow = 2 * time.Second

// settled reports whether files that stat the same as s are unchanged:
// any change since sets a change time after s.at less racyWindow, which
// neither file's had.
func (s stamp) settled() bool {
	limit := s.at.Add(-racyWindow).UnixNano()
	old := func(id fileID) bool { return id == fileID{} || id.ctime < limit }
	return s.ok && s.wasm.ctime < limit && old(s.sidecar) && old(s.wasmSig) && old(s.sidecarSig)
}

// holds reports whether loading the module at path with opts would give
// what the load stamped s gave, without reading it: s is settled, the
// inputs are the same, and stat finds the module, its sidecar and their
// signatures as s says they were. A sidecar's signature without the
// sidecar signs nothing, and is not looked at.
func (s stamp) holds(path string, opts LoadOptions) bool {
	sidecar := sidecarOf(path)
	return s.settled() && s.inputs == opts.inputs() && sameFile(path, s.wasm) && sameFile(sidecar, s.sidecar) &&
		sameFile(path+abi.SignatureSuffix, s.wasmSig) && (s.sidecar == fileID{} || sameFile(sidecar+abi.SignatureSuffix, s.sidecarSig))
}

// sameFile reports whether stat, which follows links, finds the file at
// path to be id, or finds none when id is the zero fileID.
func sameFile(path string, id fileID) bool {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return id == fileID{}
	}
	if err != nil {
		return false
	}
	now, ok := statID(fi)
	return ok && now == id
}
