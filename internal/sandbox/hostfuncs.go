package sandbox

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/abi"
)

// Reporter receives what a guest reports through the wasmcp host module
// during one run. Its methods are called on the guest's goroutine, one at a
// time, so they block the guest while they work.
type Reporter interface {
	// Log is called with a level from abi.LevelDebug to abi.LevelEmergency
	// and a valid UTF-8 message.
	Log(level int32, msg string)
	// Progress is called with strictly increasing values. total is NaN when
	// the guest does not know it.
	Progress(progress, total float64, msg string)
}

// runState is one run's view of the host functions: its reporter and how
// much of its allowance it has used. A guest is single-threaded, so it
// needs no lock.
type runState struct {
	// io is what the guest's WASI calls see of the run (guestIO).
	io guestIO

	reporter     Reporter
	logs         int
	logBytes     int
	progress     int
	lastProgress float64

	http HTTPDoer
	// pending is the last http_request's answer, until http_response
	// takes it; a body that would make it longer than maxAnswer (the
	// run's memory limit, which no larger answer could fit in) is
	// refused.
	pending   []byte
	maxAnswer int64
	denials   Denials // permissions the guest lacked, for the call's error text

	// ask sends the guest's asks of the client; nil until the call
	// begins, and for a run no client waits for.
	ask Asker
	// asks counts the asks made, askIDs names them; asked is the last
	// one's answer, until ask_response takes it.
	asks   int
	askIDs []string
	asked  []byte
	// cancel ends the run with a cause; halt is the cause of a host
	// function that stopped the run, which the engine then ends at once.
	cancel context.CancelCauseFunc
	halt   error
}

// defineHost defines each function of abi.HostFunctions, with its type
// from the table, through define with the engine's implementation of it
// from impls. An engine lacking one, or implementing one the table does
// not name, does not start.
func defineHost[F any](impls map[string]F, define func(f abi.HostFunction, impl F) error) error {
	if len(impls) != len(abi.HostFunctions) {
		return fmt.Errorf("the engine implements %d %s functions; abi.HostFunctions names %d", len(impls), abi.HostModule, len(abi.HostFunctions))
	}
	for _, f := range abi.HostFunctions {
		impl, ok := impls[f.Name]
		if !ok {
			return fmt.Errorf("the engine does not implement %s.%s", abi.HostModule, f.Name)
		}
		if err := define(f, impl); err != nil {
			return fmt.Errorf("defining %s.%s: %w", abi.HostModule, f.Name, err)
		}
	}
	return nil
}

// hostParams are a host function's parameter types, by their binary
// encoding, as both abi and wazero give them.
func hostParams(f abi.HostFunction) []byte {
	types := make([]byte, len(f.Params))
	for i, p := range f.Params {
		types[i] = byte(p.Type)
	}
	return types
}

// guestMemory is a guest's linear memory as the host functions use it;
// wazero's api.Memory is one. Every method checks its bounds.
type guestMemory interface {
	Read(offset, n uint32) ([]byte, bool)
	Write(offset uint32, b []byte) bool
	WriteUint32Le(offset, v uint32) bool
}

// The host functions' rules, shared by the engines. A nil state is a
// guest run outside the sandbox's own runs (fuzzing), which is refused
// nothing but reported nowhere.

// log is wasmcp.log, after readMessage has checked its message.
func (st *runState) log(level int32, msg string, code int32) int32 {
	switch {
	case code != abi.Ok:
		return code
	case level < abi.LevelDebug || level > abi.LevelEmergency:
		return abi.ErrInvalid
	case st == nil:
		return abi.Ok
	case st.logs >= abi.MaxLogMessages || st.logBytes+len(msg) > abi.MaxLogBytes:
		return abi.ErrLimit
	}
	st.logs++
	st.logBytes += len(msg)
	if st.reporter != nil {
		st.reporter.Log(level, msg)
	}
	return abi.Ok
}

// reportProgress is wasmcp.progress, after readMessage has checked its
// message.
func (st *runState) reportProgress(progress, total float64, msg string, code int32) int32 {
	if total < 0 {
		total = math.NaN() // the documented way to say "unknown"
	}
	switch {
	case code != abi.Ok:
		return code
	case math.IsNaN(progress) || math.IsInf(progress, 0) || math.IsInf(total, 0):
		return abi.ErrInvalid
	case st == nil:
		return abi.Ok
	case progress <= st.lastProgress:
		return abi.ErrOrder
	case st.progress >= abi.MaxProgress:
		return abi.ErrLimit
	}
	st.progress++
	st.lastProgress = progress
	if st.reporter != nil {
		st.reporter.Progress(progress, total, msg)
	}
	return abi.Ok
}

// readMessage copies a guest string out of its memory, checking every
// assumption a hostile guest could break. The copy matters: the view an
// engine returns aliases guest memory, which the guest may change or grow.
func readMessage(mem guestMemory, p, n uint32) (string, int32) {
	if n > abi.MaxMessageLen {
		return "", abi.ErrTooLong
	}
	if mem == nil {
		return "", abi.ErrFault
	}
	view, ok := mem.Read(p, n)
	if !ok {
		return "", abi.ErrFault
	}
	if !utf8.Valid(view) {
		return "", abi.ErrEncoding
	}
	return string(view), abi.Ok
}
