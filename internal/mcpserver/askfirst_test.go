package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// namingCalls is a Caller whose calls ask the user's name (user_name)
// and, when the arguments say "more", then a confirmation (confirm), and
// answer with what the client said.
type namingCalls struct{ Caller }

func (namingCalls) Call(ctx context.Context, _ string, args json.RawMessage, _ sandbox.Reporter, ask sandbox.Asker) (*mcp.CallToolResult, error) {
	form := `{"message":"%s?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	text := ""
	for _, id := range []string{"user_name", "confirm"} {
		if id == "confirm" && !strings.Contains(string(args), `"more"`) {
			break
		}
		answers, err := ask.Ask(ctx, []sandbox.Ask{{Method: "elicitation/create", Capability: "elicitation", ID: id, Params: json.RawMessage(fmt.Sprintf(form, id))}})
		if err != nil {
			return nil, err
		}
		text += id + "=" + string(answers[0].JSON) + " "
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
}

// askFirstMeta is the _meta of a 2026-07-28 client that takes elicitation
// and declares the tasks extension.
const askFirstMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// askFirstServer serves "named" (askFirst, taskSupport required) and
// "maybe" (askFirst, optional) with namingCalls, over stdio.
func askFirstServer(t *testing.T) (*Server, *stdioPeer) {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "named")
	write(t, filepath.Join(dir, "named.manifest.json"), `{"abi":1,"tools":[
		{"name":"named","description":"d","inputSchema":{"type":"object"},"client":["elicitation"],"execution":{"taskSupport":"required","askFirst":true}},
		{"name":"maybe","description":"d","inputSchema":{"type":"object"},"client":["elicitation"],"execution":{"taskSupport":"optional","askFirst":true}}]}`)
	reg, _ := openDir(t, dir)
	s := New(reg, namingCalls{}, Options{})
	return s, startStdioBare(t, s)
}

// roundResult is what a round of an askFirst tool's call answers: an
// InputRequiredResult or a CreateTaskResult.
type roundResult struct {
	ResultType    string
	TaskID        string
	RequestState  string
	InputRequests map[string]json.RawMessage
	raw           string
}

func round(t *testing.T, p *stdioPeer, id int, tool, args, more, meta string) roundResult {
	t.Helper()
	r := extensionCall(p, id, "tools/call", fmt.Sprintf(`"name":%q,"arguments":%s%s`, tool, args, more), meta)
	if r.Error != nil {
		t.Fatalf("tools/call %s %s: %d %s", tool, more, r.Error.Code, r.Error.Message)
	}
	var out roundResult
	if err := json.Unmarshal(r.Result, &out); err != nil {
		t.Fatal(err)
	}
	out.raw = string(r.Result)
	return out
}

// pollUntil polls the task id until its status is no longer working.
func pollUntil(t *testing.T, p *stdioPeer, id string) extensionTask {
	t.Helper()
	for {
		var st extensionTask
		r := extensionCall(p, 100, "tasks/get", `"taskId":"`+id+`"`, askFirstMeta)
		if err := json.Unmarshal(r.Result, &st); err != nil || r.Error != nil {
			t.Fatalf("tasks/get = %s %+v", r.Result, r.Error)
		}
		if st.Status != taskWorking {
			return st
		}
	}
}

const aliceAnswers = `,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}`

// TestAskFirstGathersThenBecomesATask: an askFirst tool's first round
// asks by an InputRequiredResult, without a task; the round that brings
// the answer is a CreateTaskResult, without requestState or
// inputRequests, whose task ends with the answer in its result. The
// requestState is good for one retry, a tampered one is refused, and
// neither refused round nor the asking one leaves a task behind;
// tools/list does not show askFirst.
func TestAskFirstGathersThenBecomesATask(t *testing.T) {
	s, p := askFirstServer(t)
	first := round(t, p, 1, "named", `{}`, "", askFirstMeta)
	if first.ResultType != "input_required" || first.InputRequests["user_name"] == nil || first.RequestState == "" || first.TaskID != "" {
		t.Fatalf("round 1 = %s; want an InputRequiredResult asking user_name, no task", first.raw)
	}
	tampered := string(first.RequestState[0]^1) + first.RequestState[1:]
	r := extensionCall(p, 2, "tools/call", `"name":"named","arguments":{},"requestState":"`+tampered+`"`+aliceAnswers, askFirstMeta)
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "not issued by this server") {
		t.Errorf("a tampered requestState = %s %+v; want -32602, not issued by this server", r.Result, r.Error)
	}

	second := round(t, p, 3, "named", `{}`, `,"requestState":"`+first.RequestState+`"`+aliceAnswers, askFirstMeta)
	if second.ResultType != "task" || second.TaskID == "" || strings.Contains(second.raw, "requestState") || strings.Contains(second.raw, "inputRequests") {
		t.Fatalf("round 2 = %s; want a CreateTaskResult without requestState and inputRequests", second.raw)
	}
	done := pollUntil(t, p, second.TaskID)
	if done.Status != taskCompleted || !strings.Contains(string(done.Result), `Alice`) {
		t.Errorf("the task = %+v %s; want completed with Alice", done, done.Result)
	}
	r = extensionCall(p, 4, "tools/call", `"name":"named","arguments":{},"requestState":"`+first.RequestState+`"`+aliceAnswers, askFirstMeta)
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "retried with already") {
		t.Errorf("round 2 again = %s %+v; want -32602, the state spent", r.Result, r.Error)
	}
	p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{` + askFirstMeta + `}}`)
	if list := string(p.recv().Result); !strings.Contains(list, `"execution":{"taskSupport":"required"}`) || strings.Contains(list, "askFirst") {
		t.Errorf("tools/list = %s; want taskSupport shown, askFirst not", list)
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if s.tasks.total != 1 {
		t.Errorf("the store holds %d tasks; want only round 2's", s.tasks.total)
	}
}

