package mcpserver

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/mcpserver/internal/guard"
	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/sandbox"
)

// TaskOptions bound the tasks of MCP 2025-11-25 (see taskStore). Zero
// values take the defaults noted.
type TaskOptions struct {
	// PerSession bounds the tasks one session holds, running or finished
	// and kept (default DefaultTasksPerSession).
	PerSession int
	// Total bounds the tasks every session holds together (default
	// DefaultTasks).
	Total int
	// MaxTTL bounds how long a task is kept from its creation, whatever
	// the client asks (default DefaultTaskMaxTTL). A task still running
	// when its time is up is cancelled.
	MaxTTL time.Duration
	// ResultBytes bounds the results the finished tasks keep, together
	// (default DefaultTaskResultBytes): past it, the oldest finished
	// tasks give way to the newest.
	ResultBytes int64
}

// Defaults for TaskOptions, and the time-to-live of a task whose client
// names none.
const (
	DefaultTasksPerSession = 64
	DefaultTasks           = 1024
	DefaultTaskMaxTTL      = time.Hour
	DefaultTaskTTL         = 10 * time.Minute
	// DefaultTaskResultBytes is 256 MiB: a result's JSON may be six times
	// the tool's output (each '<' or control byte is escaped as \u00XX),
	// so 1.5 MiB for the default 256 KiB, and DefaultTasks of those would
	// hold 1.5 GiB.
	DefaultTaskResultBytes = 256 << 20
)

// taskPollInterval is the polling interval suggested to clients.
const taskPollInterval = time.Second

// tasksPageSize is the number of tasks in one page of tasks/list.
const tasksPageSize = 50

// relatedTaskKey is the _meta key that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// Task statuses.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
	// taskInputRequired: a task of the extension whose run waits for the
	// client's answers to its asks (see taskAsker).
	taskInputRequired = "input_required"
)

// taskStore runs the tools/call requests that ask to be tasks and keeps
// them for their owners: a stdio connection, or a 2025-11-25 HTTP session.
// A task is found only through its owner, so no client can read or cancel
// another's, and every task ends with its owner. What the store holds is
// bounded by the number of tasks (per owner and in all) and by what each
// keeps: its result, which the tool's output limit bounds.
type taskStore struct {
	calls Caller
	tools func() *registry.Catalog
	opts  TaskOptions
	// replica begins every task id, as it begins session ids (see
	// Options.ReplicaID): a 2026-07-28 task lives in the replica that made
	// it, and its requests name it in Mcp-Name, for a balancer to route.
	replica string
	// states opens and seals the requestStates of askFirst tools' calls
	// (the Server's).
	states *stateSigner

	mu sync.Mutex
	// owners holds each owner's tasks, by id.
	owners map[string]map[string]*task
	// ended holds the owners that ended in the last endedMemory, and when:
	// a task request that found its session live just before it ended
	// would otherwise make a task no one ends.
	ended map[string]time.Time
	total int
	seq   uint64
	// resultBytes is what the tasks kept hold of results.
	resultBytes int64
}

// endedMemory is how long the store refuses tasks to an owner that ended,
// much longer than a request takes between finding its session and
// creating its task.
const endedMemory = time.Minute

// task is one tools/call run as a task.
type task struct {
	id      string
	seq     uint64 // creation order, for tasks/list
	created time.Time
	ttl     time.Duration
	modern  bool         // a task of the 2026-07-28 tasks extension
	notify  func([]byte) // taskCall.notify
	// ctx is the run's, which cancel ends.
	ctx    context.Context
	cancel context.CancelFunc
	expiry *time.Timer
	done   chan struct{} // closed once the status is terminal
	// returned is closed once the call has returned, which may be after
	// it was cancelled.
	returned chan struct{}

	// Guarded by the store's mu.
	status  string
	message string
	updated time.Time
	result  json.RawMessage // tasks/result's answer: a CallToolResult
	err     *jsonrpc.Error  // or the error the call ended with
	// input is what the run waits for the client to answer, while the
	// status is taskInputRequired.
	input *inputWait
}

// running reports whether t has not ended; the store's mu is held.
func (t *task) running() bool { return t.status == taskWorking || t.status == taskInputRequired }

