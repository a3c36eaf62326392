package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// A snapshot is a reactor's state after its start-up: its linear memory
// and mutable globals, captured once from an instance that ran
// _initialize and wasmcp_init. Each call then gets a fresh instance of
// the same compiled module whose memory and globals are the snapshot's,
// and runs only wasmcp_run: the start-up's cost (a language runtime's,
// most of a call) is paid once per module, while nothing one call does
// reaches another. Tables need no capture: the reactor rewrite
// (wasmbin.ExportState) refuses snapshots to modules whose code could
// change them, so every instance's tables are the module's own.

// snapshot is one captured start-up.
type snapshot struct {
	// inUse is held for reading while an instance is made from the
	// snapshot, and for writing to close it.
	inUse   sync.RWMutex
	memory  *memImage
	size    uint64     // bytes of linear memory
	runs    []memRange // where memory is not zero, for a backend that copies it
	globals []uint64   // the reactor's mutable globals, as reactor.globals lists them
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
func (c *Compiled) Snapshot(ctx context.Context, stem string, lim Limits) (SnapshotStats, error) {
	switch {
	case c.reactor == nil:
		return SnapshotStats{}, fmt.Errorf("%w: it is not a reactor", ErrNoSnapshot)
	case c.reactor.unsafe != "":
		return SnapshotStats{}, fmt.Errorf("%w: %s", ErrNoSnapshot, c.reactor.unsafe)
	case !c.p.snapshots():
		return SnapshotStats{}, fmt.Errorf("%w on this engine", ErrNoSnapshot)
	}
	start := time.Now()
	var memory []byte
	var globals []uint64
	captured := false
	pl := plan{data: c.reactor.data, init: c.reactor.steps, globals: c.reactor.globals, capture: func(m []byte, g []uint64) {
		memory, globals, captured = m, g, true
	}}
	in, f := c.launch(Run{Args: []string{stem}, Limits: lim}, bytes.NewReader(nil), &pl)
	if f == nil {
		f = in.wait(ctx).Failure
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
	if f != nil {
		c.setSnapshot(nil, f)
		return SnapshotStats{}, f
	}
	img, err := newMemImage(memory)
	if err != nil {
		return SnapshotStats{}, fmt.Errorf("keeping the snapshot: %w", err)
	}
	c.setSnapshot(&snapshot{memory: img, size: uint64(len(memory)), runs: nonZero(memory), globals: globals}, nil)
	return SnapshotStats{Memory: uint64(len(memory)), Globals: len(globals), Duration: time.Since(start)}, nil
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
			_ = old.memory.close()
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
		return plan{run: "_start"}, nil
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

// memRange is a range of memory: [start, end).
type memRange struct{ start, end uint32 }

// zeroGap is the shortest run of zeroes that nonZero leaves out: copying
// a page is cheaper than another range.
const zeroGap = 4096

// nonZero returns where memory is not zero, runs of zeroes shorter than
// zeroGap included: a fresh memory is zero, so only these need copying.
func nonZero(memory []byte) []memRange {
	var spans []memRange
	for i := 0; i < len(memory); {
		for i < len(memory) && memory[i] == 0 {
			i++
		}
		if i == len(memory) {
			break
		}
		start, zeros := i, 0
		for ; i < len(memory) && zeros < zeroGap; i++ {
			if memory[i] == 0 {
				zeros++
			} else {
				zeros = 0
			}
		}
		spans = append(spans, memRange{uint32(start), uint32(i - zeros)})
	}
	return spans
}
