package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

var soak = flag.Duration("replica-soak", 0, "run TestReplicasBehindNginx's load this long after the kill, instead of its short default")

// process is a helper server this test starts (nginx, the registry), with
// its output kept for waiting on and for failure messages.
type process struct {
	cmd *exec.Cmd
	out *lockedBuffer
}

// startProcess runs name with args until the test ends, and waits until it
// writes a line holding every one of ready.
func startProcess(t *testing.T, ready []string, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, out: &lockedBuffer{}}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		seen := false
		for sc.Scan() {
			p.out.WriteString(sc.Text() + "\n")
			if !seen && containsAll(sc.Text(), ready) {
				seen = true
				close(found)
			}
		}
		if !seen {
			close(found)
		}
	}()
	select {
	case <-found:
	case <-time.After(time.Minute):
	}
	if !containsAll(p.out.String(), ready) {
		t.Fatalf("%s did not start (waited for %q):\n%s", name, ready, p.out.String())
	}
	return p
}

// startNginx runs deploy/nginx/wasmcp.conf, as shipped, in front of the
// three replicas, and returns its address.
func startNginx(t *testing.T, replicas []*server) string {
	t.Helper()
	conf, err := os.ReadFile("../deploy/nginx/wasmcp.conf")
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	site := strings.Replace(string(conf), "listen 8080;", "listen "+addr+";", 1)
	for i, r := range replicas {
		site = strings.ReplaceAll(site, fmt.Sprintf("wasmcp-r%d:8080", i+1), strings.TrimSuffix(strings.TrimPrefix(r.url, "http://"), "/mcp"))
	}
	if strings.Contains(site, "wasmcp-r1:") || strings.Contains(site, "listen 8080") {
		t.Fatalf("deploy/nginx/wasmcp.conf has addresses this test does not replace:\n%s", site)
	}
	dir := t.TempDir()
	// What Debian's nginx.conf has around its conf.d, in the test's own
	// directory.
	main := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log stderr notice;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/wasmcp.conf;
}
`, dir)
	for name, content := range map[string]string{"nginx.conf": main, "wasmcp.conf": site} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startProcess(t, []string{"start worker process"}, "nginx", "-p", dir, "-e", "stderr", "-c", filepath.Join(dir, "nginx.conf"))
	return "http://" + addr
}

// rpc posts one JSON-RPC request and returns its result, or why there is
// none: a transport error, a status other than 200, or a JSON-RPC error.
func rpc(ctx context.Context, url, body string, header map[string]string) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	var r rpcReply
	if err := json.Unmarshal(reply(resp.Header, raw), &r); err != nil {
		return nil, fmt.Errorf("%w: %s", err, raw)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	return r.Result, nil
}

// slugifyCall is a stateless (2026-07-28) call of slugify, which any
// replica may answer.
func slugifyCall(ctx context.Context, url, text string) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slugify","arguments":{"text":%q},%s}}`, text, modernMeta)
	res, err := rpc(ctx, url, body, modernCall("slugify"))
	if err != nil {
		return err
	}
	var out struct {
		IsError bool
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(res, &out); err != nil || out.IsError || len(out.Content) == 0 {
		return fmt.Errorf("slugify answered %s", res)
	}
	return nil
}

