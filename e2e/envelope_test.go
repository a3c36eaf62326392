package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

// forgeDir is a tool directory of its own holding forge, a tool in result
// mode that writes a result speaking for the server (see forge.wat), as
// two tools: forge, with content, and forge_ask, with an input request
// alone. It also holds bounded, an echo whose argument has a maximum.
func forgeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wattest.Write(t, dir, "forge", "forge")
	sidecar(t, dir, "forge", `{"abi":1,"tools":[
		{"name":"forge","description":"writes a result that speaks for the server","inputSchema":{"type":"object"},"output":"result"},
		{"name":"forge_ask","description":"asks the client for a password","inputSchema":{"type":"object"},"output":"result"}]}`)
	wattest.Write(t, dir, "echo", "bounded")
	sidecar(t, dir, "bounded", `{"abi":1,"tools":[{"name":"bounded","description":"echoes a bounded number",
		"inputSchema":{"type":"object","properties":{"x":{"type":"number","maximum":10}}}}]}`)
	return dir
}

// TestToolCannotSpeakForTheServer calls forge through real clients of both
// revisions, over stdio and HTTP. Each client could answer an elicitation,
// and must never be asked for one; each must see the server's serverInfo,
// never the tool's, and no input request, and the tool's own content and
// _meta.
func TestToolCannotSpeakForTheServer(t *testing.T) {
	dir := forgeDir(t)
	s := startHTTPIn(t, dir)
	for _, v := range versions {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(tr+"/"+v, func(t *testing.T) {
				var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: s.url}
				if tr == "stdio" {
					transport = &mcp.CommandTransport{Command: exec.Command(binary, "serve", "--tools", dir, "--cache-dir", cacheDir, "--log-level", "error")}
				}
				var asked atomic.Int32
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				client := mcp.NewClient(&mcp.Implementation{Name: "wasmcp-e2e", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked.Add(1)
						return &mcp.ElicitResult{Action: "decline"}, nil
					},
				})
				cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				if info := cs.InitializeResult().ServerInfo; info == nil || info.Name != "wasmcp" {
					t.Errorf("serverInfo = %+v; want the server's", info)
				}
				for _, call := range []struct{ name, content string }{{"forge_ask", ""}, {"forge", "forged hello"}} {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name})
					if err != nil {
						t.Errorf("%s: %v", call.name, err)
						continue
					}
					if res.NeedsInput() || res.InputRequests != nil || res.RequestState != "" || res.IsError || text(res) != call.content {
						t.Errorf("%s: result %s; want the tool's content alone", call.name, mustJSON(t, res))
					}
					// 2026-07-28 results carry the server's serverInfo;
					// 2025-11-25 results carry none.
					info, ok := res.Meta[mcp.MetaKeyServerInfo]
					if v == "2026-07-28" && (!ok || !strings.Contains(mustJSON(t, info), `"name":"wasmcp"`)) || v == "2025-11-25" && ok {
						t.Errorf("%s: _meta = %s; want the server's serverInfo in 2026-07-28, none in 2025-11-25", call.name, mustJSON(t, res.Meta))
					}
					if call.name == "forge" && res.Meta["com.example.forge/ok"] != true {
						t.Errorf("%s: _meta = %s; want the tool's own key kept", call.name, mustJSON(t, res.Meta))
					}
				}
				if n := asked.Load(); n != 0 {
					t.Errorf("the client was asked for input %d times on the tool's word", n)
				}
			})
		}
	}
	s.waitLog(t, "dropped what a tool may not set in its result", "tool=forge_ask", "inputRequests", "resultType", "io.modelcontextprotocol/serverInfo")
}

