package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// heldCalls is a Caller whose tool calls run until the test answers them:
// each call sends itself on started, and returns what is sent on its
// answer, or the cancellation of its context, reported on cancelled.
type heldCalls struct {
	Caller
	started   chan *heldCall
	cancelled chan string
}

type heldCall struct {
	name   string
	args   json.RawMessage
	answer chan *mcp.CallToolResult
}

func (h *heldCalls) Call(ctx context.Context, name string, args json.RawMessage, _ sandbox.Reporter, _ sandbox.Asker) (*mcp.CallToolResult, error) {
	c := &heldCall{name: name, args: args, answer: make(chan *mcp.CallToolResult)}
	h.started <- c
	select {
	case res := <-c.answer:
		return res, nil
	case <-ctx.Done():
		h.cancelled <- name
		return nil, ctx.Err()
	}
}

// newHeldStore is a task store over tools "slow" (taskSupport optional),
// "must" (required) and "plain" (none declared), whose calls the test
// answers.
func newHeldStore(t *testing.T, opts TaskOptions) (*taskStore, *heldCalls) {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	write(t, filepath.Join(dir, "echo.manifest.json"), `{"abi":1,"tools":[
		{"name":"slow","description":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
		{"name":"must","description":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
		{"name":"plain","description":"d","inputSchema":{"type":"object"}}]}`)
	reg, _ := openDir(t, dir)
	calls := &heldCalls{started: make(chan *heldCall, 1000), cancelled: make(chan string, 1000)}
	return newTaskStore(calls, reg.Current, opts), calls
}

// ask answers method with params for owner, as JSON.
func ask(s *taskStore, owner, method, params string) (json.RawMessage, *jsonrpc.Error) {
	res, err := s.answer(taskRequest{ctx: context.Background(), owner: owner, method: method, params: json.RawMessage(params)})
	if err != nil {
		return nil, err
	}
	out, _ := json.Marshal(res)
	return out, nil
}

// mustAsk is ask that fails the test on an error.
func mustAsk(t *testing.T, s *taskStore, owner, method, params string) json.RawMessage {
	t.Helper()
	out, err := ask(s, owner, method, params)
	if err != nil {
		t.Fatalf("%s %s: %d %s", method, params, err.Code, err.Message)
	}
	return out
}

// wantError checks that method with params draws code, with a message
// containing part.
func wantError(t *testing.T, s *taskStore, owner, method, params string, code int64, part string) {
	t.Helper()
	out, err := ask(s, owner, method, params)
	if err == nil {
		t.Fatalf("%s %s = %s; want error %d", method, params, out, code)
	}
	if err.Code != code || !strings.Contains(err.Message, part) {
		t.Errorf("%s %s: error %d %q; want %d containing %q", method, params, err.Code, err.Message, code, part)
	}
}

// startTask creates a task of tool for owner and returns its id.
func startTask(t *testing.T, s *taskStore, owner, tool, task string) string {
	t.Helper()
	var created struct {
		Task taskState `json:"task"`
	}
	out := mustAsk(t, s, owner, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"n":1},"task":%s}`, tool, task))
	if err := json.Unmarshal(out, &created); err != nil || created.Task.TaskID == "" || created.Task.Status != taskWorking {
		t.Fatalf("CreateTaskResult %s: %v", out, err)
	}
	return created.Task.TaskID
}

func status(t *testing.T, s *taskStore, owner, id string) taskState {
	t.Helper()
	var st taskState
	if err := json.Unmarshal(mustAsk(t, s, owner, "tasks/get", `{"taskId":"`+id+`"}`), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestTaskRunsAndKeepsItsResult(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{"ttl":60000}`)
	call := <-calls.started
	if call.name != "slow" || string(call.args) != `{"n":1}` {
		t.Errorf("call of %s with %s", call.name, call.args)
	}
	if st := status(t, s, "a", id); st.Status != taskWorking || st.TTL != 60000 || st.PollInterval <= 0 {
		t.Errorf("running task: %+v", st)
	}
	result := make(chan json.RawMessage, 1)
	go func() { result <- mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+id+`"}`) }()
	// The module's own _meta stays, but for the server's key.
	call.answer <- &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}},
		Meta: mcp.Meta{relatedTaskKey: map[string]string{"taskId": "forged"}, "com.example/k": 1}}
	got := string(<-result)
	if !strings.Contains(got, `"text":"done"`) || !strings.Contains(got, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) || !strings.Contains(got, `"com.example/k":1`) {
		t.Errorf("tasks/result = %s", got)
	}
	if st := status(t, s, "a", id); st.Status != taskCompleted {
		t.Errorf("finished task: %+v", st)
	}
	// Asked again, the result is the same.
	if again := string(mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+id+`"}`)); again != got {
		t.Errorf("tasks/result again = %s; want %s", again, got)
	}
}

