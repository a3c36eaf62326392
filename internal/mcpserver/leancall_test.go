package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// leanTestDir is a tool directory with a tool of each outcome: echo
// (answers its arguments), shout (logs at level error), fail (exits 3),
// trap, ctl (writes control characters, which JSON escapes), task_optional
// and task_required (which may or must run as tasks), and header, which
// the SDK refuses.
func leanTestDir(t *testing.T) string {
	dir := t.TempDir()
	for _, m := range []struct{ module, tool, file string }{
		{"echo", "echo", "a_echo"}, {"shout", "shout", "shout"}, {"fail", "fail", "fail"},
		{"trap", "trap", "trap"}, {"ctlbytes", "ctl", "ctl"},
	} {
		wattest.Write(t, dir, m.module, m.file)
		write(t, filepath.Join(dir, m.file+".manifest.json"), fmt.Sprintf(`{"abi":1,"tools":[{"name":%q,"description":"d <&>","inputSchema":{"type":"object"}}]}`, m.tool))
	}
	for _, support := range []string{"optional", "required"} {
		wattest.Write(t, dir, "echo", "task_"+support)
		write(t, filepath.Join(dir, "task_"+support+".manifest.json"), fmt.Sprintf(`{"abi":1,"tools":[{"name":"task_%s","description":"may run as a task","inputSchema":{"type":"object"},"execution":{"taskSupport":%q}}]}`, support, support))
	}
	wattest.Write(t, dir, "echo", "b_header")
	write(t, filepath.Join(dir, "b_header.manifest.json"), `{"abi":1,"tools":[{"name":"header","description":"bad header annotation",
		"inputSchema":{"type":"object","properties":{"x":{"type":"object","x-mcp-header":"X"}}}}]}`)
	return dir
}

var (
	leanNames = []string{`"echo"`, `"shout"`, `"fail"`, `"trap"`, `"ctl"`, `"header"`, `"nope"`, `"\u0065cho"`, `7`, `"task_optional"`, `"task_required"`}
	leanArgs  = []string{``, `,"arguments":{}`, `,"arguments":{"n":40,"t":"<&>\u2028é"}`, `,"arguments":[]`, `,"arguments":null`,
		`,"arguments":{"n":3},"arguments":{"n":4}`, `,"arguments":{"a":`}
	leanMetas = []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{"listChanged":true}},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":"x"}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`,
		`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
	}
)

// leanOps makes a run from fuzz input: each byte picks a step.
func leanOps(steps []byte) []string {
	var lines []string
	for i, b := range steps {
		switch b % 16 {
		case 0:
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, 1000+i),
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		case 1:
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"logging/setLevel","params":{"level":"debug"}}`, 1000+i))
		case 2:
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{%s}}`, 1000+i, modernMeta))
		default:
			name := leanNames[int(b/16)%len(leanNames)]
			args := leanArgs[int(b)%len(leanArgs)]
			meta := leanMetas[int(b/4)%len(leanMetas)]
			lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%s%s,"_meta":%s}}`,
				clientIDs[int(b/8)%len(clientIDs)], name, args, meta))
		}
	}
	return lines
}

// createdTaskFields are the members of a CreateTaskResult that differ between
// servers.
var createdTaskFields = regexp.MustCompile(`"(taskId|createdAt|lastUpdatedAt)":"[^"]*"`)

// runLeanOps sends each line to a server with the lean call path and to
// one that leaves every request to the SDK, over one registry, and fails
// on any difference in what each request draws: its answer and the
// notifications written before it.
func runLeanOps(t *testing.T, lines []string) {
	reg, d := openDir(t, leanTestDir(t))
	peers := stdioPair(t, reg, d, Options{Version: "test"})
	for i, line := range lines {
		var got [2]string
		for j, p := range peers {
			p.send(line)
			if !strings.Contains(line, `"id"`) {
				continue
			}
			// A task made of the call is the server's own, with an id and
			// times of its own.
			got[j] = createdTaskFields.ReplaceAllString(p.until(), `"$1":"…"`)
		}
		if got[0] != got[1] {
			t.Fatalf("step %d, %s:\nlean: %s\nSDK:  %s", i, line, got[0], got[1])
		}
	}
}

