package mcpserver

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

func TestCompletionsAreServedAndDeclaredOnlyWhenAModuleHasThem(t *testing.T) {
	withCompletions := t.TempDir()
	wattest.Write(t, withCompletions, "trap", "a")
	write(t, filepath.Join(withCompletions, "a.manifest.json"), `{"abi":1,
		"prompts":[{"name":"trip","arguments":[{"name":"city","completions":["Paris","Park City","Lyon"]},{"name":"days"}]}],
		"resourceTemplates":[{"uriTemplate":"inv://{id}","name":"invoice","completions":{"id":["INV-1","INV-2"]}}]}`)
	without := t.TempDir()
	wattest.Write(t, without, "trap", "a")
	write(t, filepath.Join(without, "a.manifest.json"), `{"abi":1,"prompts":[{"name":"trip","arguments":[{"name":"city"}]}]}`)

	cs := connectInMemory(t, serveDir(t, without, Options{}))
	if caps := cs.InitializeResult().Capabilities; caps.Completions != nil {
		t.Errorf("completions declared by a server whose modules declare none")
	}

	cs = connectInMemory(t, serveDir(t, withCompletions, Options{}))
	if caps := cs.InitializeResult().Capabilities; caps.Completions == nil {
		t.Fatal("completions not declared")
	}
	complete := func(ref *mcp.CompleteReference, arg, value string) (*mcp.CompleteResult, error) {
		return cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
	}
	res, err := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "trip"}, "city", "pa")
	if err != nil || !slices.Equal(res.Completion.Values, []string{"Paris", "Park City"}) || res.Completion.Total != 2 {
		t.Errorf("city pa: %+v, %v", res, err)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/resource", URI: "inv://{id}"}, "id", "inv-2")
	if err != nil || !slices.Equal(res.Completion.Values, []string{"INV-2"}) {
		t.Errorf("id inv-2: %+v, %v", res, err)
	}
	res, err = complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "trip"}, "days", "")
	if err != nil || len(res.Completion.Values) != 0 {
		t.Errorf("an argument without completions: %+v, %v; want none", res, err)
	}
	for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: "nope"}, {Type: "ref/resource", URI: "nope://{x}"}} {
		_, err := complete(ref, "x", "")
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "nope") {
			t.Errorf("%+v: %v; want -32602 naming it", ref, err)
		}
	}
}
