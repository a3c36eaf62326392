// Package guest turns Go functions into wasmcp tools.
//
// A wasmcp tool is a WASI preview 1 command module. For every call the host
// starts a fresh instance with os.Args = [stem, toolName], the call's
// arguments as a JSON object on stdin, and reads the result from stdout and
// the exit status. This package does that plumbing, so a tool is a function
// and one line of main:
//
//	func main() {
//		guest.Main(guest.Text("greet", func(in struct{ Name string }) (string, error) {
//			return "Hello, " + in.Name, nil
//		}))
//	}
//
// Each constructor matches one "output" mode of the manifest: Text for "text",
// JSON for "json" and Result for "result". The manifest is still written by
// hand; this package cannot check that a tool's mode matches it.
//
// Build with GOOS=wasip1 GOARCH=wasm go build.
package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime/debug"
	"strings"
)

// Exit statuses. The host treats every non-zero status as a tool error; they
// differ only so that a human reading the host's log can tell a failed call
// from a module that was started wrongly.
const (
	// ExitOK means stdout holds the result.
	ExitOK = 0
	// ExitError means the call failed: the tool returned an error, the
	// arguments did not decode, or the tool panicked. stderr ends with a
	// one-line reason.
	ExitError = 1
	// ExitUsage means the module was asked for a tool it does not have.
	ExitUsage = 2
)

// Tool is one tool a module implements. Make it with Text, JSON or Result.
type Tool struct {
	name string
	// call decodes the arguments, runs the tool and returns the bytes for
	// stdout. It returns them rather than writing them so that a failed call
	// leaves stdout empty.
	call func(args []byte) ([]byte, error)
	// warm does, before the arguments arrive, the one-off work decoding and
	// encoding would otherwise do during the call (encoding/json builds
	// its per-type codecs on first use). A host that starts instances
	// ahead of their calls then runs this before the call is even made.
	warm func()
}

// Name returns the tool's name, the one the manifest declares.
func (t Tool) Name() string { return t.name }

// Text makes a tool for output mode "text": the returned string becomes the
// result's only text block, byte for byte, so no newline is added.
func Text[In any](name string, fn func(In) (string, error)) Tool {
	return tool(name, fn, func(out string) ([]byte, error) { return []byte(out), nil })
}

// JSON makes a tool for output mode "json": Out is encoded as the result's
// structuredContent. It must encode to a JSON object, so it is typically a
// struct or a map; a nil map or pointer encodes to null and fails the call.
func JSON[In, Out any](name string, fn func(In) (Out, error)) Tool {
	return tool(name, fn, func(out Out) ([]byte, error) { return encodeObject(out, "result") })
}

// Result makes a tool for output mode "result", for tools that need several
// content blocks, non-text blocks, or to shape the result themselves. A
// result with IsError set is still a successful run: the model sees it as a
// tool error, but stdout carries it and the exit status is 0.
func Result[In any](name string, fn func(In) (*CallResult, error)) Tool {
	return tool(name, fn, func(res *CallResult) ([]byte, error) {
		if res == nil {
			return nil, errors.New("tool returned no result")
		}
		if res.StructuredContent != nil {
			// Checked here because the host would reject it with a message
			// about the module, not about the tool's code.
			if _, err := encodeObject(res.StructuredContent, "structuredContent"); err != nil {
				return nil, err
			}
		}
		return encode(res)
	})
}

// tool wires decoding, the tool's function and an output encoding together;
// the three constructors differ only in the encoding.
func tool[In, Out any](name string, fn func(In) (Out, error), write func(Out) ([]byte, error)) Tool {
	warm := func() {
		var in In
		_ = json.Unmarshal([]byte("{}"), &in)
		var out Out
		_, _ = json.Marshal(out)
	}
	return Tool{name: name, warm: warm, call: func(args []byte) ([]byte, error) {
		in, err := decode[In](args)
		if err != nil {
			return nil, err
		}
		out, err := fn(in)
		if err != nil {
			return nil, err
		}
		return write(out)
	}}
}

// Main runs the tool named by os.Args[1] and exits; it never returns. Call
// it from main with every tool the module declares in its manifest, or
// with none to run those Register made the module's. A module with a
// single tool also runs it when no name is given.
func Main(tools ...Tool) {
	if len(tools) == 0 {
		tools = registered
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr, tools, true))
}