// TestAskFirstLaterAsksWaitInTheTask: once the call is a task, an ask
// made after the answers it gathered waits in the task (input_required)
// for tasks/update, as any task's does.
func TestAskFirstLaterAsksWaitInTheTask(t *testing.T) {
	_, p := askFirstServer(t)
	first := round(t, p, 1, "named", `{"more":true}`, "", askFirstMeta)
	second := round(t, p, 2, "named", `{"more":true}`, `,"requestState":"`+first.RequestState+`"`+aliceAnswers, askFirstMeta)
	if second.ResultType != "task" {
		t.Fatalf("round 2 = %s; want a CreateTaskResult", second.raw)
	}
	waiting := pollUntil(t, p, second.TaskID)
	if waiting.Status != taskInputRequired || waiting.InputRequests["confirm"] == nil || waiting.InputRequests["user_name"] != nil {
		t.Fatalf("the task = %+v; want input_required with confirm alone", waiting)
	}
	r := extensionCall(p, 3, "tasks/update", `"taskId":"`+second.TaskID+`","inputResponses":{"confirm":{"action":"accept","content":{"name":"yes"}}}`, askFirstMeta)
	if r.Error != nil {
		t.Fatalf("tasks/update: %+v", r.Error)
	}
	done := pollUntil(t, p, second.TaskID)
	if done.Status != taskCompleted || !strings.Contains(string(done.Result), "Alice") || !strings.Contains(string(done.Result), "yes") {
		t.Errorf("the task = %+v %s; want completed with both answers", done, done.Result)
	}
}

// TestAskFirstWithoutTheExtension: a client without the extension calls
// an optional askFirst tool as any tool that asks, by rounds whose last
// answers the result, and is refused a required one (-32021).
func TestAskFirstWithoutTheExtension(t *testing.T) {
	_, p := askFirstServer(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	if r := extensionCall(p, 1, "tools/call", `"name":"named","arguments":{}`, meta); r.Error == nil || r.Error.Code != -32021 {
		t.Errorf("a required askFirst tool without the extension = %s %+v; want -32021", r.Result, r.Error)
	}
	first := round(t, p, 2, "maybe", `{}`, "", meta)
	second := round(t, p, 3, "maybe", `{}`, `,"requestState":"`+first.RequestState+`"`+aliceAnswers, meta)
	if first.ResultType != "input_required" || second.ResultType != "complete" || !strings.Contains(second.raw, "Alice") {
		t.Errorf("rounds = %s, %s; want an InputRequiredResult, then the result", first.raw, second.raw)
	}
}
