package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// askDir is a tool directory with the WAT modules that ask the client:
// ask (once, with a 1 s time limit), askloop (for ever), askall (two
// things at once), asksample (for sampling), and askprompt, whose prompt
// asks.
func askDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range []struct{ name, timeout string }{{"ask", "1s"}, {"askloop", "30s"}} {
		wattest.Write(t, dir, m.name, m.name)
		sidecar(t, dir, m.name, fmt.Sprintf(`{"abi":1,"tools":[{"name":%q,"description":"asks the client","inputSchema":{"type":"object"},"client":["elicitation"]}],
			"limits":{"timeout":%q,"memory":"16MiB","output":"64KiB"}}`, m.name, m.timeout))
	}
	wattest.Write(t, dir, "askall", "askall")
	sidecar(t, dir, "askall", `{"abi":1,"tools":[{"name":"askall","description":"asks the client two things at once","inputSchema":{"type":"object"},"client":["elicitation","roots"]}]}`)
	wattest.Write(t, dir, "asksample", "asksample")
	sidecar(t, dir, "asksample", `{"abi":1,"tools":[{"name":"asksample","description":"asks the client's model","inputSchema":{"type":"object"},"client":["sampling"]}]}`)
	wattest.Write(t, dir, "askprompt", "askprompt")
	sidecar(t, dir, "askprompt", `{"abi":1,"prompts":[{"name":"askprompt","description":"asks the client for a topic","client":["elicitation"]}]}`)
	return dir
}

func TestAskAllAsksAtOnce(t *testing.T) {
	s := startHTTPIn(t, askDir(t))
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			var asks atomic.Int32
			opts := elicitingClient(&asks, func(context.Context) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept"} })
			client := connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, v, s, opts)
			res := callTool(t, client, "askall", map[string]any{})
			const want = "02\n" + `{"a":{"action":"accept"},"b":{"roots":[]}}`
			if res.IsError || text(res) != want {
				t.Fatalf("askall = %q (isError %v); want %q", text(res), res.IsError, want)
			}
			if n := asks.Load(); n != 1 {
				t.Errorf("the user was asked %d times; want once", n)
			}
		})
	}
}

func TestPromptAsksTheClient(t *testing.T) {
	s := startHTTPIn(t, askDir(t))
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			var asks atomic.Int32
			cs := connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, v, s,
				elicitingClient(&asks, func(context.Context) *mcp.ElicitResult {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"topic": "tea"}}
				}))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "askprompt"})
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := res.Messages[0].Content.(*mcp.TextContent); len(res.Messages) != 1 || !ok || tc.Text != "asked and answered" {
				t.Errorf("prompts/get = %+v; want the module's message", res.Messages)
			}
			if n := asks.Load(); n != 1 {
				t.Errorf("the client was asked %d times; want once", n)
			}
			// A client that cannot elicit is refused before the module runs.
			plain := connect(t, &mcp.StreamableClientTransport{Endpoint: s.url}, v, s)
			_, err = plain.GetPrompt(ctx, &mcp.GetPromptParams{Name: "askprompt"})
			if err == nil || !strings.Contains(err.Error(), "prompt askprompt needs the client capability elicitation, which the client did not declare") {
				t.Errorf("prompts/get from a client without elicitation: %v", err)
			}
		})
	}
}

// TestSamplingAsksTheClient has the SDK's client answer a tool's
// sampling/createMessage, on each revision and transport: the answer
// reaches the tool whole, and a request the revision does not allow never
// reaches the client. A client that does not declare sampling is refused
// before the tool runs, even if it declares elicitation.
func TestSamplingAsksTheClient(t *testing.T) {
	dir := askDir(t)
	var mu sync.Mutex
	var asked []string
	opts := &mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		mu.Lock()
		defer mu.Unlock()
		var prompt string
		if len(req.Params.Messages) > 0 {
			if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
				prompt = tc.Text
			}
		}
		asked = append(asked, fmt.Sprintf("%s (%d tokens)", prompt, req.Params.MaxTokens))
		return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "teal"}, Model: "e2e-model", StopReason: "endTurn"}, nil
	}}
	t.Run("sampling", func(t *testing.T) {
		forEachClientOf(t, dir, nil, opts, func(t *testing.T, cs *mcp.ClientSession, _ string) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			res := callTool(t, cs, "asksample", map[string]any{})
			codes, answer, _ := strings.Cut(text(res), "\n")
			var got struct {
				Role, Model, StopReason string
				Content                 struct{ Type, Text string }
			}
			if res.IsError || codes != "002" || json.Unmarshal([]byte(answer), &got) != nil ||
				got.Role != "assistant" || got.Content.Type != "text" || got.Content.Text != "teal" || got.Model != "e2e-model" || got.StopReason != "endTurn" {
				t.Fatalf("asksample = %q (isError %v); want codes 002 and the client's answer", text(res), res.IsError)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(asked, []string{"Name a colour. (10 tokens)"}) {
				t.Errorf("the client was asked %q; want the tool's one valid request", asked)
			}
		})
	})
	t.Run("without sampling", func(t *testing.T) {
		// Declaring another capability the server could ask for is no help.
		decline := elicitingClient(new(atomic.Int32), func(context.Context) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} })
		forEachClientOf(t, dir, nil, decline, func(t *testing.T, cs *mcp.ClientSession, version string) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "asksample", Arguments: map[string]any{}})
			wantMissingCapability(t, version, res, err, "tool asksample needs the client capability sampling, which the client did not declare")
		})
	})
}

