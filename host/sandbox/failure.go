package sandbox

// FailureKind names why a run did not succeed. The names are stable: they
// appear in logs and, later, in metrics labels.
type FailureKind string

// The failure kinds.
const (
	TimeLimit     FailureKind = "timeout"
	MemoryLimit   FailureKind = "memory"
	OutputLimit   FailureKind = "output"
	StackOverflow FailureKind = "stack_overflow"
	Trap          FailureKind = "trap"
	Exit          FailureKind = "exit"
	Cancelled     FailureKind = "cancelled"
	Internal      FailureKind = "internal"
)

// Failure says why a run failed, in words meant for the model that called
// the tool.
type Failure struct {
	Kind     FailureKind
	ExitCode uint32 // for Exit
	Detail   string
}

func (f *Failure) Error() string { return f.Detail }
