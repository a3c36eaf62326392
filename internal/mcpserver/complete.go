package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/registry"
)

// MaxCompletionValues is how many values one completion answer holds at
// most, as MCP says.
const MaxCompletionValues = 100

// completer answers completion/complete from the values the manifests of
// the catalog in service declare, without running any code.
type completer struct {
	reg *registry.Registry
}

func (c completer) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	values, err := declaredValues(c.reg.Current(), p.Ref, p.Argument.Name)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return &mcp.CompleteResult{Completion: matching(values, p.Argument.Value)}, nil
}

// declaredValues returns the values the prompt argument or template
// variable ref and name stand for declares: none for one that declares
// none.
func declaredValues(cat *registry.Catalog, ref *mcp.CompleteReference, name string) ([]string, error) {
	switch ref.Type {
	case "ref/prompt":
		p, ok := cat.Prompt(ref.Name)
		if !ok {
			return nil, fmt.Errorf("unknown prompt %q", ref.Name)
		}
		for _, a := range p.Spec.Arguments {
			if a.Name == name {
				return a.Completions, nil
			}
		}
		return nil, nil
	default: // "ref/resource": the SDK refuses any other
		t, ok := cat.Template(ref.URI)
		if !ok {
			return nil, fmt.Errorf("no resource template %q", ref.URI)
		}
		return t.Spec.Completions[name], nil
	}
}

// matching returns the values that begin with prefix, ignoring case, in
// their declared order: at most MaxCompletionValues of them, with the
// number of all that match.
func matching(values []string, prefix string) mcp.CompletionResultDetails {
	out := mcp.CompletionResultDetails{Values: []string{}}
	lower := strings.ToLower(prefix)
	for _, v := range values {
		if !strings.HasPrefix(strings.ToLower(v), lower) {
			continue
		}
		out.Total++
		if len(out.Values) < MaxCompletionValues {
			out.Values = append(out.Values, v)
		}
	}
	out.HasMore = out.Total > len(out.Values)
	return out
}

// declaresCompletions says whether some module of the catalog declares
// values to complete.
func declaresCompletions(cat *registry.Catalog) bool {
	for _, m := range cat.Modules {
		if m.Manifest.DeclaresCompletions() {
			return true
		}
	}
	return false
}