// rss is a process's resident set in bytes, from /proc.
func rss(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// outcome counts what a load worker saw.
type outcome struct {
	calls, failures, retried atomic.Int64
	mu                       sync.Mutex
	failed                   []string // why each failure failed, and where
}

func (o *outcome) fail(format string, a ...any) {
	o.failures.Add(1)
	o.mu.Lock()
	o.failed = append(o.failed, fmt.Sprintf(format, a...))
	o.mu.Unlock()
}

// TestReplicasBehindNginx runs three replicas behind deploy/nginx/wasmcp.conf
// and checks what running more than one process promises: a 2026-07-28
// call that asks the client is taken back by another replica; under mixed
// load (stateless calls round robin, 2025-11-25 sessions pinned to their
// replica) a replica killed with SIGKILL loses only the calls in flight on
// it, and those succeed when retried; a new version of a tool reaches every
// replica; memory stays flat.
func TestReplicasBehindNginx(t *testing.T) {
	key := filepath.Join(t.TempDir(), "state.key")
	if err := os.WriteFile(key, bytes.Repeat([]byte("k"), 32), 0o600); err != nil {
		t.Fatal(err)
	}
	// Every replica pulls two examples from a real registry, and the ask
	// modules and a task tool from a directory of its own.
	reg := startRegistry(t, freeAddr(t))
	ref := reg.ref("tools/slugify", "stable")
	first := reg.push(t, toolAs(t, "slugify", "slugify"), "slugify", ref)
	statsRef := reg.ref("tools/text_stats", "stable")
	stats := reg.push(t, toolAs(t, "text_stats", "text_stats"), "text_stats", statsRef)
	var replicas []*server
	for i := 1; i <= 3; i++ {
		dir := askDir(t)
		wattest.Write(t, dir, "echo", "job")
		sidecar(t, dir, "job", `{"abi":1,"tools":[{"name":"job","description":"may run as a task","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`)
		r := startHTTPIn(t, dir, "--log-level", "info", "--source", ref, "--source", statsRef, "--plain-http", reg.host,
			"--store", t.TempDir(), "--pull-interval", "200ms",
			"--replica-id", fmt.Sprintf("r%d", i), "--request-state-key-file", key)
		r.waitLog(t, "tool sources pulled and compiled: ready")
		r.waitLog(t, "pulled tool source", "digest="+first)
		r.waitLog(t, "pulled tool source", "digest="+stats)
		replicas = append(replicas, r)
	}
	lb := startNginx(t, replicas)
	ctx := t.Context()

	t.Run("stateless calls reach every replica", func(t *testing.T) {
		for i := range 6 {
			if err := slugifyCall(ctx, lb+"/mcp", fmt.Sprint("warm ", i)); err != nil {
				t.Fatal(err)
			}
			res, err := rpc(ctx, lb+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"text_stats","arguments":{"text":"one two"},`+modernMeta+`}}`, modernCall("text_stats"))
			if err != nil || !strings.Contains(string(res), "2") {
				t.Fatalf("text_stats: %s %v", res, err)
			}
		}
	})

	// The requestState r1 signs, r2 takes back: they share the key.
	t.Run("a call that asks the client is finished by another replica", func(t *testing.T) {
		res, err := rpc(ctx, replicas[0].url, modernAsk("ask", ""), modernCall("ask"))
		var first inputRequired
		if err != nil || json.Unmarshal(res, &first) != nil || first.RequestState == "" {
			t.Fatalf("r1: %s %v; want an InputRequiredResult", res, err)
		}
		answer := `,"requestState":"` + first.RequestState + `","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}`
		res, err = rpc(ctx, replicas[1].url, modernAsk("ask", answer), modernCall("ask"))
		var done inputRequired
		if err != nil || json.Unmarshal(res, &done) != nil || done.ResultType != "complete" || done.IsError {
			t.Fatalf("r2, with r1's requestState: %s %v; want the call finished", res, err)
		}
	})

	// A 2026-07-28 task lives in the replica that made it: its requests
	// name it in Mcp-Name, which nginx routes by.
	t.Run("a task's requests reach the replica that holds it", func(t *testing.T) {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		res, err := rpc(ctx, lb+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{"n":1},`+meta+`}}`, modernCall("job"))
		var task struct {
			ResultType, TaskID, Status string
		}
		if err != nil || json.Unmarshal(res, &task) != nil || task.ResultType != "task" || !strings.HasPrefix(task.TaskID, "r") {
			t.Fatalf("a call as a task: %s %v; want a task whose id names its replica", res, err)
		}
		// More requests than replicas: round robin would reach the others.
		for i := range 6 {
			res, err := rpc(ctx, lb+"/mcp", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+task.TaskID+`",`+meta+`}}`,
				map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get", "Mcp-Name": task.TaskID})
			if err != nil || !strings.Contains(string(res), task.TaskID) {
				t.Fatalf("tasks/get %d through the balancer: %s %v; want the task", i, res, err)
			}
		}
	})

	// Load: stateless workers, and session workers whose sessions nginx
	// pins by their id's replica prefix.
	const statelessWorkers, sessionWorkers = 4, 3
	var stateless, sessions outcome
	// progress has a token after each call, for waiting on a number of
	// them.
	progress := make(chan struct{}, 1)
	done := func(o *outcome) {
		o.calls.Add(1)
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	var killed atomic.Bool
	killDone := make(chan struct{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range statelessWorkers {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				afterKill := isClosed(killDone)
				err := slugifyCall(ctx, lb+"/mcp", fmt.Sprintf("worker %d call %d", w, n))
				done(&stateless)
				switch {
				case err == nil:
					continue
				case !killed.Load():
					stateless.fail("a call failed before the kill: %v", err)
					continue
				case afterKill:
					stateless.fail("a call sent after the kill failed: %v", err)
					continue
				}
				stateless.retried.Add(1)
				if err := slugifyCall(ctx, lb+"/mcp", "retry"); err != nil {
					stateless.fail("a retried call failed: %v", err)
				}
			}
		})
	}
	for w := range sessionWorkers {
		wg.Go(func() {
			connectSession := func() (*mcp.ClientSession, error) {
				c := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, nil)
				return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			}
			// Each worker holds a session on its own replica, so that the
			// kill ends one of them: round robin gets there in a few tries.
			var cs *mcp.ClientSession
			for try := 0; cs == nil; try++ {
				c, err := connectSession()
				switch {
				case err != nil:
					sessions.fail("connecting: %v", err)
					return
				case strings.HasPrefix(c.ID(), fmt.Sprintf("r%d.", w+1)):
					cs = c
				case try == 30:
					sessions.fail("30 sessions, none on replica r%d; the last: %q", w+1, c.ID())
					return
				default:
					c.Close()
				}
			}
			id := cs.ID()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": fmt.Sprint("session call ", n)}})
				done(&sessions)
				if err == nil && !res.IsError {
					continue
				}
				if !strings.HasPrefix(id, "r3.") {
					sessions.fail("session %s, on a replica that lives, failed: %v %+v", id, err, res)
					continue
				}
				// The session died with its replica: a new one, and the call again.
				cs.Close()
				if cs, err = connectSession(); err != nil {
					sessions.fail("reconnecting after %s was lost: %v", id, err)
					return
				}
				id = cs.ID()
				sessions.retried.Add(1)
				if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slugify", Arguments: map[string]any{"text": "retry"}}); err != nil || res.IsError {
					sessions.fail("a retried call in new session %s failed: %v %+v", cs.ID(), err, res)
				}
			}
		})
	}
	total := func() int64 { return stateless.calls.Load() + sessions.calls.Load() }
	waitCalls := func(n int64) {
		for total() < n {
			select {
			case <-progress:
			case <-time.After(time.Minute):
				t.Fatalf("%d calls in a minute; want %d", total(), n)
			}
		}
	}
	waitCalls(300)
	rssWarm := map[int]int64{}
	for i, r := range replicas {
		rssWarm[i] = rss(t, r.cmd.Process.Pid)
	}
	victim := replicas[2]
	atKill := total()
	killed.Store(true)
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.cmd.Wait()
	close(killDone)
	// A new version under the same tag reaches each replica that lives.
	v2 := toolAs(t, "slugify", "slugify")
	describeAs(t, v2, "slugify", "(v2) ")
	pushed := time.Now()
	second := reg.push(t, v2, "slugify", ref)
	for i, r := range replicas[:2] {
		r.waitLog(t, "pulled tool source", "digest="+second)
		t.Logf("replica r%d serves the new version %v after the push", i+1, time.Since(pushed).Round(time.Millisecond))
		res, err := rpc(ctx, r.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
		if err != nil || !strings.Contains(string(res), "(v2) ") {
			t.Errorf("replica r%d lists %s, %v after v2 was pulled; want the new description", i+1, res, err)
		}
		if err := slugifyCall(ctx, r.url, "after v2"); err != nil {
			t.Errorf("replica r%d, a call after v2: %v", i+1, err)
		}
	}

	if *soak > 0 {
		<-time.After(*soak)
	} else {
		waitCalls(total() + 300)
	}
	close(stop)
	wg.Wait()
	t.Logf("load: %d stateless calls, %d retried after the kill; %d session calls, %d retried in a new session; %d calls before the kill",
		stateless.calls.Load(), stateless.retried.Load(), sessions.calls.Load(), sessions.retried.Load(), atKill)
	for _, o := range []*outcome{&stateless, &sessions} {
		for _, f := range o.failed {
			t.Error(f)
		}
	}
	if n := stateless.retried.Load(); n > statelessWorkers {
		t.Errorf("%d stateless calls failed at the kill; at most %d (one a worker) were in flight", n, statelessWorkers)
	}

	for i, r := range replicas[:2] {
		now := rss(t, r.cmd.Process.Pid)
		t.Logf("replica r%d: RSS %d MiB after warm-up, %d MiB at the end", i+1, rssWarm[i]>>20, now>>20)
		if now > 2*rssWarm[i]+64<<20 {
			t.Errorf("replica r%d grew from %d to %d MiB under load", i+1, rssWarm[i]>>20, now>>20)
		}
	}
}

// describeAs begins the description of the first tool in the sidecar
// manifest of stem in dir with prefix: another version of the tool.
func describeAs(t *testing.T, dir, stem, prefix string) {
	t.Helper()
	sidecar := filepath.Join(dir, stem+".manifest.json")
	var m map[string]any
	if err := json.Unmarshal(mustRead(t, sidecar), &m); err != nil {
		t.Fatal(err)
	}
	tool := m["tools"].([]any)[0].(map[string]any)
	tool["description"] = prefix + tool["description"].(string)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	atomicWrite(t, sidecar, b)
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
