// Package observe is how the host reports what it does to whoever watches
// it (metrics, tests) without depending on them.
package observe

import "time"

// Call outcomes, as Observer.CallFinished reports them. The sandbox's
// failure kinds (timeout, memory, output, stack_overflow, trap, exit,
// cancelled, internal) are outcomes too.
const (
	OK               = "ok"
	ToolError        = "tool_error" // the tool ran and returned isError itself
	InvalidArguments = "invalid_arguments"
	Busy             = "busy"
	CompileFailed    = "compile"
	BadOutput        = "bad_output"
)

// Call describes a finished call.
type Call struct {
	Tool    string
	Outcome string
	// Duration is the whole call, queueing included.
	Duration time.Duration
	// QueueWait is how long the call waited for a run slot.
	QueueWait time.Duration
	// PeakMemory is the largest linear memory of the run, in bytes; 0 when
	// no module ran.
	PeakMemory int64
}

// Observer is told about calls and loads. Its methods are called from many
// goroutines at once and must not block.
type Observer interface {
	// CallStarted is called when a call arrives, before it queues.
	CallStarted(tool string)
	// CallFinished is called once for every CallStarted.
	CallFinished(c Call)
	// Compiled is called after each module compilation, err nil if it
	// succeeded.
	Compiled(module string, d time.Duration, err error)
	// Loaded is called after the tool directory is (re)loaded, with the
	// number of modules serving and of files that failed to load.
	Loaded(modules, failed int)
	// Reloaded is called after each reload triggered by a change in the
	// tool directory, with the error that stopped it, if any.
	Reloaded(err error)
}

// Nop is an Observer that ignores everything.
type Nop struct{}

func (Nop) CallStarted(string)                    {}
func (Nop) CallFinished(Call)                     {}
func (Nop) Compiled(string, time.Duration, error) {}
func (Nop) Loaded(int, int)                       {}
func (Nop) Reloaded(error)                        {}

// Tee returns an Observer that tells each of obs, in order, leaving out
// the nil ones; Nop if none is left.
func Tee(obs ...Observer) Observer {
	var all tee
	for _, o := range obs {
		if o != nil {
			all = append(all, o)
		}
	}
	switch len(all) {
	case 0:
		return Nop{}
	case 1:
		return all[0]
	}
	return all
}

type tee []Observer

func (t tee) CallStarted(tool string) {
	for _, o := range t {
		o.CallStarted(tool)
	}
}

func (t tee) CallFinished(c Call) {
	for _, o := range t {
		o.CallFinished(c)
	}
}

func (t tee) Compiled(module string, d time.Duration, err error) {
	for _, o := range t {
		o.Compiled(module, d, err)
	}
}

func (t tee) Loaded(modules, failed int) {
	for _, o := range t {
		o.Loaded(modules, failed)
	}
}

func (t tee) Reloaded(err error) {
	for _, o := range t {
		o.Reloaded(err)
	}
}