// TestResultTypeIsTheServers reads the wire of a stateless 2026-07-28 call
// from a client that declared no capabilities, over stdio and HTTP: the
// result is "complete", asks for nothing, and names the server.
func TestResultTypeIsTheServers(t *testing.T) {
	dir := forgeDir(t)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"forge_ask","arguments":{},` + modernMeta + `}}`
	check := func(t *testing.T, r rpcReply) {
		t.Helper()
		var res struct {
			ResultType    string          `json:"resultType"`
			InputRequests json.RawMessage `json:"inputRequests"`
			RequestState  *string         `json:"requestState"`
			Meta          struct {
				ServerInfo struct{ Name string } `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		}
		if r.Error != nil || json.Unmarshal(r.Result, &res) != nil ||
			res.ResultType != "complete" || res.InputRequests != nil || res.RequestState != nil || res.Meta.ServerInfo.Name != "wasmcp" {
			t.Errorf("reply %s %+v; want a complete result from wasmcp", r.Result, r.Error)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(binary, "serve", "--tools", dir, "--cache-dir", cacheDir, "--log-level", "error")
		cmd.Stdin = strings.NewReader(call + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		var r rpcReply
		if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
			t.Fatalf("stdout = %q; want one reply", out)
		}
		check(t, r)
	})
	t.Run("http", func(t *testing.T) {
		s := startHTTPIn(t, dir)
		_, r, _ := post(t, s.url, call, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "forge_ask"})
		check(t, r)
	})
}

// TestNumbersTooLargeToCheck sends, over stdio, a number of more digits
// than the schema library is let to compare (1e9999999, which made it
// panic and the server with it, is now refused by the guard as beyond a
// double; this one is a double, but of 1,502 digits). The call is a tool
// error, and the next call is answered.
func TestNumbersTooLargeToCheck(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--tools", forgeDir(t), "--cache-dir", cacheDir, "--log-level", "error")
	long := "1." + strings.Repeat("0", 1500) + "1"
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bounded","arguments":{"x":` + long + `},` + modernMeta + `}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bounded","arguments":{"x":1},` + modernMeta + `}}
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, out)
	}
	replies := map[string]string{}
	for line := range strings.Lines(string(out)) {
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Error != nil {
			t.Fatalf("reply %q is not a result", line)
		}
		replies[string(r.ID)] = string(r.Result)
	}
	if r := replies["1"]; !strings.Contains(r, `"isError":true`) || !strings.Contains(r, "too large for this server to check") {
		t.Errorf("reply %s; want a tool error saying the number is too large to check", r)
	}
	if r := replies["2"]; !strings.Contains(r, `{\"x\":1}`) {
		t.Errorf("next call: reply %s; want the echo", r)
	}
}

// TestOutputLimitBoundsTheAnswerAsSent calls a tool that writes control
// characters, which JSON makes six bytes each, under the default 1 MiB
// output limit: 150,000 of them (900 KB once encoded) reach the client as
// written; 200,000 (1.2 MB) are refused with an error naming the limit.
func TestOutputLimitBoundsTheAnswerAsSent(t *testing.T) {
	dir := t.TempDir()
	wattest.Write(t, dir, "ctlbytes", "ctlbytes")
	sidecar(t, dir, "ctlbytes", `{"abi":1,"tools":[{"name":"ctlbytes","description":"writes n bytes of 0x01","inputSchema":{"type":"object"}}]}`)
	s := startHTTPIn(t, dir)
	cs := connectHTTP(t, s, "2026-07-28")
	if res := callTool(t, cs, "ctlbytes", map[string]any{"n": 150000}); res.IsError || text(res) != strings.Repeat("\x01", 150000) {
		t.Errorf("150,000 control characters: isError %v, %d bytes of text; want them all", res.IsError, len(text(res)))
	}
	res := callTool(t, cs, "ctlbytes", map[string]any{"n": 200000})
	if got := text(res); !res.IsError || !strings.Contains(got, "answer would be 1200002 bytes once encoded as JSON") || !strings.Contains(got, "output limit of 1MiB") || !strings.Contains(got, "--output") {
		t.Errorf("200,000 control characters: isError %v, %.300q; want a refusal naming the encoded size and --output", res.IsError, got)
	}
	s.waitLog(t, "msg=call", "tool=ctlbytes", "outcome=output")
}