func TestToolErrorIsAFailedTask(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "must", `{}`)
	(<-calls.started).answer <- &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "bad"}}}
	got := string(mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+id+`"}`))
	if !strings.Contains(got, `"isError":true`) {
		t.Errorf("tasks/result = %s", got)
	}
	if st := status(t, s, "a", id); st.Status != taskFailed {
		t.Errorf("task of a tool error: %+v", st)
	}
}

func TestTaskCallsAreChecked(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	wantError(t, s, "a", "tools/call", `{"name":"must"}`, -32601, `runs only as a task`)
	wantError(t, s, "a", "tools/call", `{"name":"plain","task":{}}`, -32601, `cannot run as a task`)
	wantError(t, s, "a", "tools/call", `{"name":"nope","task":{}}`, -32602, `unknown tool "nope"`)
	wantError(t, s, "a", "tools/call", `{"name":"slow","task":{"ttl":-1}}`, -32602, `task.ttl must be a whole number`)
	wantError(t, s, "a", "tools/call", `{"name":"slow","task":{"ttl":1.5}}`, -32602, `task.ttl must be a whole number`)
	wantError(t, s, "a", "tools/call", `{"name":"slow","task":{"ttl":"1"}}`, -32602, `invalid params`)
	wantError(t, s, "a", "tools/call", `{"name":"slow","task":null}`, -32602, `"task" must be an object`)
	wantError(t, s, "a", "tasks/get", `{"taskId":7}`, -32602, `invalid params`)
	wantError(t, s, "a", "tasks/get", `{"taskId":"nope"}`, -32602, `not found`)
	wantError(t, s, "a", "tasks/list", `{"cursor":"!!"}`, -32602, `cursor`)
}

func TestHugeTTLIsClamped(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{"ttl":1e300}`)
	if st := status(t, s, "a", id); st.TTL != DefaultTaskMaxTTL.Milliseconds() {
		t.Errorf("ttl %d; want the maximum, %d", st.TTL, DefaultTaskMaxTTL.Milliseconds())
	}
	id = startTask(t, s, "a", "slow", `{}`)
	if st := status(t, s, "a", id); st.TTL != DefaultTaskTTL.Milliseconds() {
		t.Errorf("ttl %d; want the default, %d", st.TTL, DefaultTaskTTL.Milliseconds())
	}
}

func TestTasksAreTheirOwners(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{}`)
	<-calls.started
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		wantError(t, s, "b", method, `{"taskId":"`+id+`"}`, -32602, "not found")
	}
	if got := string(mustAsk(t, s, "b", "tasks/list", `{}`)); got != `{"tasks":[]}` {
		t.Errorf("another owner's tasks/list = %s", got)
	}
	if st := status(t, s, "a", id); st.Status != taskWorking {
		t.Errorf("after another owner's cancel: %+v", st)
	}
}

func TestCancelStopsTheCall(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{}`)
	<-calls.started
	var st taskState
	json.Unmarshal(mustAsk(t, s, "a", "tasks/cancel", `{"taskId":"`+id+`"}`), &st)
	if st.Status != taskCancelled {
		t.Errorf("tasks/cancel = %+v", st)
	}
	if name := <-calls.cancelled; name != "slow" {
		t.Errorf("cancelled %s", name)
	}
	if st := status(t, s, "a", id); st.Status != taskCancelled {
		t.Errorf("after the call returned: %+v", st)
	}
	if got := string(mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+id+`"}`)); !strings.Contains(got, "cancelled") {
		t.Errorf("tasks/result of a cancelled task = %s", got)
	}
	wantError(t, s, "a", "tasks/cancel", `{"taskId":"`+id+`"}`, -32602, "already ended (cancelled)")
}

func TestCancelOfAFinishedTaskIsRefused(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{}`)
	(<-calls.started).answer <- &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+id+`"}`)
	wantError(t, s, "a", "tasks/cancel", `{"taskId":"`+id+`"}`, -32602, "already ended (completed)")
	if st := status(t, s, "a", id); st.Status != taskCompleted {
		t.Errorf("after a refused cancel: %+v", st)
	}
}

