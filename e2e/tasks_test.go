package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rpcPeer sends one JSON-RPC request and returns its reply, over some
// transport, in one session. The Go SDK's client has no tasks API, so the
// tasks tests speak raw JSON-RPC.
type rpcPeer func(method, params string) rpcReply

// tasksDir is a tool directory of the search_invoices example (its
// taskSupport is "optional") and task_spin, which spins until it is
// stopped and runs only as a task.
func tasksDir(t *testing.T) string {
	t.Helper()
	writeHostile(t)
	dir := t.TempDir()
	copyFile(t, filepath.Join(toolsDir, "search_invoices.wasm"), filepath.Join(dir, "search_invoices.wasm"))
	copyFile(t, filepath.Join(toolsDir, "loop.wasm"), filepath.Join(dir, "task_spin.wasm"))
	manifest := `{"abi":1,"tools":[{"name":"task_spin","description":"spins until stopped","inputSchema":{"type":"object"},
		"execution":{"taskSupport":"required"}}],"limits":{"timeout":"1h"}}`
	if err := os.WriteFile(filepath.Join(dir, "task_spin.manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stdioTaskPeer starts a stdio server on dir and initializes its session;
// end closes its input, and waits for it to exit. The peer passes over
// notifications to the reply (TestTaskStatusNotifications reads them).
func stdioTaskPeer(t *testing.T, dir string, extra ...string) (peer rpcPeer, s *server, init rpcReply, end func()) {
	p := startStdio(t, append([]string{"--tools", dir, "--log-level", "debug"}, extra...)...)
	next := 0
	peer = func(method, params string) rpcReply {
		t.Helper()
		next++
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, next, method, params))
		for {
			if r := p.recv(); r.Method == "" {
				return r
			}
		}
	}
	init = peer("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return peer, p.srv, init, func() {
		p.in.Close()
		if err := p.srv.cmd.Wait(); err != nil {
			t.Errorf("server exited with %v", err)
		}
	}
}

// httpTaskPeer starts a 2025-11-25 session with the HTTP server s; end
// deletes it.
func httpTaskPeer(t *testing.T, s *server) (peer rpcPeer, init rpcReply, end func()) {
	t.Helper()
	status, init, h := post(t, s.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
	if status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %+v", status, init)
	}
	header := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "Mcp-Protocol-Version": "2025-11-25"}
	post(t, s.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header)
	next := 0
	return func(method, params string) rpcReply {
			t.Helper()
			next++
			_, r, _ := post(t, s.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, next, method, params), header)
			return r
		}, init, func() {
			req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
			for k, v := range header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
}

// TestTaskRequestsOutOfTurn sends what a well-behaved client does not:
// tasks requests before initialize over stdio, and over HTTP a tasks/result
// too large to be held while it waits.
func TestTaskRequestsOutOfTurn(t *testing.T) {
	dir := tasksDir(t)
	p := startStdio(t, "--tools", dir)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`)
	wantCode(t, "tasks/list before initialize", p.recv(), -32600)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_invoices","arguments":{},"task":{}}}`)
	wantCode(t, "a task before initialize", p.recv(), -32600)

	s := startHTTPIn(t, dir)
	peer, _, _ := httpTaskPeer(t, s)
	huge := `{"taskId":"x","pad":"` + strings.Repeat("a", 32<<10) + `"}`
	wantCode(t, "a huge tasks/result", peer("tasks/result", huge), -32600)
	wantCode(t, "tasks/get after it", peer("tasks/get", taskParams("x")), -32602)
}

