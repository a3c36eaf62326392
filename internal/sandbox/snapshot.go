package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// A snapshot is a reactor's state after its start-up: its linear memory
// and mutable globals, captured once from an instance that ran
// _initialize and wasmcp_init. Each call then gets a fresh instance
// whose memory and globals are the snapshot's (of the same compiled
// module on wazero, of the snapshot's image on wasmtime), and runs only
// wasmcp_run: the start-up's cost (a language runtime's,
// most of a call) is paid once per module, while nothing one call does
// reaches another. Tables need no capture: the reactor rewrite
// (wasmbin.ExportState) refuses snapshots to modules whose code could
// change them, so every instance's tables are the module's own.

// snapshot is one captured start-up.
type snapshot struct {
	// inUse is held for reading while an instance is made from the
	// snapshot, and for writing to close it.
	inUse sync.RWMutex
	// held counts the instances that still need the snapshot after
	// launch let go of inUse: wasmtime's, until instantiated. Each is
	// added while inUse is held, so none is once close holds it.
	held sync.WaitGroup
	// memory is the snapshot's linear memory, which wazero maps into each
	// instance; on wasmtime, image is instead a module of its own whose
	// every instance starts as the snapshot (snapshotImage).
	memory  *memImage
	image   program
	size    uint64   // bytes of linear memory
	globals []uint64 // the reactor's mutable globals, as reactor.globals lists them
	// release gives back what the snapshot took of the engine's
	// SnapshotMemory.
	release func()
}

// close frees what the snapshot holds.
func (s *snapshot) close() error {
	s.held.Wait()
	defer s.release()
	if s.image != nil {
		return s.image.close(context.Background())
	}
	return s.memory.close()
}

// keptPage is the granularity of what a snapshot keeps: its memory's
// pages that are not all zeroes, as the kernel holds them.
const keptPage = 4 << 10

// keepSnapshot takes n bytes of the engine's SnapshotMemory for a
// snapshot, or says why it cannot.
func (e *Engine) keepSnapshot(n int64) (release func(), err error) {
	if held := e.snapshotHeld.Add(n); held > e.snapshotMemory {
		e.snapshotHeld.Add(-n)
		return nil, fmt.Errorf("%w: its %s of memory would take the snapshots kept past their %s in all (--snapshot-memory), of which %s is held", ErrNoSnapshot, bytesText(uint64(n)), bytesText(uint64(e.snapshotMemory)), bytesText(uint64(held-n)))
	}
	return func() { e.snapshotHeld.Add(-n) }, nil
}

// ErrNoSnapshot means a module runs without a snapshot: it is not a
// reactor, or its code could change state a snapshot does not keep.
var ErrNoSnapshot = errors.New("the module cannot be snapshotted")

// SnapshotStats describe a snapshot made.
type SnapshotStats struct {
	Memory   uint64 // bytes of linear memory
	Globals  int
	Duration time.Duration
}

// Snapshot runs a reactor's start-up once, in an instance of its own with
// argv [stem], under lim, and keeps what it left: later runs without
// mounts start from it (see planFor). It replaces the snapshot the module
// had. A module that cannot be snapshotted gets an error wrapping
// ErrNoSnapshot and runs as before; a start-up that fails gets its
// Failure, which later runs then report without running the module: the
// start-up is the same every time.
//
// The start-up takes a compile slot, as s schedules it: it is work of the
// load, like a compilation, which a call's compilation or snapshot goes
// before. ctx bounds the wait for the slot; the start-up itself ends on
// lim, or when it gives its slot up (to start over later), s.Stop closes
// (ErrStopped) or the engine closes, which leave the snapshot the module
// had: none of these is a failed start-up.
func (c *Compiled) Snapshot(ctx context.Context, stem string, lim Limits, s Schedule) (SnapshotStats, error) {
	switch {
	case c.reactor == nil:
		return SnapshotStats{}, fmt.Errorf("%w: it is not a reactor", ErrNoSnapshot)
	case c.reactor.unsafe != "":
		return SnapshotStats{}, fmt.Errorf("%w: %s", ErrNoSnapshot, c.reactor.unsafe)
	case !c.p.snapshots():
		return SnapshotStats{}, fmt.Errorf("%w on this engine", ErrNoSnapshot)
	}
	var stats SnapshotStats
	err := c.engine.inTurn(ctx, c.engine.compiling, "snapshot", s, func(actx context.Context) error {
		var err error
		stats, err = c.snapshot(actx, stem, lim)
		return err
	})
	return stats, err
}

