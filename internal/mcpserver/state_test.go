package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

func TestRequestStateRoundTrip(t *testing.T) {
	s := newStateSigner(nil)
	args, err := digest(json.RawMessage(`{"b":1,"a":[1.50,"x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	// The same arguments re-encoded by a client have the same digest.
	if again, _ := digest(json.RawMessage(` {"a":[1.50, "x"], "b":1}`)); again != args {
		t.Errorf("digest of reordered arguments differs: %s, %s", again, args)
	}
	if other, _ := digest(json.RawMessage(`{"b":1,"a":[1.5,"x"]}`)); other == args {
		t.Error("1.50 and 1.5 have the same digest; numbers must be kept as written")
	}
	in := &askState{For: "tool confirm", Args: args, Answers: []answer{{ID: "ok", Ask: "d1", Answer: json.RawMessage(`{"action":"accept"}`)}}}
	state, err := s.seal(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.open(state, "tool confirm", args)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Answers) != 1 || string(out.Answers[0].Answer) != `{"action":"accept"}` || out.Answers[0].ID != "ok" {
		t.Errorf("opened %+v", out)
	}
}

func TestRequestStateRefusals(t *testing.T) {
	s := newStateSigner(nil)
	state, err := s.seal(&askState{For: "tool confirm", Args: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	body, sig, _ := strings.Cut(state, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	altered := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"tool confirm"`, `"tool deleter"`, 1))) + "." + sig
	later := newStateSigner(s.key)
	later.now = func() time.Time { return time.Now().Add(StateLifetime + time.Minute) }
	for _, tc := range []struct {
		name, state, tool, args string
		signer                  *stateSigner
		want                    string
	}{
		{"forged", "eyJ2IjoxfQ.AAAA", "tool confirm", "a1", s, "was not issued by this server, or was altered"},
		{"altered", altered, "tool deleter", "a1", s, "was not issued by this server, or was altered"},
		{"not base64", "%%%.%%%", "tool confirm", "a1", s, "was not issued by this server"},
		{"another key", state, "tool confirm", "a1", newStateSigner(nil), "was not issued by this server"},
		{"another tool", state, "tool other", "a1", s, "issued for tool confirm, not tool other"},
		{"a prompt", state, "prompt confirm", "a1", s, "issued for tool confirm, not prompt confirm"},
		{"other arguments", state, "tool confirm", "a2", s, "issued for a call with other arguments"},
		{"expired", state, "tool confirm", "a1", later, "requestState expired at"},
		{"oversized", strings.Repeat("a", MaxRequestState+1), "tool confirm", "a1", s, "over the 256 KiB this server issues"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.signer.open(tc.state, tc.tool, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("open = %v; want an error with %q", err, tc.want)
			}
		})
	}
}

func TestRequestStateOpensOnce(t *testing.T) {
	s := newStateSigner(nil)
	seal := func() string {
		state, err := s.seal(&askState{For: "tool confirm", Args: "a1"})
		if err != nil {
			t.Fatal(err)
		}
		return state
	}
	state, other := seal(), seal()
	if _, err := s.open(state, "tool other", "a1"); err == nil {
		t.Fatal("opened for another tool")
	}
	// A refused retry spends nothing.
	if _, err := s.open(state, "tool confirm", "a1"); err != nil {
		t.Fatalf("first retry: %v", err)
	}
	if _, err := s.open(state, "tool confirm", "a1"); err == nil || !strings.Contains(err.Error(), "each is good for one retry") {
		t.Fatalf("second retry = %v; want it refused", err)
	}
	if _, err := s.open(other, "tool confirm", "a1"); err != nil {
		t.Fatalf("another state of the same call: %v", err)
	}

	// Expired states are forgotten, and the remembered ones are bounded.
	now := time.Now()
	s.now = func() time.Time { return now }
	for range MaxSpentStates + 10 {
		if _, err := s.open(seal(), "tool confirm", "a1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.spent.by); n != MaxSpentStates || len(s.spent.order) != n {
		t.Errorf("%d states remembered (%d in order); want at most %d", n, len(s.spent.order), MaxSpentStates)
	}
	now = now.Add(StateLifetime + time.Second)
	if _, err := s.open(seal(), "tool confirm", "a1"); err != nil {
		t.Fatal(err)
	}
	if n := len(s.spent.by); n != 1 {
		t.Errorf("%d states remembered once the others expired; want 1", n)
	}
}

func TestRequestStateIsBounded(t *testing.T) {
	s := newStateSigner(nil)
	big := json.RawMessage(`"` + strings.Repeat("a", 64<<10) + `"`)
	st := &askState{For: "tool confirm", Args: "a1"}
	for range 4 {
		st.Answers = append(st.Answers, answer{Ask: "d", Answer: big})
	}
	if _, err := s.seal(st); err == nil || !strings.Contains(err.Error(), "over the 256 KiB one may have") {
		t.Fatalf("seal of 256 KiB of answers = %v; want the bound", err)
	}
}

func TestReplayChecksAnAnswerAgainstItsSchema(t *testing.T) {
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	ask := sandbox.Ask{Method: "elicitation/create", Capability: abi.ClientElicitation, ID: "confirm",
		Params: json.RawMessage(`{"message":"Sure?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`)}
	for _, tc := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"confirm": true}, ""},
		{map[string]any{"confirm": "yes"}, "the client's answer does not match the requested schema: at /confirm:"},
		{map[string]any{}, "the client's answer does not match the requested schema: at /:"},
	} {
		a := &replayAsker{need: []string{abi.ClientElicitation}, caps: caps,
			given: mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: tc.content}}}
		got, err := a.Ask(context.Background(), []sandbox.Ask{ask})
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "" {
			if got[0].Err != nil || len(a.used) != 1 {
				t.Errorf("%v: %v; want the answer used", tc.content, got[0].Err)
			}
			continue
		}
		var refused *sandbox.AskError
		if !errors.As(got[0].Err, &refused) || refused.Code != abi.ErrNetwork || !strings.Contains(refused.Text, tc.want) || len(a.used) != 0 {
			t.Errorf("%v: %v; want code 8 saying %q", tc.content, got[0].Err, tc.want)
		}
	}
}