// TestTaskFlags serves tasks with bounds of the operator's.
func TestTaskFlags(t *testing.T) {
	peer, _, _, _ := stdioTaskPeer(t, tasksDir(t), "--max-tasks-per-session", "1", "--task-max-ttl", "1m")
	// task_spin runs until cancelled, so it holds the session's one place.
	if created := createTask(t, peer, `{"name":"task_spin","arguments":{},"task":{"ttl":3600000}}`); created.TTL != 60000 {
		t.Errorf("ttl %d; want --task-max-ttl, 60000", created.TTL)
	}
	r := peer("tools/call", `{"name":"search_invoices","arguments":{"startDate":"2026-01-01","endDate":"2026-01-31"},"task":{}}`)
	if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "maximum of 1 tasks running") {
		t.Errorf("a second task: %s %+v", r.Result, r.Error)
	}
}

// TestTasks runs tool calls as tasks over stdio and in HTTP sessions: the
// example search_invoices, whose result is kept, and task_spin, which only
// tasks/cancel stops. Another session sees none of them, and a flood of
// tasks meets the per-session bound.
func TestTasks(t *testing.T) {
	dir := tasksDir(t)
	httpServer := startHTTPIn(t, dir, "--log-level", "debug")
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			var peer, other rpcPeer
			var init rpcReply
			var end func()
			s := httpServer
			if tr == "stdio" {
				peer, s, init, _ = stdioTaskPeer(t, dir)
				other, _, _, _ = stdioTaskPeer(t, dir)
			} else {
				peer, init, _ = httpTaskPeer(t, s)
				other, _, _ = httpTaskPeer(t, s)
			}
			checkTasks(t, s, init, peer, other)

			// A session that ends cancels its tasks.
			if tr == "stdio" {
				peer, s, _, end = stdioTaskPeer(t, dir)
			} else {
				peer, _, end = httpTaskPeer(t, s)
			}
			s.stderr.reset()
			createTask(t, peer, `{"name":"task_spin","arguments":{},"task":{}}`)
			s.waitLog(t, "run started", "tool=task_spin")
			end()
			s.waitLog(t, "msg=call", "tool=task_spin", "outcome=cancelled")
		})
	}
}

func checkTasks(t *testing.T, s *server, init rpcReply, peer, other rpcPeer) {
	if !strings.Contains(string(init.Result), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Errorf("initialize declares no tasks capability: %s", init.Result)
	}
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	json.Unmarshal(peer("tools/list", `{}`).Result, &list)
	support := map[string]string{}
	for _, tool := range list.Tools {
		support[tool.Name] = tool.Execution.TaskSupport
	}
	if support["search_invoices"] != "optional" || support["task_spin"] != "required" {
		t.Errorf("tools/list task support: %v", support)
	}

	// The example, as a task asking to be kept far longer than the server
	// keeps any.
	search := `{"name":"search_invoices","arguments":{"startDate":"2026-01-01","endDate":"2026-01-31","status":"paid"},"task":{"ttl":1e15}}`
	created := createTask(t, peer, search)
	if created.TTL != 3600000 {
		t.Errorf("ttl %d; want the server's maximum, 3600000", created.TTL)
	}
	res := peer("tasks/result", taskParams(created.TaskID))
	if res.Error != nil || !strings.Contains(string(res.Result), `"total":2230.5`) || !strings.Contains(string(res.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+created.TaskID+`"}`) {
		t.Errorf("tasks/result = %s %+v", res.Result, res.Error)
	}
	if st := getTask(t, peer, created.TaskID); st.Status != "completed" {
		t.Errorf("after its result: %+v", st)
	}
	wantCode(t, "cancel of a finished task", peer("tasks/cancel", taskParams(created.TaskID)), -32602)

	// Arguments are checked as any call's: the task fails with the
	// validation's isError.
	bad := createTask(t, peer, `{"name":"search_invoices","arguments":{"startDate":"yesterday"},"task":{}}`)
	if res := peer("tasks/result", taskParams(bad.TaskID)); !strings.Contains(string(res.Result), `"isError":true`) {
		t.Errorf("tasks/result of bad arguments = %s %+v", res.Result, res.Error)
	}
	if st := getTask(t, peer, bad.TaskID); st.Status != "failed" {
		t.Errorf("task of bad arguments: %+v", st)
	}

	// A tool that runs only as a task, stopped by tasks/cancel.
	wantCode(t, "plain call of a task-only tool", peer("tools/call", `{"name":"task_spin","arguments":{}}`), -32601)
	spin := createTask(t, peer, `{"name":"task_spin","arguments":{},"task":{}}`)
	s.waitLog(t, "run started", "tool=task_spin")
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		wantCode(t, "another session's "+method, other(method, taskParams(spin.TaskID)), -32602)
	}
	if r := other("tasks/list", `{}`); string(r.Result) != `{"tasks":[]}` {
		t.Errorf("another session's tasks/list = %s", r.Result)
	}
	var cancelled taskStatus
	json.Unmarshal(peer("tasks/cancel", taskParams(spin.TaskID)).Result, &cancelled)
	if cancelled.Status != "cancelled" {
		t.Errorf("tasks/cancel = %+v", cancelled)
	}
	s.waitLog(t, "msg=call", "tool=task_spin", "outcome=cancelled")
	if st := getTask(t, peer, spin.TaskID); st.Status != "cancelled" {
		t.Errorf("after tasks/cancel: %+v", st)
	}

	// Many tasks, within the session's bound of 64 (TestTaskFlags meets
	// it), list in pages.
	for i := 3; i < 60; i++ {
		createTask(t, peer, search)
	}
	var page struct {
		Tasks      []taskStatus `json:"tasks"`
		NextCursor string       `json:"nextCursor"`
	}
	json.Unmarshal(peer("tasks/list", `{}`).Result, &page)
	if len(page.Tasks) != 50 || page.NextCursor == "" || page.Tasks[0].TaskID != created.TaskID {
		t.Errorf("tasks/list's first page: %d tasks, cursor %q", len(page.Tasks), page.NextCursor)
	}
	if r := peer("ping", `{}`); r.Error != nil {
		t.Errorf("after the flood, ping: %+v", r.Error)
	}
}