func TestTaskLimits(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{PerSession: 2, Total: 3})
	startTask(t, s, "a", "slow", `{}`)
	startTask(t, s, "a", "slow", `{}`)
	wantError(t, s, "a", "tools/call", `{"name":"slow","task":{}}`, -32603, "maximum of 2 tasks running")
	startTask(t, s, "b", "slow", `{}`)
	wantError(t, s, "c", "tools/call", `{"name":"slow","task":{}}`, -32603, "server has its maximum of 3 tasks running")
	// A session that ends gives its share back.
	s.endOwner("a")
	startTask(t, s, "c", "slow", `{}`)

	// The stateless clients, one owner, share the store's bound, not one
	// session's share of it.
	s, _ = newHeldStore(t, TaskOptions{PerSession: 2, Total: 3})
	for range 3 {
		if _, _, refusal := s.start(taskCall{owner: statelessOwner, tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true}); refusal != "" {
			t.Fatalf("a stateless task within the store's bound refused: %s", refusal)
		}
	}
	if _, _, refusal := s.start(taskCall{owner: statelessOwner, tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true}); !strings.Contains(refusal, "server has its maximum of 3") {
		t.Fatalf("a stateless task past the store's bound: %q", refusal)
	}
}

// TestFinishedTasksMakeRoom: at either bound, a new task takes the place
// of the oldest finished one (the owner's own at the owner's bound, any
// owner's at the store's) rather than being refused, and running tasks
// are never evicted.
func TestFinishedTasksMakeRoom(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{PerSession: 2, Total: 3})
	finish := func() {
		(<-calls.started).answer <- &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}
	}
	a1 := startTask(t, s, "a", "slow", `{}`)
	finish()
	mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+a1+`"}`)
	a2 := startTask(t, s, "a", "slow", `{}`)
	finish()
	mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+a2+`"}`)
	// a is at its bound with two finished tasks: the oldest goes.
	a3 := startTask(t, s, "a", "slow", `{}`)
	wantError(t, s, "a", "tasks/get", `{"taskId":"`+a1+`"}`, -32602, "not found")
	if st := status(t, s, "a", a2); st.Status != taskCompleted {
		t.Errorf("a's newer finished task: %+v; want it kept", st)
	}
	// The store is at its bound (a2 finished, a3 and b1 running): b's new
	// task takes the place of a's finished a2.
	startTask(t, s, "b", "slow", `{}`)
	startTask(t, s, "b", "slow", `{}`)
	wantError(t, s, "a", "tasks/get", `{"taskId":"`+a2+`"}`, -32602, "not found")
	if st := status(t, s, "a", a3); st.Status != taskWorking {
		t.Errorf("a's running task: %+v; want it kept", st)
	}
	// Only running tasks are left: the next is refused.
	wantError(t, s, "c", "tools/call", `{"name":"slow","task":{}}`, -32603, "maximum of 3 tasks running")
}

// A task request that found its session live just before the session
// ended makes no task that would outlive it.
func TestNoTaskForAnEndedSession(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{Total: 1})
	s.endOwner("a")
	wantError(t, s, "a", "tools/call", `{"name":"slow","task":{}}`, -32603, "the session has ended")
	startTask(t, s, "b", "slow", `{}`)
}

