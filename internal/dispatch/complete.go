package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// Complete answers completion/complete (mcpserver.Caller): from the values
// the prompt argument or template variable declares, those that begin with
// what the client typed, or, for a prompt or template whose module
// completes it, by running the module's completion/complete entry point
// as a tool call runs. A prompt or template that is not served is -32602;
// a module that fails or writes what is not a completion is -32603.
func (d *Dispatcher) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	prompt, key := p.Ref.Type == "ref/prompt", p.Ref.URI
	if prompt {
		key = p.Ref.Name
	}
	cat, c, err := d.reg.AcquireCompletion(prompt, key, p.Argument.Name)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completing " + err.Error()}
	}
	if c.Entry == nil {
		return &mcp.CompleteResult{Completion: matching(c.Values, p.Argument.Value)}, nil
	}
	defer c.Entry.Module.Release()
	req := map[string]any{"ref": p.Ref, "argument": p.Argument}
	if p.Context != nil && len(p.Context.Arguments) > 0 {
		req["context"] = map[string]any{"arguments": p.Context.Arguments}
	}
	stdin, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the completion request: %w", err)
	}
	entry := c.Entry.Module.Stem + " " + abi.EntryComplete
	start := time.Now()
	res, outcome := d.call(ctx, cat, c.Entry, stdin, &serverLog{log: d.log, tool: entry}, nil)
	d.logCall(entry, outcome, time.Since(start), stdin)
	if res.IsError {
		return nil, completeError(key, c.Entry.Module, resultText(res))
	}
	got, err := completion(res.StructuredContent)
	if err != nil {
		return nil, completeError(key, c.Entry.Module, fmt.Sprintf("what %s wrote is not a completion: %v", abi.EntryComplete, err))
	}
	return &mcp.CompleteResult{Completion: got}, nil
}

func completeError(key string, m *registry.Module, why string) error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("completing %s failed: module %s: %s", key, m.Stem, why),
	}
}

// completion checks what a module's completion/complete wrote:
// {"values": [...], "total"?, "hasMore"?}. At most
// abi.MaxCompletionValues values, each at most abi.MaxText bytes; a total
// below the values' count is raised to it.
func completion(out any) (mcp.CompletionResultDetails, error) {
	raw, err := json.Marshal(out)
	if err != nil {
		return mcp.CompletionResultDetails{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var answer struct {
		Values  *[]string `json:"values"`
		Total   int       `json:"total"`
		HasMore bool      `json:"hasMore"`
	}
	if err := dec.Decode(&answer); err != nil {
		return mcp.CompletionResultDetails{}, fmt.Errorf(`it must be {"values": [strings], "total"?, "hasMore"?}: %v`, err)
	}
	if answer.Values == nil {
		return mcp.CompletionResultDetails{}, errors.New(`"values" is missing; send [] for no values`)
	}
	values := *answer.Values
	if len(values) > abi.MaxCompletionValues {
		return mcp.CompletionResultDetails{}, fmt.Errorf(`"values" holds %d values, over the limit of %d: send the first %[2]d with "hasMore"`, len(values), abi.MaxCompletionValues)
	}
	for i, v := range values {
		if len(v) > abi.MaxText {
			return mcp.CompletionResultDetails{}, fmt.Errorf("value %d is %d bytes, over the limit of %d", i, len(v), abi.MaxText)
		}
	}
	if answer.Total < 0 {
		return mcp.CompletionResultDetails{}, errors.New(`"total" must not be negative`)
	}
	return mcp.CompletionResultDetails{Values: values, Total: max(answer.Total, len(values)), HasMore: answer.HasMore}, nil
}

// matching returns the values that begin with prefix, ignoring case, in
// their declared order: at most abi.MaxCompletionValues of them, with the
// number of all that match.
func matching(values []string, prefix string) mcp.CompletionResultDetails {
	out := mcp.CompletionResultDetails{Values: []string{}}
	lower := strings.ToLower(prefix)
	for _, v := range values {
		if !strings.HasPrefix(strings.ToLower(v), lower) {
			continue
		}
		out.Total++
		if len(out.Values) < abi.MaxCompletionValues {
			out.Values = append(out.Values, v)
		}
	}
	out.HasMore = out.Total > len(out.Values)
	return out
}