// elicitingClient declares elicitation and answers each ask with answer,
// counting them.
func elicitingClient(asks *atomic.Int32, answer func(ctx context.Context) *mcp.ElicitResult) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asks.Add(1)
		return answer(ctx), nil
	}}
}

// modernAsk is a 2026-07-28 tools/call of tool from a client that
// declares elicitation, with the given params members added.
func modernAsk(tool, more string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + more +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
}

// inputRequired is what the tests read of an InputRequiredResult.
type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	IsError       bool                       `json:"isError"`
	Content       []struct{ Text string }    `json:"content"`
}

func TestAskInALoopIsStopped(t *testing.T) {
	s := startHTTPIn(t, askDir(t))
	const want = "asked the client more than 16 times in one call and was stopped"
	t.Run("2025-11-25", func(t *testing.T) {
		var asks atomic.Int32
		cs := connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, "2025-11-25", s,
			elicitingClient(&asks, func(context.Context) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }))
		res := callTool(t, cs, "askloop", map[string]any{})
		if !res.IsError || !strings.Contains(text(res), want) {
			t.Fatalf("askloop = %q (isError %v); want %q", text(res), res.IsError, want)
		}
		if n := asks.Load(); n != 16 {
			t.Errorf("the client was asked %d times; want 16", n)
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		// Each retry runs the tool again with one answer more: the 17th
		// run, which asks a 17th time, is stopped.
		more := ""
		for round := 1; ; round++ {
			_, r, _ := post(t, s.url, modernAsk("askloop", more), modernCall("askloop"))
			var res inputRequired
			if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
				t.Fatalf("round %d: %s %+v", round, r.Result, r.Error)
			}
			if res.ResultType == "complete" {
				if round != 17 || !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, want) {
					t.Fatalf("round %d: %s; want the 17th to fail with %q", round, r.Result, want)
				}
				return
			}
			id := fmt.Sprintf("ask-%d", round)
			if res.ResultType != "input_required" || len(res.InputRequests) != 1 || res.InputRequests[id] == nil || res.RequestState == "" {
				t.Fatalf("round %d: %s; want one input request %s", round, r.Result, id)
			}
			more = fmt.Sprintf(`,"inputResponses":{%q:{"action":"decline"}},"requestState":%q`, id, res.RequestState)
		}
	})
}

func TestAnswerAfterTheTimeLimitIsDropped(t *testing.T) {
	s := startHTTPIn(t, askDir(t))
	var asks atomic.Int32
	late := make(chan struct{})
	cs := connectWith(t, &mcp.StreamableClientTransport{Endpoint: s.url}, "2025-11-25", s,
		elicitingClient(&asks, func(ctx context.Context) *mcp.ElicitResult {
			// The answer comes once the server gave up on it, or once the
			// call has ended without it.
			select {
			case <-ctx.Done():
			case <-late:
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}
		}))
	res := callTool(t, cs, "ask", map[string]any{})
	close(late)
	const want = "the tool ran longer than its 1s time limit and was stopped"
	if !res.IsError || !strings.Contains(text(res), want) {
		t.Fatalf("ask = %q (isError %v); want %q", text(res), res.IsError, want)
	}
	// The session goes on: the next call is asked, and answered, afresh.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("the session after a late answer: %v", err)
	}
}