func wantCode(t *testing.T, name string, r rpcReply, code int) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Errorf("%s: %s %+v; want error %d", name, r.Result, r.Error, code)
	}
}

// taskStatus is the part of MCP's Task these tests check.
type taskStatus struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
	TTL    int64  `json:"ttl"`
}

func taskParams(id string) string { return `{"taskId":"` + id + `"}` }

func createTask(t *testing.T, peer rpcPeer, params string) taskStatus {
	t.Helper()
	r := peer("tools/call", params)
	var created struct {
		Task taskStatus `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &created); err != nil || r.Error != nil || created.Task.TaskID == "" || created.Task.Status != "working" {
		t.Fatalf("tools/call as a task: %s %+v", r.Result, r.Error)
	}
	return created.Task
}

func getTask(t *testing.T, peer rpcPeer, id string) taskStatus {
	t.Helper()
	var st taskStatus
	r := peer("tasks/get", taskParams(id))
	if err := json.Unmarshal(r.Result, &st); err != nil || r.Error != nil {
		t.Fatalf("tasks/get: %s %+v", r.Result, r.Error)
	}
	return st
}

// extensionPeer sends 2026-07-28 requests to s as a client does, with the
// routing headers (Mcp-Name: the tool's name or the taskId) and _meta
// whose clientCapabilities are caps; it returns the HTTP status too.
func extensionPeer(t *testing.T, s *server, caps string) func(method, name, params string, header ...string) (int, rpcReply) {
	next := 0
	return func(method, name, params string, header ...string) (int, rpcReply) {
		t.Helper()
		next++
		h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
		for i := 0; i+1 < len(header); i += 2 {
			h[header[i]] = header[i+1]
		}
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
		status, r, _ := post(t, s.url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s,%s}}`, next, method, params, meta), h)
		return status, r
	}
}

// extensionTask is the part of the tasks extension's Task these tests
// check.
type extensionTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result"`
}