// snapshot is one attempt of Snapshot, in its slot, which ctx holds.
func (c *Compiled) snapshot(ctx context.Context, stem string, lim Limits) (SnapshotStats, error) {
	start := time.Now()
	var memory []byte
	var globals []uint64
	captured := false
	pl := plan{data: c.reactor.data, init: c.reactor.steps, globals: c.reactor.globals, capture: func(m []byte, g []uint64) {
		memory, globals, captured = m, g, true
	}}
	in, f := c.launch(Run{Args: []string{stem}, Limits: lim}, bytes.NewReader(nil), &pl)
	if f == nil {
		out := in.wait(ctx)
		if f = out.Failure; f != nil && len(out.Stderr) > 0 {
			// Every call will report this failure without running: the
			// start-up's last words go with it.
			f.Detail += "; its stderr ended: " + lastLine(out.Stderr, startupTail)
		}
	}
	if f == nil && !captured {
		f = &Failure{Kind: Internal, Detail: "the module's start-up could not be captured"}
	}
	if f == nil {
		// The meter kept the start-up within lim; the limit may since have
		// been lowered.
		if need := uint64(len(memory)) + c.reserve; need > uint64(lim.Memory) {
			f = &Failure{Kind: MemoryLimit, Detail: fmt.Sprintf("the tool's memory after its start-up is %s, over its %s limit: raise the limit or make the start-up smaller", bytesText(need), bytesText(uint64(lim.Memory)))}
		}
	}
	switch {
	case f != nil && ctx.Err() != nil:
		// Stopped, not failed: inTurn says why.
		return SnapshotStats{}, ctx.Err()
	case f != nil:
		c.setSnapshot(nil, f)
		return SnapshotStats{}, f
	}
	var kept int64
	for _, r := range wasmbin.NonZeroRuns(memory, keptPage) {
		kept += int64(r[1] - r[0])
	}
	release, err := c.engine.keepSnapshot(kept)
	if err != nil {
		// Calls run the whole start-up, as for a module that cannot be
		// snapshotted.
		c.setSnapshot(nil, nil)
		return SnapshotStats{}, err
	}
	s := &snapshot{size: uint64(len(memory)), globals: globals, release: release}
	if c.reactor.wasm != nil {
		s.image, err = c.snapshotImage(ctx, memory, globals)
	} else {
		s.memory, err = newMemImage(memory)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		release()
		return SnapshotStats{}, ctx.Err()
	case err != nil:
		release()
		c.setSnapshot(nil, nil)
		return SnapshotStats{}, fmt.Errorf("keeping the snapshot: %w", err)
	}
	c.setSnapshot(s, nil)
	return SnapshotStats{Memory: uint64(len(memory)), Globals: len(globals), Duration: time.Since(start)}, nil
}

// startupTail bounds how much of a failed start-up's stderr its Failure
// quotes: a runtime's last line (a Python exception, a JavaScript error)
// says why.
const startupTail = 512

// lastLine returns the last non-empty line of b, at most n bytes of its
// end, as valid UTF-8.
func lastLine(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
}

// snapshotImage compiles the snapshot's image: the reactor as rewritten,
// its data segments the captured memory and its mutable globals starting
// at the captured values (wasmbin.Image), so that each instance of it
// starts as the snapshot, and wasmtime maps its memory copy-on-write from
// the module's own data rather than having it copied in. It compiles in
// the snapshot's compile slot, which ctx holds, within the compile limits
// and in a worker, as the reactor did: the image is the server's own work
// on the operator's module, but it holds the module's code.
func (c *Compiled) snapshotImage(ctx context.Context, memory []byte, globals []uint64) (program, error) {
	wasm, err := wasmbin.Image(c.reactor.wasm, memory, c.reactor.globals, globals)
	if err != nil {
		return nil, fmt.Errorf("making its image: %w", err)
	}
	p, err := c.engine.compileIn(ctx, wasm)
	if err != nil {
		return nil, fmt.Errorf("compiling its image: %w", err)
	}
	return p, nil
}

// setSnapshot puts a snapshot (or the start-up's failure) in service and
// frees the one it replaces. Instances already made from that one keep
// their own mappings of its memory.
func (c *Compiled) setSnapshot(s *snapshot, f *Failure) {
	c.snapMu.Lock()
	old := c.snap
	c.snap, c.snapFailure = s, f
	c.snapMu.Unlock()
	if old != nil {
		go func() {
			old.inUse.Lock()
			_ = old.close()
		}()
	}
}

// Snapshotted reports whether runs of the module start from a snapshot.
func (c *Compiled) Snapshotted() bool {
	c.snapMu.RLock()
	defer c.snapMu.RUnlock()
	return c.snap != nil
}

// planFor is what an instance for r runs: _start for a command; for a
// reactor, its call from the snapshot when there is one and r has no
// mounts (a runtime lists the directories it has as it starts, so the
// start-up must see a call's), and otherwise the whole sequence. A plan
// from a snapshot holds it (inUse) until launch lets go.
func (c *Compiled) planFor(r Run) (plan, *Failure) {
	if c.reactor == nil {
		return plan{run: "_start", memory: c.data}, nil
	}
	whole := plan{data: c.reactor.data, init: c.reactor.steps, run: abi.ExportRun}
	if len(r.Mounts) > 0 {
		return whole, nil
	}
	c.snapMu.RLock()
	defer c.snapMu.RUnlock()
	switch {
	case c.snapFailure != nil:
		f := *c.snapFailure
		return plan{}, &f
	case c.snap == nil:
		return whole, nil
	}
	c.snap.inUse.RLock()
	return plan{from: c.snap, globals: c.reactor.globals, run: abi.ExportRun}, nil
}