// TestLeanCallsAnswerAsTheSDKDoes runs every tool, argument and _meta
// variant before any request of the session, after a 2026-07-28 one, and
// after an initialize and a log level.
func TestLeanCallsAnswerAsTheSDKDoes(t *testing.T) {
	var steps []byte
	for _, prefix := range [][]byte{nil, {2}, {0, 1}} {
		steps = append(steps, prefix...)
		for b := 3; b < 256; b++ {
			if b%16 > 2 {
				steps = append(steps, byte(b))
			}
		}
	}
	runLeanOps(t, leanOps(steps))
}

func FuzzLeanCalls(f *testing.F) {
	f.Add([]byte{2, 3, 19, 35, 51, 67, 83})
	f.Add([]byte{0, 1, 3, 4, 5, 6, 7})
	f.Fuzz(func(t *testing.T, steps []byte) {
		if len(steps) > 48 {
			steps = steps[:48]
		}
		runLeanOps(t, leanOps(steps))
	})
}

// A call on the lean path is cancelled by notifications/cancelled, as the
// SDK's are: it draws no answer (uncancelled, it would draw one when its
// time limit ends it, well within the drain), and gives its share of the
// budget back, so that ServeStdio ends at end of input.
func TestLeanCallIsCancelled(t *testing.T) {
	testCallIsCancelled(t, false)
}

// A call the SDK answers is cancelled as one on the lean path is: it
// draws no answer, as the revisions say a cancelled request should not,
// though the SDK writes the answer of a handler that returns after the
// cancellation (an error of code 0, "context canceled", or the tool's
// cancelled result).
func TestSDKCallIsCancelled(t *testing.T) {
	testCallIsCancelled(t, true)
}

func testCallIsCancelled(t *testing.T, sdkOnly bool) {
	out := cancelCalls(t, sdkOnly, []string{`"spin"`}, `{"requestId":"spin"}`)
	if !strings.Contains(out, `"id":2,`) || strings.Contains(out, `"spin"`) {
		t.Errorf("after the cancellation, the server wrote %s; want the list's answer alone", out)
	}
}

// cancelCalls serves calls of a tool that spins for its time limit of a
// second, one under each of ids, then a notifications/cancelled with
// params and a tools/list of id 2, and returns what the server writes
// from then to the end of input, once the calls not cancelled have ended.
func cancelCalls(t *testing.T, sdkOnly bool, ids []string, params string) string {
	dir := t.TempDir()
	wattest.Write(t, dir, "loop", "loop")
	write(t, filepath.Join(dir, "loop.manifest.json"), `{"abi":1,"tools":[{"name":"loop","description":"spins","inputSchema":{"type":"object"}}],"limits":{"timeout":"1s"}}`)
	s := serveDir(t, dir, Options{Version: "test"})
	s.sdkOnly = sdkOnly
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(context.Background(), inR, outW, StdioOptions{DrainTimeout: time.Minute})
		outW.Close()
	}()
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReader(outR)}
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`)
	p.answer()
	for _, id := range ids {
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"loop","arguments":{},` + modernMeta + `}}`)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + modernMeta + `}}`)
	inW.Close()
	rest, _ := io.ReadAll(p.out)
	if err := <-done; err != nil {
		t.Errorf("ServeStdio = %v", err)
	}
	return string(rest)
}