func newTaskStore(calls Caller, tools func() *registry.Catalog, opts TaskOptions) *taskStore {
	if opts.PerSession <= 0 {
		opts.PerSession = DefaultTasksPerSession
	}
	if opts.Total <= 0 {
		opts.Total = DefaultTasks
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = DefaultTaskMaxTTL
	}
	if opts.ResultBytes <= 0 {
		opts.ResultBytes = DefaultTaskResultBytes
	}
	return &taskStore{calls: calls, tools: tools, opts: opts, owners: map[string]map[string]*task{}, ended: map[string]time.Time{}}
}

// taskRequest is a request the store answers, with what it needs of the
// transport: its owner's key, the SDK's session for the tool's reports (nil
// for none), and the context that bounds a blocking wait.
type taskRequest struct {
	ctx     context.Context
	owner   string
	session *mcp.ServerSession
	method  string
	params  json.RawMessage
	// notify, if set, writes a notification to the owner's transport
	// (taskCall.notify).
	notify func([]byte)
}

// handles reports whether the store answers a request of method with
// params: the tasks/* methods, a tools/call with a task member, and one
// without of a tool that runs only as a task, which is refused here, as the
// SDK would replace the message of the refusal with its own.
func (s *taskStore) handles(method string, params json.RawMessage) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	case "tools/call":
		if _, ok := guard.Member(params, "task"); ok {
			return true
		}
		var name string
		raw, ok := guard.Member(params, "name")
		if !ok || json.Unmarshal(raw, &name) != nil {
			return false
		}
		t, ok := s.tools().Lookup(name)
		return ok && t.Spec.Tasks() == abi.TaskRequired
	}
	return false
}

// answer answers r, which handles accepted. tasks/result waits until
// its task ends, or r.ctx does.
func (s *taskStore) answer(r taskRequest) (any, *jsonrpc.Error) {
	if r.method == "tools/call" {
		return s.create(r)
	}
	if r.method == "tasks/list" {
		var p struct {
			Cursor string `json:"cursor"`
		}
		if err := unmarshalParams(r.params, &p); err != nil {
			return nil, err
		}
		return s.list(r.owner, p.Cursor)
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if err := unmarshalParams(r.params, &p); err != nil {
		return nil, err
	}
	t, err := s.find(r.owner, p.TaskID, false)
	if err != nil {
		return nil, err
	}
	switch r.method {
	case "tasks/get":
		return s.state(t), nil
	case "tasks/cancel":
		return s.cancel(t)
	}
	select {
	case <-t.done:
	case <-r.ctx.Done():
		return nil, &jsonrpc.Error{Code: guard.CodeInternalError, Message: "the wait for the task's result ended before the task did; the task goes on: ask again with tasks/result, or poll with tasks/get"}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.err != nil {
		return nil, t.err
	}
	return t.result, nil
}

// callParams are the members of a tools/call the store reads.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Task      *struct {
		TTL *float64 `json:"ttl"`
	} `json:"task"`
	Meta struct {
		ProgressToken any `json:"progressToken"`
	} `json:"_meta"`
}

// create starts a task for a tools/call and returns its CreateTaskResult.
func (s *taskStore) create(r taskRequest) (any, *jsonrpc.Error) {
	var p callParams
	if err := unmarshalParams(r.params, &p); err != nil {
		return nil, err
	}
	if _, ok := guard.Member(r.params, "task"); !ok {
		return nil, &jsonrpc.Error{Code: guard.CodeMethodNotFound, Message: requiredRefusal(p.Name)}
	}
	if p.Task == nil {
		return nil, &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: `invalid params: "task" must be an object, such as {"ttl": 60000}`}
	}
	ttl := DefaultTaskTTL
	if p.Task.TTL != nil {
		if ms := *p.Task.TTL; ms < 0 || ms != math.Trunc(ms) {
			return nil, &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: "invalid params: task.ttl must be a whole number of milliseconds, 0 or more"}
		}
		ttl = time.Duration(min(*p.Task.TTL, float64(s.opts.MaxTTL.Milliseconds()))) * time.Millisecond
	}
	tool, ok := s.tools().Lookup(p.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q: tools/list names the tools this server has", p.Name)}
	}
	if tool.Spec.Tasks() == abi.TaskForbidden {
		return nil, &jsonrpc.Error{Code: guard.CodeMethodNotFound, Message: fmt.Sprintf("tool %q cannot run as a task (its execution.taskSupport is %q): call it without \"task\"", p.Name, abi.TaskForbidden)}
	}

	_, state, refusal := s.start(taskCall{owner: r.owner, session: r.session, tool: p.Name, args: p.Arguments, token: p.Meta.ProgressToken, ttl: ttl, notify: r.notify})
	if refusal != "" {
		return nil, &jsonrpc.Error{Code: guard.CodeInternalError, Message: "task not created: " + refusal}
	}
	return struct {
		Task any `json:"task"`
	}{state}, nil
}