func TestRequestStateIsChecked(t *testing.T) {
	s := startHTTPIn(t, askDir(t))
	// ask is the first call: each state is good for one retry.
	ask := func(t *testing.T) inputRequired {
		t.Helper()
		_, r, _ := post(t, s.url, modernAsk("ask", ""), modernCall("ask"))
		var first inputRequired
		if r.Error != nil || json.Unmarshal(r.Result, &first) != nil || first.ResultType != "input_required" || first.InputRequests["confirm"] == nil {
			t.Fatalf("first call: %s %+v; want an input request named confirm", r.Result, r.Error)
		}
		return first
	}
	first := ask(t)
	var params struct {
		Method string `json:"method"`
		Params struct {
			Mode, Message string
		} `json:"params"`
	}
	if json.Unmarshal(first.InputRequests["confirm"], &params) != nil || params.Method != "elicitation/create" || params.Params.Mode != "form" || params.Params.Message != "ok?" {
		t.Errorf("input request = %s; want the module's form elicitation", first.InputRequests["confirm"])
	}
	body, sig, _ := strings.Cut(first.RequestState, ".")
	flipped := []byte(body)
	flipped[len(flipped)/2] ^= 1
	for _, tc := range []struct {
		name, tool, more string
		want             string
	}{
		{"forged", "ask", `,"requestState":"e30.AAAA"`, "was not issued by this server, or was altered"},
		{"tampered", "ask", `,"requestState":"` + string(flipped) + "." + sig + `"`, "was not issued by this server, or was altered"},
		{"oversized", "ask", `,"requestState":"` + strings.Repeat("a", 300<<10) + `"`, "over the 256 KiB this server issues"},
		{"another tool", "askloop", `,"requestState":"` + first.RequestState + `"`, "issued for tool ask, not tool askloop"},
		{"oversized answer", "ask", `,"requestState":"` + first.RequestState + `","inputResponses":{"confirm":{"action":"accept","content":{"x":"` + strings.Repeat("a", 70<<10) + `"}}}`, `inputResponses["confirm"] is`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, r, _ := post(t, s.url, modernAsk(tc.tool, tc.more), modernCall(tc.tool))
			if r.Error == nil || r.Error.Code != -32602 || status != 400 || !strings.Contains(r.Error.Message, tc.want) {
				t.Fatalf("HTTP %d, %s %+v; want -32602 (HTTP 400) saying %q", status, r.Result, r.Error, tc.want)
			}
		})
	}
	t.Run("other arguments", func(t *testing.T) {
		call := strings.Replace(modernAsk("ask", `,"requestState":"`+first.RequestState+`"`), `"arguments":{}`, `"arguments":{"x":1}`, 1)
		_, r, _ := post(t, s.url, call, modernCall("ask"))
		if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "issued for a call with other arguments") {
			t.Fatalf("%s %+v; want -32602 for other arguments", r.Result, r.Error)
		}
	})
	// An answer of the wrong kind, or under another id, is no answer: the
	// ask is made again.
	for name, responses := range map[string]string{
		"wrong kind of answer":  `{"confirm":{"roots":[]}}`,
		"answer to another ask": `{"other":{"action":"accept"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, r, _ := post(t, s.url, modernAsk("ask", `,"requestState":"`+ask(t).RequestState+`","inputResponses":`+responses), modernCall("ask"))
			var res inputRequired
			if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.ResultType != "input_required" || res.InputRequests["confirm"] == nil {
				t.Fatalf("retry: %s %+v; want the ask made again", r.Result, r.Error)
			}
		})
	}
	// The answer is the guest's, with the state or without it (the
	// inputResponses name the ask), and extra answers are ignored.
	answered := `,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}},"extra":{"action":"decline"}}`
	for name, state := range map[string]string{"answered": `,"requestState":"` + first.RequestState + `"`, "answered without state": ""} {
		t.Run(name, func(t *testing.T) {
			_, r, _ := post(t, s.url, modernAsk("ask", state+answered), modernCall("ask"))
			var res inputRequired
			if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.ResultType != "complete" || res.IsError ||
				len(res.Content) != 1 || res.Content[0].Text != "0402042012\n"+`{"action":"accept","content":{"ok":true}}` {
				t.Fatalf("retry: %s %+v; want the run's result codes and the answer", r.Result, r.Error)
			}
		})
	}
	// The retry above spent first's state: a replay of it, with the same
	// answers, would run the tool again on the user's word.
	t.Run("replayed", func(t *testing.T) {
		status, r, _ := post(t, s.url, modernAsk("ask", `,"requestState":"`+first.RequestState+`"`+answered), modernCall("ask"))
		if r.Error == nil || r.Error.Code != -32602 || status != 400 || !strings.Contains(r.Error.Message, "each is good for one retry") {
			t.Fatalf("HTTP %d, %s %+v; want -32602 (HTTP 400): the state was retried with already", status, r.Result, r.Error)
		}
	})
}
