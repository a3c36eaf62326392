package sandbox

import "fmt"

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
	// InputRequired: the run's Asker ended it (ErrInputRequired).
	InputRequired FailureKind = "input_required"
	// AskLimit: the guest asked the client more than abi.MaxAsks times.
	AskLimit FailureKind = "ask_limit"
)

// Failure says why a run failed, in words meant for the model that called
// the tool.
type Failure struct {
	Kind     FailureKind
	ExitCode uint32 // for Exit
	Detail   string // a short sentence, the same on every engine
	// Cause is what the engine said, when Detail does not repeat it: for
	// the server's log, never for a model, since it can hold backtraces,
	// the engine's source paths and the host's.
	Cause error
}

func (f *Failure) Error() string { return f.Detail }

// mountFailure says that a granted directory cannot be opened. The
// reason, which names the directory on the host, goes to the log.
func mountFailure(guest string, err error) *Failure {
	return &Failure{Kind: Internal, Detail: fmt.Sprintf("the directory granted at %s cannot be opened (why is for the server's operator)", guest), Cause: err}
}