// taskCall is a call to run as a task.
type taskCall struct {
	owner string
	// session gets the call's reports, with the task's key; nil for none.
	session *mcp.ServerSession
	tool    string
	args    json.RawMessage
	token   any // the progress token, if any
	ttl     time.Duration
	// modern: a task of the 2026-07-28 extension, whose tool error is a
	// completed task and whose call sends no reports (the extension has
	// none for tasks).
	modern bool
	// notify, if set, is given the notifications/tasks/status of the
	// task's end (see taskStore.ended).
	notify func([]byte)
	// need are the client capabilities the tool may ask for, and caps the
	// client's, for a task of the extension (see taskAsker).
	need []string
	caps *mcp.ClientCapabilities
	// gather, if set, asks for the run until the call becomes the task
	// (an askFirst tool's, see gathering).
	gather *gathering
}

// start runs c as a task, and returns it with its state as it was made
// (a task of no ttl may be gone by the time start returns), or says why
// not.
func (s *taskStore) start(c taskCall) (*task, taskState, string) {
	t, state, refusal := s.reserve(c)
	if refusal != "" {
		return nil, taskState{}, refusal
	}
	s.run(t, c)
	return t, state, ""
}

// reserve makes c's task, not yet running, and returns it with its state
// as it was made, or says why not. The store's bounds count running tasks
// and kept ones, but a finished task gives way, oldest first, to a new one
// rather than refuse it. A task reserved is run, or else unreserved.
func (s *taskStore) reserve(c taskCall) (*task, taskState, string) {
	owner := c.owner
	now := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{id: s.newID(), created: now, updated: now, ttl: c.ttl, modern: c.modern, notify: c.notify, ctx: ctx, cancel: cancel, done: make(chan struct{}), returned: make(chan struct{}), status: taskWorking}
	s.mu.Lock()
	defer s.mu.Unlock()
	if refusal := s.makeRoomLocked(owner); refusal != "" {
		cancel()
		return nil, taskState{}, refusal
	}
	tasks := s.owners[owner]
	if tasks == nil {
		tasks = map[string]*task{}
		s.owners[owner] = tasks
	}
	s.seq++
	t.seq = s.seq
	tasks[t.id] = t
	s.total++
	t.expiry = time.AfterFunc(c.ttl, func() { s.expire(owner, t) })
	return t, s.stateLocked(t), ""
}

// run runs c, reserved as t, in the background.
func (s *taskStore) run(t *task, c taskCall) {
	var meta mcp.Meta
	rep := sandbox.Reporter(noReports{})
	ask := sandbox.Asker(&taskAsker{store: s, t: t, need: c.need, caps: c.caps})
	if c.gather != nil {
		c.gather.then, ask = ask, c.gather
	}
	if !c.modern {
		meta = mcp.Meta{relatedTaskKey: map[string]string{"taskId": t.id}}
		rep = &clientReporter{ctx: t.ctx, session: c.session, token: c.token, tool: c.tool, meta: meta}
		ask = legacyTaskAsks{}
	}
	go func() {
		defer close(t.returned)
		res, err := s.calls.Call(t.ctx, c.tool, c.args, rep, ask)
		s.finish(t, res, err, meta)
	}()
}

// unreserve forgets owner's task t, reserved and never run.
func (s *taskStore) unreserve(owner string, t *task) {
	close(t.returned)
	s.drop(owner, t)
}

// drop forgets owner's task t, made for a call that did not become a task
// after all, and cancels its run if it runs. Nothing tells of it: no one
// was given its id.
func (s *taskStore) drop(owner string, t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.running() {
		t.notify = nil
		s.cancelLocked(t, "The call did not become a task.")
	}
	if s.owners[owner][t.id] == t {
		s.forgetLocked(owner, t)
	}
}

// noReports drops a call's reports.
type noReports struct{}

func (noReports) Log(int32, string)                 {}
func (noReports) Progress(float64, float64, string) {}