func TestEndedSessionCancelsItsTasks(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{}`)
	<-calls.started
	result := make(chan *jsonrpc.Error, 1)
	go func() {
		_, err := ask(s, "a", "tasks/result", `{"taskId":"`+id+`"}`)
		result <- err
	}()
	<-s.endOwner("a")
	if name := <-calls.cancelled; name != "slow" {
		t.Errorf("cancelled %s", name)
	}
	// The waiting tasks/result has its answer, whether it asked before
	// the end or after, when the task is gone.
	if err := <-result; err != nil && !strings.Contains(err.Message, "not found") {
		t.Errorf("tasks/result = %v", err)
	}
	wantError(t, s, "a", "tasks/get", `{"taskId":"`+id+`"}`, -32602, "not found")
}

func TestExpiredTaskIsCancelledAndForgotten(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	id := startTask(t, s, "a", "slow", `{"ttl":0}`)
	<-calls.started
	<-calls.cancelled
	// The timer cancels the call, then forgets the task under the same
	// lock: once the call is told, the task is gone.
	wantError(t, s, "a", "tasks/get", `{"taskId":"`+id+`"}`, -32602, "not found")
}

func TestTasksListPages(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{PerSession: 200})
	var want []string
	for range tasksPageSize + 7 {
		want = append(want, startTask(t, s, "a", "slow", `{}`))
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 2 {
			t.Fatal("more pages than tasks")
		}
		var page struct {
			Tasks      []taskState `json:"tasks"`
			NextCursor string      `json:"nextCursor"`
		}
		params, _ := json.Marshal(map[string]string{"cursor": cursor})
		json.Unmarshal(mustAsk(t, s, "a", "tasks/list", string(params)), &page)
		for _, st := range page.Tasks {
			got = append(got, st.TaskID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("listed %d tasks; want the %d created, in order", len(got), len(want))
	}
}

func TestWhatTheStoreHandles(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	for _, tc := range []struct {
		method, params string
		want           bool
	}{
		{"tools/call", `{"name":"x","task":{}}`, true},
		{"tools/call", `{"name":"slow"}`, false},
		{"tools/call", `{"name":"must"}`, true},
		{"tools/call", `{"name":7}`, false},
		{"tasks/get", `{}`, true},
		{"tasks/update", `{}`, false},
		{"tools/list", `{}`, false},
	} {
		if got := s.handles(tc.method, json.RawMessage(tc.params)); got != tc.want {
			t.Errorf("handles(%s, %s) = %v", tc.method, tc.params, got)
		}
	}
}

// TestTaskFieldsInTheSDKsAnswers checks, through the SDK's client, that
// initialize declares the tasks capability and tools/list each tool's
// execution, and that a tool that requires a task refuses a plain call
// that reaches the SDK.
func TestTaskFieldsInTheSDKsAnswers(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	write(t, filepath.Join(dir, "echo.manifest.json"), `{"abi":1,"tools":[
		{"name":"must","description":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
		{"name":"plain","description":"d","inputSchema":{"type":"object"}}]}`)
	s := serveDir(t, dir, Options{})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.mcp.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := func(id int64, method, params string) *jsonrpc.Response {
		t.Helper()
		reqID, _ := jsonrpc.MakeID(float64(id))
		if err := conn.Write(context.Background(), &jsonrpc.Request{ID: reqID, Method: method, Params: json.RawMessage(params)}); err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if resp, ok := msg.(*jsonrpc.Response); ok {
				return resp
			}
		}
	}
	init := rpc(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	if !strings.Contains(string(init.Result), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) || !strings.Contains(string(init.Result), `"tools":{`) {
		t.Errorf("initialize = %s", init.Result)
	}
	conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
	list := string(rpc(2, "tools/list", `{}`).Result)
	if !strings.Contains(list, `"name":"must"`) || !strings.Contains(list, `"execution":{"taskSupport":"required"}`) || strings.Count(list, `"execution"`) != 1 {
		t.Errorf("tools/list = %s", list)
	}
	call := rpc(3, "tools/call", `{"name":"must","arguments":{}}`)
	var werr *jsonrpc.Error
	if !errors.As(call.Error, &werr) || werr.Code != -32601 {
		t.Errorf("plain call of a required tool: %#v %s", call.Error, call.Result)
	}
}

// spinningTask serves, over HTTP with opts, a tool that spins until it is
// cancelled and runs only as a task, and starts a task of it in a new
// 2025-11-25 session. It returns the server's URL, the headers of the
// session's requests and the task's id.
func spinningTask(t *testing.T, opts HTTPOptions) (url string, header map[string]string, id string) {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "loop", "spin")
	write(t, filepath.Join(dir, "spin.manifest.json"), `{"abi":1,"tools":[{"name":"spin","description":"spins","inputSchema":{"type":"object"},
		"execution":{"taskSupport":"required"}}]}`)
	srv := httptest.NewServer(serveDir(t, dir, Options{}).HTTPHandler(opts))
	t.Cleanup(srv.Close)
	header = map[string]string{"Mcp-Session-Id": startSession(t, srv.URL), "Mcp-Protocol-Version": "2025-11-25"}
	_, _, r := httpPost(t, srv.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spin","arguments":{},"task":{}}}`, header)
	var created struct {
		Task taskState `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("tools/call as a task: %s %+v", r.Result, r.Error)
	}
	return srv.URL, header, created.Task.TaskID
}

// TestPolledTaskKeepsItsSession polls a running task over HTTP for three
// times the session idle timeout: the SDK sees none of the polls, but must
// not close the session, and its task with it, as idle.
func TestPolledTaskKeepsItsSession(t *testing.T) {
	const idle = time.Second
	url, header, id := spinningTask(t, HTTPOptions{SessionIdleTimeout: idle})
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"` + id + `"}}`
	for start := time.Now(); time.Since(start) < 3*idle; {
		status, _, r := httpPost(t, url, get, header)
		var st taskState
		json.Unmarshal(r.Result, &st)
		if status != http.StatusOK || st.Status != taskWorking {
			t.Fatalf("tasks/get after %v: %d %s %+v", time.Since(start).Round(time.Millisecond), status, r.Result, r.Error)
		}
	}
	httpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"`+id+`"}}`, header)
}

// A waiting tasks/result is one of the long-lived streams: past
// MaxStreams, another is refused rather than hold a connection.
func TestWaitingForATaskTakesAStream(t *testing.T) {
	url, header, id := spinningTask(t, HTTPOptions{MaxStreams: 1})
	// The one stream: a GET of the session, which stays open.
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		get.Header.Set(k, v)
	}
	stream, err := http.DefaultClient.Do(get)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the session's stream: %v %v", stream, err)
	}
	defer stream.Body.Close()
	status, _, r := httpPost(t, url, `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"`+id+`"}}`, header)
	if status != http.StatusServiceUnavailable || r.Error == nil || !strings.Contains(r.Error.Message, "open streams") {
		t.Errorf("tasks/result with every stream open: %d %s %+v; want 503", status, r.Result, r.Error)
	}
	httpPost(t, url, `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"`+id+`"}}`, header)
}

// reportingCalls is a Caller whose calls log a line and report progress
// through the reporter they are given, and return.
type reportingCalls struct{ Caller }

func (reportingCalls) Call(_ context.Context, _ string, _ json.RawMessage, rep sandbox.Reporter, _ sandbox.Asker) (*mcp.CallToolResult, error) {
	rep.Log(1, "working")
	rep.Progress(1, 2, "half")
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
}

// TestTaskReportsNameTheirTask checks that a task's log messages and
// progress reach its session with the related-task key.
func TestTaskReportsNameTheirTask(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	s.calls = reportingCalls{}
	srv := serveDir(t, t.TempDir(), Options{})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.mcp.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	logs, progress := make(chan mcp.Meta, 1), make(chan mcp.Meta, 1)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params.Meta },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress <- r.Params.Meta },
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	out, rpcErr := s.answer(taskRequest{ctx: context.Background(), owner: "a", session: ss, method: "tools/call",
		params: json.RawMessage(`{"name":"slow","arguments":{},"task":{},"_meta":{"progressToken":"p"}}`)})
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	id := out.(struct {
		Task any `json:"task"`
	}).Task.(taskState).TaskID
	for what, ch := range map[string]chan mcp.Meta{"log message": logs, "progress": progress} {
		if got, _ := json.Marshal((<-ch)[relatedTaskKey]); string(got) != `{"taskId":"`+id+`"}` {
			t.Errorf("%s's related task: %s; want %s", what, got, id)
		}
	}
}

// extensionMeta is the _meta of a 2026-07-28 request from a client that
// declares the tasks extension.
const extensionMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// TestExtensionTaskStatuses: a task of the 2026-07-28 extension whose
// tool reports an error is completed, with the result inlined (2025-11-25
// has it failed); a cancelled one inlines nothing; and a session's task
// is not found through the extension, nor the extension's by its owner's
// 2025-11-25 requests.
func TestExtensionTaskStatuses(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{})
	get := func(id string) extensionTask {
		t.Helper()
		res, err := s.answerExtension(statelessOwner, "tasks/get", json.RawMessage(`{"taskId":"`+id+`",`+extensionMeta+`}`))
		if err != nil {
			t.Fatalf("tasks/get: %d %s", err.Code, err.Message)
		}
		return res.(extensionTask)
	}
	toolError, _, refusal := s.start(taskCall{owner: statelessOwner, tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true})
	if refusal != "" {
		t.Fatal(refusal)
	}
	(<-calls.started).answer <- &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no such invoice"}}, IsError: true}
	<-toolError.done
	if st := get(toolError.id); st.Status != taskCompleted || st.ResultType != "complete" || !strings.Contains(string(st.Result), `"isError":true`) || st.Error != nil {
		t.Errorf("a tool error = %+v; want completed with the result", st)
	}
	cancelled, _, _ := s.start(taskCall{owner: statelessOwner, tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true})
	<-calls.started
	s.answerExtension(statelessOwner, "tasks/cancel", json.RawMessage(`{"taskId":"`+cancelled.id+`",`+extensionMeta+`}`))
	if st := get(cancelled.id); st.Status != taskCancelled || st.Result != nil || st.Error != nil {
		t.Errorf("a cancelled task = %+v; want cancelled, nothing inlined", st)
	}

	other := startTask(t, s, "a", "slow", `{}`)
	if _, err := s.answerExtension("a", "tasks/get", json.RawMessage(`{"taskId":"`+other+`",`+extensionMeta+`}`)); err == nil || err.Code != -32602 {
		t.Errorf("a 2025-11-25 task through the extension: %v", err)
	}
	modern, _, _ := s.start(taskCall{owner: "a", tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true})
	wantError(t, s, "a", "tasks/get", `{"taskId":"`+modern.id+`"}`, -32602, "not found")
	var list struct{ Tasks []taskState }
	json.Unmarshal(mustAsk(t, s, "a", "tasks/list", `{}`), &list)
	if len(list.Tasks) != 1 || list.Tasks[0].TaskID != other {
		t.Errorf("tasks/list = %+v; want only the 2025-11-25 task", list.Tasks)
	}
}

// TestExtensionRequestsAreChecked: a request of the extension is checked
// as the SDK checks every 2026-07-28 request, whatever its transport.
func TestExtensionRequestsAreChecked(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	for _, c := range []struct {
		params string
		code   int64
	}{
		{`{"taskId":"x"}`, -32602},
		{`{"taskId":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`, mcp.CodeUnsupportedProtocolVersion},
		{`{"taskId":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, -32602},
		{`{"taskId":"x",` + modernMeta + `}`, mcp.CodeMissingRequiredClientCapabilities},
		{`{"taskId":"x",` + extensionMeta + `}`, -32602},
	} {
		if _, err := s.answerExtension(statelessOwner, "tasks/get", json.RawMessage(c.params)); err == nil || err.Code != c.code {
			t.Errorf("tasks/get %s: %v; want code %d", c.params, err, c.code)
		}
	}
}