// TestTasksExtension runs 2026-07-28's tasks (SEP-2663) over HTTP: the
// server advertises the extension and makes a task of each call of a tool
// that may run long, for a client that declares it; tasks/get inlines the
// result; tasks/cancel stops a task; a client without the extension gets
// a plain result, or -32021 for a tool that runs only as a task; the
// removed methods are -32601; and the routing headers must match.
func TestTasksExtension(t *testing.T) {
	s := startHTTPIn(t, tasksDir(t), "--log-level", "debug")
	tasks := `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	peer, plain := extensionPeer(t, s, tasks), extensionPeer(t, s, `{}`)
	decode := func(what string, p func(method, name, params string, header ...string) (int, rpcReply), method, name, params string) extensionTask {
		t.Helper()
		status, r := p(method, name, params)
		var task extensionTask
		if err := json.Unmarshal(r.Result, &task); err != nil || r.Error != nil || status != http.StatusOK {
			t.Fatalf("%s: %d %s %+v", what, status, r.Result, r.Error)
		}
		return task
	}

	_, discover := peer("server/discover", "", `"x":1`)
	if !strings.Contains(string(discover.Result), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("server/discover does not advertise the tasks extension: %s", discover.Result)
	}

	search := `"name":"search_invoices","arguments":{"startDate":"2026-01-01","endDate":"2026-01-31"}`
	created := decode("a call as a task", peer, "tools/call", "search_invoices", search)
	if created.ResultType != "task" || created.TaskID == "" || created.Status != "working" || created.TTLMs != 600000 || created.PollIntervalMs <= 0 {
		t.Fatalf("CreateTaskResult = %+v; want resultType task, working, ttlMs 600000", created)
	}
	var done extensionTask
	for done.Status == "" || done.Status == "working" {
		if done.Status != "" {
			time.Sleep(time.Duration(done.PollIntervalMs) * time.Millisecond) // as the task asks a client to
		}
		done = decode("tasks/get", peer, "tasks/get", created.TaskID, `"taskId":"`+created.TaskID+`"`)
	}
	if done.Status != "completed" || done.ResultType != "complete" || !strings.Contains(string(done.Result), "INV-2026-00") {
		t.Errorf("the finished task = %+v %s; want completed with the tool's result inlined", done, done.Result)
	}

	if res := decode("a call without the extension", plain, "tools/call", "search_invoices", search); res.ResultType != "complete" || res.TaskID != "" {
		t.Errorf("a call from a client without the extension = %+v; want a plain result", res)
	}
	if status, r := plain("tools/call", "task_spin", `"name":"task_spin","arguments":{}`); status != http.StatusBadRequest {
		t.Errorf("a task-only tool without the extension: HTTP %d", status)
	} else {
		wantCode(t, "a task-only tool without the extension", r, -32021)
	}

	spin := decode("task_spin as a task", peer, "tools/call", "task_spin", `"name":"task_spin","arguments":{}`)
	s.waitLog(t, "run started", "tool=task_spin")
	get := `"taskId":"` + spin.TaskID + `"`
	if ack := decode("tasks/update", peer, "tasks/update", spin.TaskID, get+`,"inputResponses":{"nobody":{}}`); ack.ResultType != "complete" {
		t.Errorf("tasks/update ack = %+v", ack)
	}
	if ack := decode("tasks/cancel", peer, "tasks/cancel", spin.TaskID, get); ack.ResultType != "complete" || ack.TaskID != "" {
		t.Errorf("tasks/cancel ack = %+v; want an empty result", ack)
	}
	s.waitLog(t, "msg=call", "tool=task_spin", "outcome=cancelled")
	if st := decode("tasks/get", peer, "tasks/get", spin.TaskID, get); st.Status != "cancelled" {
		t.Errorf("a cancelled task = %+v", st)
	}

	for _, c := range []struct {
		what           string
		status, code   int
		method, name   string
		params         string
		withoutTasks   bool
		headerOverride []string
	}{
		{"an unknown task", 400, -32602, "tasks/get", "nope", `"taskId":"nope"`, false, nil},
		{"a mismatched Mcp-Name", 400, -32020, "tasks/get", "other", get, false, nil},
		{"a mismatched Mcp-Method", 400, -32020, "tasks/get", spin.TaskID, get, false, []string{"Mcp-Method", "tasks/cancel"}},
		{"a mismatched protocol version", 400, -32020, "tasks/get", spin.TaskID, get, false, []string{"Mcp-Protocol-Version", "2025-11-25"}},
		{"a client without the extension", 400, -32021, "tasks/get", spin.TaskID, get, true, nil},
		{"tasks/result, removed", 404, -32601, "tasks/result", spin.TaskID, get, false, nil},
		{"tasks/list, removed", 404, -32601, "tasks/list", "", `"x":1`, false, nil},
	} {
		p := peer
		if c.withoutTasks {
			p = plain
		}
		status, r := p(c.method, c.name, c.params, c.headerOverride...)
		if status != c.status {
			t.Errorf("%s: HTTP %d; want %d", c.what, status, c.status)
		}
		wantCode(t, c.what, r, c.code)
	}

	// A 2025-11-25 session does not see the task.
	session, _, _ := httpTaskPeer(t, s)
	wantCode(t, "another owner's task", session("tasks/get", taskParams(created.TaskID)), -32602)
}

// TestTaskStatusNotifications: over stdio, the end of a 2025-11-25 task
// is told as notifications/tasks/status with the Task, whether the tool
// finished or the task was cancelled.
func TestTaskStatusNotifications(t *testing.T) {
	p := startStdio(t, "--tools", tasksDir(t))
	p.send(initialize)
	p.recv()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// reply reads lines until the reply to id, and returns it with the
	// status notifications read on the way.
	reply := func(id string) (rpcReply, []taskStatus) {
		t.Helper()
		var notes []taskStatus
		for {
			r := p.recv()
			if r.Method == "" && string(r.ID) == id {
				return r, notes
			}
			if r.Method == "notifications/tasks/status" {
				var st taskStatus
				if err := json.Unmarshal(r.Params, &st); err != nil {
					t.Fatalf("notifications/tasks/status params %s: %v", r.Params, err)
				}
				notes = append(notes, st)
			}
		}
	}
	taskOf := func(r rpcReply) string {
		t.Helper()
		var created struct {
			Task taskStatus `json:"task"`
		}
		if json.Unmarshal(r.Result, &created) != nil || created.Task.TaskID == "" {
			t.Fatalf("not a CreateTaskResult: %s %+v", r.Result, r.Error)
		}
		return created.Task.TaskID
	}

	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_invoices","arguments":{"startDate":"2026-01-01","endDate":"2026-01-31"},"task":{}}}`)
	created, _ := reply("1")
	search := taskOf(created)
	// tasks/result waits for the end, which is told before the result
	// or after it: the notification is written as the task ends.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"` + search + `"}}`)
	_, notes := reply("2")
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"task_spin","arguments":{},"task":{}}}`)
	r, more := reply("3")
	notes = append(notes, more...)
	spin := taskOf(r)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":"` + spin + `"}}`)
	_, more = reply("4")
	notes = append(notes, more...)
	// Each end once: read on until both are in, a round trip at a time.
	for i := 0; len(notes) < 2 && i < 100; i++ {
		p.send(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{}}`)
		_, more = reply("5")
		notes = append(notes, more...)
	}
	want := map[string]string{search: "completed", spin: "cancelled"}
	for _, n := range notes {
		if want[n.TaskID] != n.Status {
			t.Errorf("notifications/tasks/status %+v; want %s's to say %s", n, n.TaskID, want[n.TaskID])
		}
		delete(want, n.TaskID)
	}
	if len(want) != 0 || len(notes) != 2 {
		t.Errorf("notifications %+v; want one for each task's end", notes)
	}
}