// makeRoomLocked makes room for one more task of owner, evicting the
// oldest finished task of owner when owner is at its bound and the oldest
// finished task of any owner when the store is, or says why there is no
// room; s.mu is held. Without it, finished tasks would hold the bounds
// against new ones until their ttl ran out.
func (s *taskStore) makeRoomLocked(owner string) string {
	if _, ended := s.ended[owner]; ended {
		return "the session has ended; start a new one"
	}
	// The clients of 2026-07-28 over HTTP are one owner, which no
	// session's share would fit: only the store's bound holds them.
	if owner != statelessOwner && len(s.owners[owner]) >= s.opts.PerSession {
		t := oldestFinished(s.owners[owner])
		if t == nil {
			return fmt.Sprintf("this session has its maximum of %d tasks running; cancel some, or wait for them to finish, then try again", s.opts.PerSession)
		}
		s.forgetLocked(owner, t)
	}
	if s.total >= s.opts.Total {
		var oldest *task
		var from string
		for o, tasks := range s.owners {
			if t := oldestFinished(tasks); t != nil && (oldest == nil || t.seq < oldest.seq) {
				oldest, from = t, o
			}
		}
		if oldest == nil {
			return fmt.Sprintf("the server has its maximum of %d tasks running; try again later", s.opts.Total)
		}
		s.forgetLocked(from, oldest)
	}
	return ""
}

// oldestFinished is the first made of the finished tasks, nil if none.
func oldestFinished(tasks map[string]*task) *task {
	var oldest *task
	for _, t := range tasks {
		if !t.running() && (oldest == nil || t.seq < oldest.seq) {
			oldest = t
		}
	}
	return oldest
}

// forgetLocked forgets owner's task t; s.mu is held.
func (s *taskStore) forgetLocked(owner string, t *task) {
	t.expiry.Stop()
	tasks := s.owners[owner]
	delete(tasks, t.id)
	s.total--
	s.resultBytes -= int64(len(t.result))
	if len(tasks) == 0 {
		delete(s.owners, owner)
	}
}

// requiredRefusal is the message refusing a call of tool, which runs only
// as a task, made without one.
func requiredRefusal(tool string) string {
	return fmt.Sprintf("tool %q runs only as a task (its execution.taskSupport is %q): call it with \"task\" in a 2025-11-25 session", tool, abi.TaskRequired)
}

// finish records the end of t's call, unless t was cancelled.
func (s *taskStore) finish(t *task, res *mcp.CallToolResult, callErr error, meta mcp.Meta) {
	var result json.RawMessage
	var rpcErr *jsonrpc.Error
	status, message := taskCompleted, ""
	if callErr != nil {
		status, message = taskFailed, callErr.Error()
		rpcErr = &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: callErr.Error()}
	} else {
		if res.IsError && !t.modern {
			// 2025-11-25 counts a tool's error result as a failed task;
			// the tasks extension keeps failed for JSON-RPC errors.
			status, message = taskFailed, "the tool reported an error: tasks/result has it"
		}
		if meta != nil {
			// The server's key, whatever the module wrote under it.
			if res.Meta == nil {
				res.Meta = mcp.Meta{}
			}
			maps.Copy(res.Meta, meta)
		}
		var err error
		if result, err = json.Marshal(res); err != nil {
			status, message = taskFailed, "the tool's result could not be encoded"
			rpcErr = &jsonrpc.Error{Code: guard.CodeInternalError, Message: fmt.Sprintf("encoding the tool's result: %v", err)}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !t.running() {
		return
	}
	t.status, t.message, t.err, t.updated = status, message, rpcErr, time.Now()
	s.keepResultLocked(t, result)
	close(t.done)
	s.endedLocked(t)
}

// keepResultLocked has t, which has just ended, keep result, and makes
// room for it within ResultBytes: the oldest finished tasks of any owner
// are forgotten first, as at the bound on tasks (makeRoomLocked), and t
// is kept whatever its size; s.mu is held.
func (s *taskStore) keepResultLocked(t *task, result json.RawMessage) {
	t.result = result
	s.resultBytes += int64(len(result))
	for s.resultBytes > s.opts.ResultBytes {
		var oldest *task
		var from string
		for o, tasks := range s.owners {
			for _, f := range tasks {
				if f != t && !f.running() && (oldest == nil || f.seq < oldest.seq) {
					oldest, from = f, o
				}
			}
		}
		if oldest == nil {
			return
		}
		s.forgetLocked(from, oldest)
	}
}

// endedLocked sends notifications/tasks/status of t, which has just
// ended, where its request's transport can carry it; s.mu is held. Only
// ends are told, as the revision allows ("may choose to only send them for
// certain status transitions"): they are what a client waits for. It is
// written in the background, so that a client slow to read holds up
// nothing of the store's, and at most once, as a task ends once.
func (s *taskStore) endedLocked(t *task) {
	if t.notify == nil {
		return
	}
	params, err := json.Marshal(s.stateLocked(t))
	if err != nil {
		return
	}
	msg := []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + string(params) + "}\n")
	go t.notify(msg)
}