// busyCalls is namingCalls that, while busy is set, answers as a server
// with no run slot free does: a tool error, before the tool runs.
type busyCalls struct {
	namingCalls
	busy *atomic.Bool
}

func (b busyCalls) Call(ctx context.Context, name string, args json.RawMessage, rep sandbox.Reporter, ask sandbox.Asker) (*mcp.CallToolResult, error) {
	if b.busy.Load() {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the server is busy"}}, IsError: true}, nil
	}
	return b.namingCalls.Call(ctx, name, args, rep, ask)
}

// A retry whose run never came to an ask (the server was busy) took none
// of the answers its requestState holds to a tool: the state is still
// good for one retry, which spends it.
func TestRequestStateOfARunThatDidNotAskIsNotSpent(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "greet")
	write(t, filepath.Join(dir, "greet.manifest.json"), `{"abi":1,"tools":[{"name":"greet","description":"d","inputSchema":{"type":"object"},"client":["elicitation"]}]}`)
	reg, _ := openDir(t, dir)
	busy := &atomic.Bool{}
	p := startStdioBare(t, New(reg, busyCalls{busy: busy}, Options{}))
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	first := round(t, p, 1, "greet", `{}`, "", meta)
	if first.ResultType != "input_required" || first.RequestState == "" {
		t.Fatalf("round 1 = %s; want an InputRequiredResult", first.raw)
	}
	retry := `,"requestState":"` + first.RequestState + `","inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}`
	busy.Store(true)
	if r := round(t, p, 2, "greet", `{}`, retry, meta); !strings.Contains(r.raw, "the server is busy") {
		t.Fatalf("retry while busy = %s; want the busy error", r.raw)
	}
	busy.Store(false)
	if r := round(t, p, 3, "greet", `{}`, retry, meta); !strings.Contains(r.raw, "Alice") {
		t.Fatalf("retry once the server had room = %s; want the answer taken", r.raw)
	}
	r := extensionCall(p, 4, "tools/call", `"name":"greet","arguments":{}`+retry, meta)
	if r.Error == nil || !strings.Contains(r.Error.Message, "good for one retry") {
		t.Fatalf("a second retry of a run that asked = %s %+v; want it refused", r.Result, r.Error)
	}
}

// The same holds for an askFirst tool's round, whose run is a task's.
func TestRequestStateOfAnAskFirstRunThatDidNotAskIsNotSpent(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "echo", "named")
	write(t, filepath.Join(dir, "named.manifest.json"), `{"abi":1,"tools":[{"name":"named","description":"d","inputSchema":{"type":"object"},"client":["elicitation"],"execution":{"taskSupport":"required","askFirst":true}}]}`)
	reg, _ := openDir(t, dir)
	busy := &atomic.Bool{}
	p := startStdioBare(t, New(reg, busyCalls{busy: busy}, Options{}))
	first := round(t, p, 1, "named", `{}`, "", askFirstMeta)
	if first.ResultType != "input_required" || first.RequestState == "" {
		t.Fatalf("round 1 = %s; want an InputRequiredResult", first.raw)
	}
	retry := `,"requestState":"` + first.RequestState + `","inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}`
	busy.Store(true)
	if r := round(t, p, 2, "named", `{}`, retry, askFirstMeta); r.ResultType != "task" {
		t.Fatalf("retry while busy = %s; want a task (its result the busy error)", r.raw)
	}
	busy.Store(false)
	again := round(t, p, 3, "named", `{}`, retry, askFirstMeta)
	if again.ResultType != "task" {
		t.Fatalf("retry once the server had room = %s; want the task", again.raw)
	}
	if done := pollUntil(t, p, again.TaskID); done.Status != "completed" || !strings.Contains(string(done.Result), "Alice") {
		t.Fatalf("the task = %+v; want the answer taken", done)
	}
	r := extensionCall(p, 9, "tools/call", `"name":"named","arguments":{}`+retry, askFirstMeta)
	if r.Error == nil || !strings.Contains(r.Error.Message, "good for one retry") {
		t.Fatalf("a second retry of a run that asked = %s %+v; want it refused", r.Result, r.Error)
	}
}