// extensionTasksDir holds tools "echo" (taskSupport optional), which
// answers at once, and "spin" (required), which spins until cancelled.
func extensionTasksDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "echo")
	write(t, filepath.Join(dir, "echo.manifest.json"), `{"abi":1,"tools":[{"name":"echo","description":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`)
	wattest.Write(t, dir, "loop", "spin")
	write(t, filepath.Join(dir, "spin.manifest.json"), `{"abi":1,"tools":[{"name":"spin","description":"spins","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
	return dir
}

// extensionCall sends, on p, a 2026-07-28 request of method with id and
// params (without _meta) and meta, and returns its answer.
func extensionCall(p *stdioPeer, id int, method, params, meta string) reply {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,%s}}`, id, method, params, meta))
	return p.recv()
}

// TestExtensionTasksOverStdio runs the tasks extension over stdio: a
// 2026-07-28 call of a task-capable tool from a client that declares the
// extension makes a task, which tasks/get polls to its end, with the result
// inlined; tasks/cancel stops one; a client without the extension gets
// -32021 for a tool that runs only as a task; the removed methods are
// -32601; and another connection does not find the task.
func TestExtensionTasksOverStdio(t *testing.T) {
	s := serveDir(t, extensionTasksDir(t), Options{})
	p := startStdioBare(t, s)
	var created extensionTask
	r := extensionCall(p, 1, "tools/call", `"name":"echo","arguments":{"n":1}`, extensionMeta)
	if err := json.Unmarshal(r.Result, &created); err != nil || r.Error != nil || created.ResultType != "task" || created.TaskID == "" || created.Status != taskWorking {
		t.Fatalf("tools/call over stdio = %s %+v; want a CreateTaskResult", r.Result, r.Error)
	}
	get := func(id int, taskID string) extensionTask {
		t.Helper()
		var st extensionTask
		r := extensionCall(p, id, "tasks/get", `"taskId":"`+taskID+`"`, extensionMeta)
		if err := json.Unmarshal(r.Result, &st); err != nil || r.Error != nil {
			t.Fatalf("tasks/get = %s %+v", r.Result, r.Error)
		}
		return st
	}
	done := get(2, created.TaskID)
	for done.Status == taskWorking {
		done = get(2, created.TaskID)
	}
	if done.Status != taskCompleted || done.ResultType != "complete" || !strings.Contains(string(done.Result), `\"n\":1`) {
		t.Errorf("the finished task = %+v %s; want completed with the echo inlined", done, done.Result)
	}

	r = extensionCall(p, 3, "tools/call", `"name":"spin","arguments":{}`, extensionMeta)
	var spin extensionTask
	if err := json.Unmarshal(r.Result, &spin); err != nil || spin.TaskID == "" {
		t.Fatalf("tools/call of spin = %s %+v", r.Result, r.Error)
	}
	if r := extensionCall(p, 4, "tasks/cancel", `"taskId":"`+spin.TaskID+`"`, extensionMeta); r.Error != nil || string(r.Result) != `{"resultType":"complete"}` {
		t.Errorf("tasks/cancel = %s %+v; want an empty result", r.Result, r.Error)
	}
	if st := get(5, spin.TaskID); st.Status != taskCancelled {
		t.Errorf("a cancelled task = %+v", st)
	}

	for _, c := range []struct {
		what, method, params, meta string
		code                       int
	}{
		{"a task-only tool without the extension", "tools/call", `"name":"spin","arguments":{}`, modernMeta, -32021},
		{"tasks/get without the extension", "tasks/get", `"taskId":"` + spin.TaskID + `"`, modernMeta, -32021},
		{"tasks/result, removed", "tasks/result", `"taskId":"` + spin.TaskID + `"`, extensionMeta, -32601},
		{"tasks/list, removed", "tasks/list", `"x":1`, extensionMeta, -32601},
	} {
		if r := extensionCall(p, 6, c.method, c.params, c.meta); r.Error == nil || r.Error.Code != c.code {
			t.Errorf("%s = %s %+v; want code %d", c.what, r.Result, r.Error, c.code)
		}
	}

	other := startStdioBare(t, s)
	if r := extensionCall(other, 1, "tasks/get", `"taskId":"`+created.TaskID+`"`, extensionMeta); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("another connection's task = %s %+v; want not found", r.Result, r.Error)
	}
}