// cancel cancels t, unless it has ended, and returns its state.
func (s *taskStore) cancel(t *task) (any, *jsonrpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !t.running() {
		return nil, &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: fmt.Sprintf("task %s has already ended (%s): there is nothing to cancel", t.id, t.status)}
	}
	s.cancelLocked(t, "The task was cancelled by request.")
	return s.stateLocked(t), nil
}

// cancelLocked ends t as cancelled; s.mu is held and t is running. Its
// result is what a cancelled call is told.
func (s *taskStore) cancelLocked(t *task, message string) {
	t.cancel()
	t.status, t.message, t.updated, t.input = taskCancelled, message, time.Now(), nil
	res := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: "The task was cancelled before it finished; call the tool again to run it."}},
		IsError: true,
		Meta:    mcp.Meta{relatedTaskKey: map[string]string{"taskId": t.id}},
	}
	result, _ := json.Marshal(res)
	s.keepResultLocked(t, result)
	close(t.done)
	s.endedLocked(t)
}

// expire forgets t once its time is up, cancelling it if it still runs.
func (s *taskStore) expire(owner string, t *task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners[owner][t.id] != t {
		return
	}
	if t.running() {
		s.cancelLocked(t, "The task's time to live ran out.")
	}
	s.forgetLocked(owner, t)
}

// endOwner cancels and forgets every task of owner, whose session has
// ended. It returns a channel closed once the calls it cancelled have
// returned.
func (s *taskStore) endOwner(owner string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	var running []*task
	// Out of the store first, so that making room for the results of
	// those cancelled here forgets none of them a second time.
	tasks := s.owners[owner]
	delete(s.owners, owner)
	for _, t := range tasks {
		if t.running() {
			t.notify = nil // there is no one to tell
			s.cancelLocked(t, "The session ended.")
			running = append(running, t)
		}
		t.expiry.Stop()
		s.total--
		s.resultBytes -= int64(len(t.result))
	}
	now := time.Now()
	for o, at := range s.ended {
		if now.Sub(at) > endedMemory {
			delete(s.ended, o)
		}
	}
	s.ended[owner] = now
	returned := make(chan struct{})
	go func() {
		for _, t := range running {
			<-t.returned
		}
		close(returned)
	}()
	return returned
}

// find returns owner's task id, of the extension if modern and of
// 2025-11-25 if not. A stdio connection owns the tasks of both revisions,
// but each revision sees only its own: their tasks end and answer
// differently.
func (s *taskStore) find(owner, id string, modern bool) (*task, *jsonrpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.owners[owner][id]; t != nil && t.modern == modern {
		return t, nil
	}
	// Another session's task is not found either: whether it exists is
	// not this client's to know.
	return nil, &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: fmt.Sprintf("task %q not found: it was never this client's, or it expired (its ttl), or it had finished and gave way to newer tasks", id)}
}

