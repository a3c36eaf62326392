package mcpserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/registry"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// listOp is one step of a list-answer differential run.
type listOp struct {
	line    string
	request bool
	reload  int // > 0: change the catalog this way before the line
}

var (
	listParams = []string{``, `,"params":{}`, `,"params":{` + modernMeta + `}`, `,"params":{"cursor":"x"}`,
		`,"params":{"_meta":{"progressToken":1}}`, `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`,
		`,"params":null`, `,"params":{"cursor":` + "%q" + `}`}
	listMethodNames = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list", "ping"}
	initVersions    = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2026-07-28"}
)

// listOps makes a run from fuzz input: each byte picks a step.
func listOps(steps []byte, cursor string) []listOp {
	var ops []listOp
	for i, b := range steps {
		switch b % 8 {
		case 0:
			ops = append(ops, listOp{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				1000+i, initVersions[int(b/8)%len(initVersions)]), request: true})
		case 1:
			ops = append(ops, listOp{line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
		case 2:
			ops = append(ops, listOp{reload: 1 + int(b/8)%3})
		default:
			params := listParams[int(b/8)%len(listParams)]
			if strings.Contains(params, "%q") {
				params = fmt.Sprintf(params, cursor)
			}
			ops = append(ops, listOp{line: fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q%s}`,
				clientIDs[int(b)%len(clientIDs)], listMethodNames[int(b/4)%len(listMethodNames)], params), request: true})
		}
	}
	return ops
}

// runListOps sends each op's line to a server that answers list requests
// again from the SDK's answers and to one that leaves every request to
// the SDK, over one registry, and fails on any difference in the answers.
// stdioPair is two servers of reg over stdio, with opts: one with the lean
// paths, and one that leaves everything to the SDK (sdkOnly), for a
// differential test to send both the same.
func stdioPair(t *testing.T, reg *registry.Registry, calls Caller, opts Options) []*stdioPeer {
	lean, sdk := New(reg, calls, opts), New(reg, calls, opts)
	sdk.sdkOnly = true
	return []*stdioPeer{startStdioBare(t, lean), startStdioBare(t, sdk)}
}

// httpPair is stdioPair over HTTP.
func httpPair(t *testing.T, reg *registry.Registry, calls Caller) []*httptest.Server {
	lean, sdk := New(reg, calls, Options{Version: "test"}), New(reg, calls, Options{Version: "test"})
	sdk.sdkOnly = true
	servers := []*httptest.Server{httptest.NewServer(lean.HTTPHandler(HTTPOptions{})), httptest.NewServer(sdk.HTTPHandler(HTTPOptions{}))}
	for _, s := range servers {
		t.Cleanup(s.Close)
	}
	return servers
}

func runListOps(t *testing.T, ops []listOp) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "a_echo")
	manifest := func(desc string, extra string) string {
		return `{"abi":1,"tools":[{"name":"echo","description":"` + desc + `","inputSchema":{"type":"object"}}` + extra + `],
			"prompts":[{"name":"p","description":"` + desc + `","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}],
			"resources":[{"uri":"notes://a","name":"a","text":"` + desc + `"}],"resourceTemplates":[{"uriTemplate":"notes://{n}","name":"n"}]}`
	}
	write(t, filepath.Join(dir, "a_echo.manifest.json"), manifest("v0", ""))
	reg, d := openDir(t, dir)
	peers := stdioPair(t, reg, d, Options{Version: "test", ListChanged: true})
	for i, op := range ops {
		if op.reload > 0 {
			extra := ""
			if op.reload == 2 {
				extra = `,{"name":"echo2","description":"another","inputSchema":{"type":"object"}}`
			}
			write(t, filepath.Join(dir, "a_echo.manifest.json"), manifest(fmt.Sprintf("v%d-%d", i, op.reload), extra))
			if err := reg.Reload(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var answers [2]string
		for i, p := range peers {
			p.send(op.line)
			if op.request {
				answers[i] = p.answer()
			}
		}
		if got, want := answers[0], answers[1]; got != want {
			t.Fatalf("step %d, %s:\nanswered again: %s\nby the SDK:     %s", i, op.line, got, want)
		}
	}
}

// TestListAnswersAnswerAsTheSDKDoes runs a fixed session: lists before
// initialize, repeated lists (answered again), lists with other params,
// ids the SDK would not give back unchanged, a reload between two
// identical lists, and a second initialize under another revision.
func TestListAnswersAnswerAsTheSDKDoes(t *testing.T) {
	steps := []byte{3, 0, 1}
	for _, b := range []byte{3, 4, 3, 11, 3 + 8*2, 3 + 8*2, 3 + 8*5, 3 + 8*5, 7, 7, 5, 5, 6, 6} {
		steps = append(steps, b, b)
	}
	steps = append(steps, 2, 3, 3, 2+8, 3, 3, 8, 1, 3, 3, 2+16, 3, 3)
	ops := listOps(steps, "c")
	runListOps(t, ops)
	// The run must have answered lists again, or it compared nothing.
	answered := 0
	for _, op := range ops {
		if op.request && strings.Contains(op.line, "/list") {
			answered++
		}
	}
	if answered < 20 {
		t.Fatalf("only %d list requests in the run", answered)
	}
}

func FuzzListAnswers(f *testing.F) {
	f.Add([]byte{0, 1, 3, 3, 2, 3, 3}, "")
	f.Add([]byte{0, 1, 3, 11, 11, 19, 19, 0, 3, 3, 8, 3, 3}, "x")
	f.Add([]byte{3, 3, 0, 3, 3, 1, 59, 59, 2, 59}, "\u00e9\\")
	f.Fuzz(func(t *testing.T, steps []byte, cursor string) {
		if len(steps) > 64 {
			steps = steps[:64]
		}
		runListOps(t, listOps(steps, cursor))
	})
}

// httpListOp is a list request over HTTP, with header fields picked from
// the fuzz input.
var (
	httpAccepts  = []string{"application/json, text/event-stream", "application/json", "text/event-stream", ""}
	httpVersions = []string{"2026-07-28", "", "2025-11-25"}
	modernParams = []string{`{` + modernMeta + `}`, `{"cursor":"x",` + modernMeta + `}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, `{}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}`}
)

// runHTTPListOps is runListOps over Streamable HTTP: each step byte picks
// a list request's method, params, id and header fields, or a reload; the
// answers (status, header fields but Date, body) of a server that answers
// lists again and of one that leaves them to the SDK must not differ.
func runHTTPListOps(t *testing.T, steps []byte, cursor string) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "a_echo")
	manifest := func(desc string) string {
		return `{"abi":1,"tools":[{"name":"echo","description":"` + desc + `","inputSchema":{"type":"object"}}],
			"prompts":[{"name":"p","description":"` + desc + `","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}]}`
	}
	write(t, filepath.Join(dir, "a_echo.manifest.json"), manifest("v0"))
	reg, d := openDir(t, dir)
	servers := httpPair(t, reg, d)
	for i, b := range steps {
		if b%16 == 15 {
			write(t, filepath.Join(dir, "a_echo.manifest.json"), manifest(fmt.Sprintf("v%d", i)))
			if err := reg.Reload(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		method := listMethodNames[int(b)%4]
		params := modernParams[int(b/4)%len(modernParams)]
		if b%7 == 6 {
			params = fmt.Sprintf(`{"cursor":%q,%s}`, cursor, modernMeta)
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, clientIDs[int(b/2)%len(clientIDs)], method, params)
		header := http.Header{"Content-Type": {"application/json"}}
		if a := httpAccepts[int(b/8)%len(httpAccepts)]; a != "" {
			header.Set("Accept", a)
		}
		if v := httpVersions[int(b/32)%len(httpVersions)]; v != "" {
			header.Set("Mcp-Protocol-Version", v)
		}
		if b&64 == 0 {
			header.Set("Mcp-Method", method)
		}
		host := ""
		if b%5 == 4 {
			// A rebinding attempt, which the SDK refuses: so must an
			// answer given again.
			host = "attacker.example"
		}
		answers := [2]string{httpAnswer(t, servers[0], body, header, host), httpAnswer(t, servers[1], body, header, host)}
		if answers[0] != answers[1] {
			t.Fatalf("step %d, %s %v:\nanswered again: %s\nby the SDK:     %s", i, body, header, answers[0], answers[1])
		}
	}
}

func TestHTTPListAnswersAnswerAsTheSDKDoes(t *testing.T) {
	var steps []byte
	for b := range 255 {
		steps = append(steps, byte(b), byte(b))
	}
	runHTTPListOps(t, steps, "c")
}

func FuzzHTTPListAnswers(f *testing.F) {
	f.Add([]byte{0, 0, 15, 0, 0}, "")
	f.Add([]byte{1, 1, 9, 9, 33, 33, 70, 70}, "\u2028")
	f.Fuzz(func(t *testing.T, steps []byte, cursor string) {
		if len(steps) > 64 {
			steps = steps[:64]
		}
		runHTTPListOps(t, steps, cursor)
	})
}

// httpAnswer posts body to s with header (and Host, if not empty), and
// returns what came back: status, header fields but Date, and body.
func httpAnswer(t *testing.T, s *httptest.Server, body string, header http.Header, host string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	if host != "" {
		req.Host = host
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	resp.Header.Del("Date")
	return fmt.Sprintf("%d %v\n%s", resp.StatusCode, resp.Header, got)
}
