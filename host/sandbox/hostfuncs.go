package sandbox

import (
	"context"
	"math"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

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
	reporter     Reporter
	logs         int
	logBytes     int
	progress     int
	lastProgress float64

	http    HTTPDoer
	pending []byte   // the last http_request's answer, until http_response takes it
	denials []string // permissions the guest lacked, for the call's error text
}

type runStateKey struct{}

func hostFunctionNames() map[string]bool {
	return map[string]bool{"log": true, "progress": true, "http_request": true, "http_response": true}
}

// instantiateHostModule defines the wasmcp host module in the runtime.
func instantiateHostModule(ctx context.Context, rt wazero.Runtime) error {
	i32, f64 := api.ValueTypeI32, api.ValueTypeF64
	_, err := rt.NewHostModuleBuilder(abi.HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("level", "msg_ptr", "msg_len").
		Export("log").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostProgress), []api.ValueType{f64, f64, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("progress", "total", "msg_ptr", "msg_len").
		Export("progress").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostHTTPRequest), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len", "resp_len_ptr").
		Export("http_request").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostHTTPResponse), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf_ptr", "buf_len").
		Export("http_response").
		Instantiate(ctx)
	return err
}

func hostLog(ctx context.Context, m api.Module, stack []uint64) {
	level := api.DecodeI32(stack[0])
	msg, code := readMessage(m, stack[1], stack[2])
	stack[0] = api.EncodeI32(logMessage(ctx, level, msg, code))
}

func logMessage(ctx context.Context, level int32, msg string, code int32) int32 {
	st, _ := ctx.Value(runStateKey{}).(*runState)
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

func hostProgress(ctx context.Context, m api.Module, stack []uint64) {
	progress, total := api.DecodeF64(stack[0]), api.DecodeF64(stack[1])
	msg, code := readMessage(m, stack[2], stack[3])
	stack[0] = api.EncodeI32(reportProgress(ctx, progress, total, msg, code))
}

func reportProgress(ctx context.Context, progress, total float64, msg string, code int32) int32 {
	st, _ := ctx.Value(runStateKey{}).(*runState)
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
// assumption a hostile guest could break. The copy matters: the view
// wazero returns aliases guest memory, which the guest may change or grow.
func readMessage(m api.Module, ptr, length uint64) (string, int32) {
	p, n := api.DecodeU32(ptr), api.DecodeU32(length)
	if n > abi.MaxMessageLen {
		return "", abi.ErrTooLong
	}
	mem := m.Memory()
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
