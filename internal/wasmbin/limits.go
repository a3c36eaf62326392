package wasmbin

import "fmt"

// Limits bound what a module may declare, so that validating, compiling and
// instantiating it costs a bounded amount of time and memory whatever its
// author intended. A zero field bounds nothing.
type Limits struct {
	Types, Imports, Exports int
	Functions               int // defined
	Globals                 int // defined
	Tables, Memories        int // defined and imported
	DataSegments            int
	ElementSegments         int
	ElementEntries          uint64 // in all element segments together
	TableElements           uint64 // every table's minimum, summed
	Params, Results         int
	FunctionSize            int    // bytes of one body, locals included
	Locals                  uint64 // of one function, parameters included
	TotalLocals             uint64 // of every function together
	Nesting                 int    // block, loop and if, in one function
	BrTableTargets          int    // of one br_table
	BlockBranches           uint64 // branches to one block
	BranchCost              uint64 // of all functions together: see Shape.BranchCost
	NestingCost             uint64 // of all functions together: see Shape.NestingCost
	LocalsBranchCost        uint64 // of all functions together: see Shape.LocalsBranchCost
	NameLength              int
	MemoryPages             uint64 // a memory's minimum
}

// A LimitError says which limit a module passes.
type LimitError struct {
	// What is the limited quantity, in words ("locals in one function").
	What string
	// Has is what the module declares; Max is the limit.
	Has, Max uint64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the module declares %d %s; wasmcp allows at most %d", e.Has, e.What, e.Max)
}

// Check reports the first limit the module's shape passes, and refuses
// what wasmcp never runs: shared or 64-bit memories.
func (l Limits) Check(m *Module) error {
	s := &m.Shape
	for _, c := range []struct {
		what     string
		has, max uint64
	}{
		{"function types", uint64(s.Types), uint64(l.Types)},
		{"imports", uint64(s.Imports), uint64(l.Imports)},
		{"exports", uint64(s.Exports), uint64(l.Exports)},
		{"functions", uint64(s.Functions), uint64(l.Functions)},
		{"globals", uint64(s.Globals), uint64(l.Globals)},
		{"tables", uint64(s.Tables), uint64(l.Tables)},
		{"memories", uint64(s.Memories), uint64(l.Memories)},
		{"data segments", uint64(s.DataSegments), uint64(l.DataSegments)},
		{"element segments", uint64(s.ElementSegments), uint64(l.ElementSegments)},
		{"element segment entries", s.ElementEntries, l.ElementEntries},
		{"initial table elements (all tables together)", s.TableElements, l.TableElements},
		{"parameters in one function type", uint64(s.MaxParams), uint64(l.Params)},
		{"results in one function or block type", uint64(s.MaxResults), uint64(l.Results)},
		{"bytes in one function body", uint64(s.MaxFunctionSize), uint64(l.FunctionSize)},
		{"locals in one function (parameters included)", s.MaxLocals, l.Locals},
		{"locals in all functions together", s.TotalLocals, l.TotalLocals},
		{"levels of nested blocks in one function", uint64(s.MaxNesting), uint64(l.Nesting)},
		{"targets in one br_table", uint64(s.MaxBrTable), uint64(l.BrTableTargets)},
		{"branches to one block", s.MaxBlockBranches, l.BlockBranches},
		{"units of branch cost (over all blocks of all functions, the square of the branches to each block)", s.BranchCost, l.BranchCost},
		{"units of nesting cost (over all functions, the square of each one's nesting depth)", s.NestingCost, l.NestingCost},
		{"units of locals-and-branches cost (over all functions, each one's locals times its branch cost)", s.LocalsBranchCost, l.LocalsBranchCost},
		{"bytes in one name", uint64(s.MaxNameLength), uint64(l.NameLength)},
	} {
		if c.max > 0 && c.has > c.max {
			return &LimitError{What: c.what, Has: c.has, Max: c.max}
		}
	}
	for _, mem := range m.Memories {
		switch {
		case mem.Shared:
			return fmt.Errorf("the module declares a shared memory; wasmcp does not run threads")
		case mem.Is64:
			return fmt.Errorf("the module declares a 64-bit memory, which wasmcp does not support")
		case l.MemoryPages > 0 && mem.MinPages > l.MemoryPages:
			return &LimitError{What: "initial pages of memory", Has: mem.MinPages, Max: l.MemoryPages}
		}
	}
	return nil
}