// list returns a page of owner's tasks of 2025-11-25, oldest first, from
// cursor.
func (s *taskStore) list(owner, cursor string) (any, *jsonrpc.Error) {
	var after uint64
	if cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cursor)
		if err == nil {
			after, err = strconv.ParseUint(string(raw), 10, 64)
		}
		if err != nil {
			return nil, &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: "invalid params: the cursor is not one tasks/list gave; start again without one"}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var page []*task
	var more bool
	for _, t := range s.owners[owner] {
		if t.seq > after && !t.modern {
			page = append(page, t)
		}
	}
	slices.SortFunc(page, func(a, b *task) int { return cmp.Compare(a.seq, b.seq) })
	if len(page) > tasksPageSize {
		page, more = page[:tasksPageSize], true
	}
	out := struct {
		Tasks      []any  `json:"tasks"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{Tasks: []any{}}
	for _, t := range page {
		out.Tasks = append(out.Tasks, s.stateLocked(t))
	}
	if more {
		out.NextCursor = base64.RawURLEncoding.EncodeToString(strconv.AppendUint(nil, page[len(page)-1].seq, 10))
	}
	return out, nil
}

// taskState is MCP's Task.
type taskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

func (s *taskStore) state(t *task) taskState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stateLocked(t)
}

func (s *taskStore) stateLocked(t *task) taskState {
	return taskState{
		TaskID:        t.id,
		Status:        t.status,
		StatusMessage: t.message,
		CreatedAt:     t.created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		TTL:           t.ttl.Milliseconds(),
		PollInterval:  taskPollInterval.Milliseconds(),
	}
}

// newID returns an id no one can guess, after the replica's id.
func (s *taskStore) newID() string {
	if s.replica == "" {
		return rand.Text()
	}
	return s.replica + "." + rand.Text()
}

// unmarshalParams decodes a request's params into v, or returns the
// invalid-params error that says why not.
func unmarshalParams(params json.RawMessage, v any) *jsonrpc.Error {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return &jsonrpc.Error{Code: guard.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	return nil
}

// taskResponse is the answer to r with id.
func (s *taskStore) taskResponse(id json.RawMessage, r taskRequest) []byte {
	result, rpcErr := s.answer(r)
	return rpcAnswer(id, result, rpcErr)
}

// rpcAnswer is the response to the request id: result, or rpcErr if set.
func rpcAnswer(id json.RawMessage, result any, rpcErr *jsonrpc.Error) []byte {
	if rpcErr == nil {
		out, err := json.Marshal(result)
		if err == nil {
			return guard.ResultResponse(id, out)
		}
		rpcErr = &jsonrpc.Error{Code: guard.CodeInternalError, Message: fmt.Sprintf("encoding the result: %v", err)}
	}
	return errorResponse(id, rpcErr)
}

// taskFields adds to the SDK's answers what it has no fields for: the tasks
// capability in an initialize result, when some tool of the catalog can run
// as a task, and each tool's execution in tools/list. Each result is
// wrapped in a type that embeds the SDK's, so that the SDK still takes it
// as its own, and whose field of the same name hides the embedded one in
// the JSON.
func taskFields(catalog func() *registry.Catalog) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch res := res.(type) {
			case *mcp.InitializeResult:
				if hasTaskTools(catalog()) {
					return &initializeWithTasks{InitializeResult: res, Capabilities: capabilitiesWithTasks{ServerCapabilities: res.Capabilities, Tasks: serverTasks}}, nil
				}
			case *mcp.DiscoverResult:
				// A fresh copy of the capabilities for each request.
				if hasTaskTools(catalog()) {
					res.Capabilities.AddExtension(tasksExtension, nil)
				}
			case *mcp.ListToolsResult:
				return listWithExecution(catalog(), res), nil
			}
			return res, nil
		}
	}
}

// hasTaskTools reports whether some tool of c may run as a task.
func hasTaskTools(c *registry.Catalog) bool {
	for _, t := range c.Tools {
		if t.Spec.Tasks() != abi.TaskForbidden {
			return true
		}
	}
	return false
}

// serverTasks is the tasks capability: tool calls, listed and cancelled.
var serverTasks = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

type initializeWithTasks struct {
	*mcp.InitializeResult
	Capabilities capabilitiesWithTasks `json:"capabilities"`
}

type capabilitiesWithTasks struct {
	*mcp.ServerCapabilities
	Tasks json.RawMessage `json:"tasks"`
}

type listToolsWithExecution struct {
	*mcp.ListToolsResult
	Tools []toolWithExecution `json:"tools"`
}

type toolWithExecution struct {
	*mcp.Tool
	Execution *abi.Execution `json:"execution,omitempty"`
}

// listWithExecution is res with each tool's execution, as its manifest
// declares it, less what is wasmcp's own (askFirst), which says how the
// server runs the tool and is no client's business.
func listWithExecution(c *registry.Catalog, res *mcp.ListToolsResult) *listToolsWithExecution {
	out := &listToolsWithExecution{ListToolsResult: res, Tools: make([]toolWithExecution, len(res.Tools))}
	for i, t := range res.Tools {
		out.Tools[i].Tool = t
		if spec, ok := c.Lookup(t.Name); ok && spec.Spec.Execution != nil {
			out.Tools[i].Execution = &abi.Execution{TaskSupport: spec.Spec.Execution.TaskSupport}
		}
	}
	return out
}