// askingCalls is a Caller whose calls ask the client for a name and a
// confirmation at once, and answer with what the client said, or return
// the error that ended the wait, reported on ended.
type askingCalls struct {
	Caller
	ended chan error
}

func (c askingCalls) Call(ctx context.Context, _ string, _ json.RawMessage, _ sandbox.Reporter, ask sandbox.Asker) (*mcp.CallToolResult, error) {
	form := `{"message":"%s?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}},"required":["v"]}}`
	answers, err := ask.Ask(ctx, []sandbox.Ask{
		{Method: "elicitation/create", Capability: "elicitation", ID: "name", Params: json.RawMessage(fmt.Sprintf(form, "name"))},
		{Method: "elicitation/create", Capability: "elicitation", ID: "confirm", Params: json.RawMessage(fmt.Sprintf(form, "sure"))},
		{Method: "sampling/createMessage", Capability: "sampling", ID: "undeclared", Params: json.RawMessage(`{}`)},
	})
	if err != nil {
		c.ended <- err
		return nil, err
	}
	var text []string
	for _, a := range answers {
		if a.Err != nil {
			text = append(text, "refused: "+a.Err.Error())
		} else {
			text = append(text, string(a.JSON))
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(text, "\n")}}}, nil
}

// TestExtensionTaskAsksTheClient: a task of the extension whose run asks
// is input_required, with its asks as inputRequests (those the tool may
// not make are refused at once); tasks/update answers them in part, then
// in full, and the run goes on with the answers; a response to no ask is
// ignored, one of the wrong kind refused; a cancel ends the wait.
func TestExtensionTaskAsksTheClient(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	calls := askingCalls{ended: make(chan error, 1)}
	s.calls = calls
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	ext := func(method, id, more string) (any, *jsonrpc.Error) {
		return s.answerExtension("a", method, json.RawMessage(`{"taskId":"`+id+`"`+more+`,`+extensionMeta+`}`))
	}
	waiting := func(id string) extensionTask {
		t.Helper()
		for {
			res, err := ext("tasks/get", id, "")
			if err != nil {
				t.Fatalf("tasks/get: %d %s", err.Code, err.Message)
			}
			if st := res.(extensionTask); st.Status != taskWorking {
				return st
			}
		}
	}
	update := func(id, responses string) {
		t.Helper()
		if _, err := ext("tasks/update", id, `,"inputResponses":`+responses); err != nil {
			t.Fatalf("tasks/update %s: %d %s", responses, err.Code, err.Message)
		}
	}

	task, _, _ := s.start(taskCall{owner: "a", tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true, need: []string{"elicitation"}, caps: caps})
	st := waiting(task.id)
	if st.Status != taskInputRequired || len(st.InputRequests) != 2 || st.InputRequests["name"] == nil || st.InputRequests["confirm"] == nil {
		t.Fatalf("an asking task = %+v; want input_required with the two asks", st)
	}
	if out, _ := json.Marshal(st); !strings.Contains(string(out), `"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"sure?"`) {
		t.Errorf("tasks/get = %s; want the asks as the requests they are", out)
	}
	if _, err := ext("tasks/update", task.id, `,"inputResponses":{"name":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`); err == nil || err.Code != -32602 {
		t.Errorf("a sampling result for an elicitation: %v; want -32602", err)
	}
	update(task.id, `{"name":{"action":"accept","content":{"v":"Alice"}},"unknown-key":{"ignored":true}}`)
	if st := waiting(task.id); st.Status != taskInputRequired || len(st.InputRequests) != 1 || st.InputRequests["confirm"] == nil {
		t.Errorf("after a partial update: %+v; want input_required with only the unanswered ask", st)
	}
	update(task.id, `{"confirm":{"action":"accept","content":{"v":"yes"}}}`)
	<-task.done
	st = waiting(task.id)
	for _, want := range []string{`"status":"completed"`, `Alice`, `yes`, `refused: `} {
		if out, _ := json.Marshal(st); !strings.Contains(string(out), want) {
			t.Errorf("the finished task = %s; want %s in it", out, want)
		}
	}

	cancelled, _, _ := s.start(taskCall{owner: "a", tool: "slow", args: json.RawMessage(`{}`), ttl: time.Minute, modern: true, need: []string{"elicitation"}, caps: caps})
	waiting(cancelled.id)
	ext("tasks/cancel", cancelled.id, "")
	if err := <-calls.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the wait of a cancelled task ended with %v", err)
	}
	if st := waiting(cancelled.id); st.Status != taskCancelled || st.InputRequests != nil {
		t.Errorf("a task cancelled while it asked = %+v", st)
	}
}