// run is Main without the process: it returns the exit status instead of
// exiting, so tests can drive it. With warm, the tool's codecs are built
// before its arguments are read (a reactor's start-up built them already).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, tools []Tool, warm bool) int {
	byName := make(map[string]Tool, len(tools))
	for _, t := range tools {
		if t.call == nil {
			fmt.Fprintf(stderr, "module bug: tool %q was not made with Text, JSON or Result\n", t.name)
			return ExitUsage
		}
		if _, dup := byName[t.name]; dup {
			fmt.Fprintf(stderr, "module bug: tool %q is registered twice\n", t.name)
			return ExitUsage
		}
		byName[t.name] = t
	}

	var tool Tool
	switch {
	case len(args) >= 2:
		t, ok := byName[args[1]]
		if !ok {
			fmt.Fprintf(stderr, "unknown tool %q; this module has %s\n", args[1], names(tools))
			return ExitUsage
		}
		tool = t
	case len(tools) == 1:
		// The host always names the tool, but a single-tool module can then
		// also be run by hand under any WASI runtime.
		tool = tools[0]
	default:
		fmt.Fprintf(stderr, "no tool name given; this module has %s\n", names(tools))
		return ExitUsage
	}

	if warm && tool.warm != nil {
		tool.warm()
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "reading arguments: %v\n", err)
		return ExitError
	}
	out, err := call(tool, in, stderr)
	if err != nil {
		fmt.Fprintln(stderr, oneLine(err.Error()))
		return ExitError
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "writing result: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// call runs the tool, turning a panic into an error. The stack goes to
// stderr first and the message last, because the host shows the model only
// the tail of stderr and a stack trace's tail says nothing useful.
func call(t Tool, args []byte, stderr io.Writer) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			stderr.Write(debug.Stack())
			err = fmt.Errorf("internal error in tool %q: %v", t.name, p)
		}
	}()
	return t.call(args)
}

func names(tools []Tool) string {
	if len(tools) == 0 {
		return "no tools"
	}
	q := make([]string, len(tools))
	for i, t := range tools {
		q[i] = fmt.Sprintf("%q", t.name)
	}
	return "tools " + strings.Join(q, ", ")
}

// oneLine keeps a multi-line error on one line, since the host may show only
// the last line of stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// decode reads the arguments into In. The host has already validated them
// against the inputSchema, but a module may be run by other hosts or by hand,
// so decoding failures are reported rather than trusted away. Unknown fields
// are ignored: the schema, not the Go type, decides what is allowed.
func decode[In any](args []byte) (In, error) {
	var in In
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return in, fmt.Errorf("invalid arguments: %s", describe(err))
	}
	return in, nil
}

// describe rewords encoding/json's errors, which name Go types, in the JSON
// terms a model can act on.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := jsonKind(te.Type)
		got, _, _ := strings.Cut(te.Value, " ")
		if got == "bool" {
			got = "boolean"
		}
		where := "arguments"
		if te.Field != "" {
			where = fmt.Sprintf("%q", te.Field)
		}
		if want == "integer" && got == "number" {
			// The value was a number, just not one the Go type holds:
			// a fraction, or out of range.
			return fmt.Sprintf("%s must be an integer that fits %s, not %s", where, te.Type, strings.TrimPrefix(te.Value, "number "))
		}
		return fmt.Sprintf("%s must be %s, not %s", where, article(want), article(got))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("not valid JSON: %s (at byte %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return t.String()
}

func article(kind string) string {
	if kind == "" {
		return "a value"
	}
	switch kind[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + kind
	}
	return "a " + kind
}

// encode encodes a tool's result for stdout.
func encode(v any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding result: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return b, nil
}

// marshal is json.Marshal without HTML escaping: the reader is a model, not
// a browser, and "<" reads better than "\u003c".
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeObject encodes v and checks that it is a JSON object, which is all
// MCP accepts as structuredContent.
func encodeObject(v any, what string) ([]byte, error) {
	b, err := encode(v)
	if err != nil {
		return nil, err
	}
	if trimmed := bytes.TrimSpace(b); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("tool bug: %s must encode to a JSON object, not %.40s", what, trimmed)
	}
	return b, nil
}
