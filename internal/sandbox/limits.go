package sandbox

import (
	"fmt"

	"github.com/wasmcp/wasmcp/internal/wasmbin"
)

// ModuleLimits bound what a module may declare. They are checked when a
// module loads, before anything compiles it, so that no module can make
// validating, compiling or instantiating it cost more than the figures in
// docs/design.md ("Resource promise").
//
// The ceiling is the WebAssembly JS API's implementation-defined limits,
// which every browser engine (and wasmtime's parser) enforces, so that no
// module a toolchain makes for the web is refused. Where the cost model of
// this server needs it, they are lower, each for the reason given; the
// largest guest measured (a Go program embedding a JavaScript engine,
// 19 MB) is far inside every one of them.
var ModuleLimits = wasmbin.Limits{
	// JS API: 1,000,000. wazero keeps about 400 bytes per type for the
	// module's life; toolchains emit a few dozen.
	Types:   10_000,
	Imports: 100_000, // JS API; each must be a WASI or wasmcp function anyway
	Exports: 100_000, // JS API
	// JS API: 1,000,000. wasmtime holds about 5 KiB while it compiles
	// even an empty function (100,000 took 531 MiB); the largest guest
	// measured has 12,407.
	Functions: 40_000,
	// JS API: 1,000,000. Every instance holds each, outside linear
	// memory; toolchains emit a few dozen.
	Globals:  10_000,
	Tables:   100, // wasmtime's parser: 100; toolchains emit one
	Memories: 1,   // multi-memory is not supported
	// JS API. Go guests emit exactly this many at most.
	DataSegments: 100_000,
	// JS API, which puts no bound on the entries. wazero keeps about 65
	// bytes per entry for the module's life, and every instance
	// evaluates each, active or passive (1,048,576 took 0.45 s and 60
	// MiB per instance). The largest guest measured has 16,503.
	ElementSegments: 100_000,
	ElementEntries:  1 << 16,
	// JS API: 10,000,000 per table. Tables are outside the memory limit
	// of the engines: their elements are counted against it here (see
	// Compiled.reserve), and CapTables bounds what they may grow to.
	TableElements: maxTableElements,
	Params:        1000, // JS API
	Results:       1000, // JS API
	// JS API: 7,654,321. Compiling a function holds about 60 times its
	// size at once (wazero); the largest measured is 58 KB.
	FunctionSize: 1 << 20,
	Locals:       50_000, // JS API
	// Not in the JS API: wazero keeps a byte per local for the module's
	// life and a few per local while it compiles, and a function declares
	// 2^32 of them in seven bytes. The largest guest measured has 57,576.
	TotalLocals: 1 << 20,
	// Not in the JS API: wazero's work on nested blocks grows with the
	// square of their depth (20,000 levels compile for over a second).
	// Go guests nest up to 1,308.
	Nesting:     8192,
	NestingCost: 1 << 27,
	// V8's limit on one br_table: 65,520.
	BrTableTargets: 65_520,
	// Not in the JS API: each branch to a block adds a predecessor, which
	// wazero adds after searching those already there (10,000 branches to
	// one block compile for a second). Go guests have up to 623.
	BlockBranches: 8192,
	BranchCost:    1 << 26,
	// Not in the JS API: a local read after a block reached by many
	// branches costs wazero work per predecessor, and more than linearly
	// in them (1,000 locals after 1,000 branches: 1.9 s). Go guests reach
	// 2^24 at most; 2^29 is about a second.
	LocalsBranchCost: 1 << 29,
	NameLength:       100_000, // JS API: the longest string
	MemoryPages:      65_536,  // JS API: 4 GiB
}

// maxTableElements bounds all of a module's tables together: their
// minima (ModuleLimits) and what they may grow to (wasmbin.CapTables).
// Toolchains emit one table of a few thousand functions (a Go guest's:
// about 6,300; the largest measured, 16,503).
const maxTableElements = 1 << 20

// Per-instance costs outside linear memory, in bytes, at most what either
// engine was measured to hold (bench/limits): a reference per table
// element, an element entry evaluated as the instance starts, a global.
const (
	referenceCost = 8
	entryCost     = 64
	globalCost    = 64
)

// reserve is what an instance of a module with this shape holds outside
// its linear memory at most, given what its tables may grow to. It is
// counted against the memory limit, so that --memory bounds the whole
// instance, whatever a module declares.
func reserve(s wasmbin.Shape, tableMax uint64) uint64 {
	return referenceCost*tableMax + entryCost*s.ElementEntries + globalCost*uint64(s.Globals)
}

// checkLimits applies ModuleLimits, with the sentence a tool author needs.
func checkLimits(m *wasmbin.Module) error {
	if err := ModuleLimits.Check(m); err != nil {
		return fmt.Errorf("over wasmcp's implementation limits: %w", err)
	}
	return nil
}