// A 2025-11-25 task's asks are refused, with what to do instead.
func TestLegacyTaskAsksAreRefused(t *testing.T) {
	s, _ := newHeldStore(t, TaskOptions{})
	s.calls = askingCalls{ended: make(chan error, 1)}
	id := startTask(t, s, "a", "slow", `{}`)
	got := string(mustAsk(t, s, "a", "tasks/result", `{"taskId":"`+id+`"}`))
	if strings.Count(got, "a 2025-11-25 task cannot ask the client") != 3 {
		t.Errorf("tasks/result = %s; want every ask refused", got)
	}
}

// The results finished tasks keep are bounded together: a tool's output
// of escaped bytes makes a result six times its size, and the bound on
// tasks alone would let them hold gigabytes. Past the bound, the oldest
// finished task of any owner gives way; the newest is kept.
func TestTaskResultsAreBounded(t *testing.T) {
	s, calls := newHeldStore(t, TaskOptions{ResultBytes: 1 << 20})
	finish := func(id string) {
		// 70 KiB of '<' is a result of 420 KiB: two fit, three do not.
		s.mu.Lock()
		task := s.owners["a"][id]
		s.mu.Unlock()
		(<-calls.started).answer <- &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("<", 70<<10)}}}
		<-task.done
	}
	a1 := startTask(t, s, "a", "slow", `{}`)
	finish(a1)
	a2 := startTask(t, s, "a", "slow", `{}`)
	finish(a2)
	if st := status(t, s, "a", a1); st.Status != taskCompleted {
		t.Fatalf("the first task, with room for both: %+v", st)
	}
	a3 := startTask(t, s, "a", "slow", `{}`)
	finish(a3)
	wantError(t, s, "a", "tasks/get", `{"taskId":"`+a1+`"}`, -32602, "not found")
	for _, id := range []string{a2, a3} {
		if st := status(t, s, "a", id); st.Status != taskCompleted {
			t.Errorf("task %s: %+v; want it kept", id, st)
		}
	}
	s.endOwner("a")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resultBytes != 0 || s.total != 0 {
		t.Errorf("with no task left, the store counts %d tasks and %d bytes of results", s.total, s.resultBytes)
	}
}