// runHTTPLeanOps is runLeanOps over Streamable HTTP: each step byte picks
// a call's tool, arguments, _meta, id and header fields; each request is
// sent twice in a row, so that the second may take the lean path, and the
// answers (status, header fields but Date, body) of a server with the lean
// path and of one that leaves every request to the SDK must not differ.
func runHTTPLeanOps(t *testing.T, steps []byte) {
	reg, d := openDir(t, leanTestDir(t))
	servers := httpPair(t, reg, d)
	for i, b := range steps {
		name := leanNames[int(b/16)%len(leanNames)]
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%s%s,"_meta":%s}}`,
			clientIDs[int(b/8)%len(clientIDs)], name, leanArgs[int(b)%len(leanArgs)], leanMetas[int(b/4)%len(leanMetas)])
		header := http.Header{"Content-Type": {"application/json"}, "Mcp-Method": {"tools/call"}}
		if a := httpAccepts[int(b/2)%len(httpAccepts)]; a != "" {
			header.Set("Accept", a)
		}
		if v := httpVersions[int(b/32)%len(httpVersions)]; v != "" {
			header.Set("Mcp-Protocol-Version", v)
		}
		switch b % 3 {
		case 0:
			header.Set("Mcp-Name", strings.Trim(name, `"`))
		case 1:
			header.Set("Mcp-Name", "echo")
		}
		for round := range 2 {
			answers := [2]string{httpAnswer(t, servers[0], body, header, ""), httpAnswer(t, servers[1], body, header, "")}
			if answers[0] != answers[1] {
				t.Fatalf("step %d, round %d, %s %v:\nlean: %s\nSDK:  %s", i, round, body, header, answers[0], answers[1])
			}
		}
	}
}

func TestHTTPLeanCallsAnswerAsTheSDKDoes(t *testing.T) {
	var steps []byte
	for b := range 256 {
		steps = append(steps, byte(b))
	}
	runHTTPLeanOps(t, steps)
}

func FuzzHTTPLeanCalls(f *testing.F) {
	f.Add([]byte{0, 3, 48, 96})
	f.Fuzz(func(t *testing.T, steps []byte) {
		if len(steps) > 32 {
			steps = steps[:32]
		}
		runHTTPLeanOps(t, steps)
	})
}

// A client may use an id again as soon as it has its answer: a call on the
// lean path frees its id only once nothing of it answers to the id any
// more, so that the next call under the id is neither cancelled nor
// forgotten by the one before (a race -race found).
func TestLeanCallsReuseAnID(t *testing.T) {
	p := startStdioBare(t, serveDir(t, leanTestDir(t), Options{Version: "test"}))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`)
	p.answer()
	for i := range 200 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":%d},%s}}`, i, modernMeta))
		if got := p.answer(); !strings.Contains(got, fmt.Sprintf(`{\"n\":%d}`, i)) {
			t.Fatalf("call %d under id 7: %s", i, got)
		}
	}
}

// The SDK checks a call's Mcp-Param-* header fields against its arguments
// (SEP-2243), so that an intermediary that reads the fields reads what the
// tool gets: a call whose arguments say otherwise than the header fields
// of an earlier call of the same tool is refused, on the lean path too.
func TestHTTPLeanCallChecksParamHeaders(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "acct")
	write(t, filepath.Join(dir, "acct.manifest.json"), `{"abi":1,"tools":[{"name":"acct","description":"d",
		"inputSchema":{"type":"object","properties":{"account":{"type":"string","x-mcp-header":"Account"}}}}]}`)
	reg, d := openDir(t, dir)
	servers := httpPair(t, reg, d)
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Mcp-Method": {"tools/call"}, "Mcp-Name": {"acct"}, "Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Param-Account": {"mine"}}
	for i, account := range []string{"mine", "mine", "theirs"} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"acct","arguments":{"account":%q},%s}}`, i, account, modernMeta)
		got, want := httpAnswer(t, servers[0], body, header, ""), httpAnswer(t, servers[1], body, header, "")
		if got != want {
			t.Fatalf("call %d, account %q:\nlean: %s\nSDK:  %s", i, account, got, want)
		}
	}
}

// A cancellation names its request as the SDK reads it: by the member
// requestId alone, its name compared exactly, so that one whose other
// member differs only in case cancels the request it names, and not the
// other.
func TestLeanCallIsCancelledByTheIDTheSDKReads(t *testing.T) {
	out := cancelCalls(t, false, []string{`"cancelled"`, `"kept"`}, `{"requestId":"cancelled","RequestId":"kept"}`)
	if !strings.Contains(out, `"id":"kept"`) || strings.Contains(out, `"id":"cancelled"`) {
		t.Errorf("after the cancellation, the server wrote %s; want the answer to the call not cancelled, and none to the one cancelled", out)
	}
}
