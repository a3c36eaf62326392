package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The one client every server is driven with: raw JSON-RPC, in the
// stateless form of MCP 2026-07-28 (no initialize; each request carries the
// protocol version and the client's capabilities in _meta, and over HTTP
// the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers). It is written
// here rather than taken from an SDK so that no server gets a client of its
// own family, and so that the client's own cost is small and the same for
// all.

const protocolVersion = "2026-07-28"

// caller sends one request and returns the JSON-RPC response to it.
type caller interface {
	call(ctx context.Context, id int64, request []byte) ([]byte, error)
	close()
}

// callSpec is the tools/call a run repeats.
type callSpec struct {
	tool   string
	params []byte // the request's params, marshalled once
}

func newCallSpec(tool string, args map[string]any) callSpec {
	if args == nil {
		args = map[string]any{}
	}
	params, err := json.Marshal(map[string]any{
		"name":      tool,
		"arguments": args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    protocolVersion,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
	})
	if err != nil {
		panic(err)
	}
	return callSpec{tool: tool, params: params}
}

func (s callSpec) request(id int64) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, s.params)
}

// toolResult is the part of a CallToolResult the checks read.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r *toolResult) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// verify checks that raw is the successful answer to request id and that
// check accepts its result.
func verify(raw []byte, id int64, check func(*toolResult) error) error {
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Result *toolResult     `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("reply is not JSON-RPC: %q", truncate(raw, 200))
	}
	if string(resp.ID) != fmt.Sprint(id) {
		return fmt.Errorf("reply has id %s, want %d", resp.ID, id)
	}
	if resp.Error != nil {
		return fmt.Errorf("JSON-RPC error %d: %s", resp.Error.Code, resp.Error.Message)
	}
	if resp.Result == nil {
		return fmt.Errorf("reply has no result: %q", truncate(raw, 200))
	}
	if resp.Result.IsError {
		return fmt.Errorf("isError: %s", resp.Result.text())
	}
	return check(resp.Result)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// ---- stdio: newline-delimited JSON on the server's stdin and stdout ----

// stdioCaller multiplexes calls over one connection: any number may be in
// flight (pipelined), and replies are matched to calls by id. Messages
// without an id (notifications such as logs) are skipped.
type stdioCaller struct {
	wmu sync.Mutex
	w   io.WriteCloser

	mu      sync.Mutex
	pending map[int64]chan []byte
	err     error
	done    chan struct{} // closed when stdout ends
}

func newStdioCaller(w io.WriteCloser, r io.Reader) *stdioCaller {
	c := &stdioCaller{w: w, pending: map[int64]chan []byte{}, done: make(chan struct{})}
	go c.read(r)
	return c
}

func (c *stdioCaller) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			var head struct {
				ID     *int64 `json:"id"`
				Method string `json:"method"`
			}
			if json.Unmarshal(msg, &head) == nil && head.ID != nil && head.Method == "" {
				c.mu.Lock()
				ch := c.pending[*head.ID]
				delete(c.pending, *head.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- msg
				}
			}
		}
		if err != nil {
			c.mu.Lock()
			c.err = fmt.Errorf("server's stdout ended: %w", err)
			c.mu.Unlock()
			close(c.done)
			return
		}
	}
}

func (c *stdioCaller) call(ctx context.Context, id int64, request []byte) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.pending[id] = ch
	c.mu.Unlock()

	c.wmu.Lock()
	_, err := c.w.Write(append(request, '\n'))
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return nil, fmt.Errorf("writing to the server's stdin: %w", err)
	}
	select {
	case msg := <-ch:
		return msg, nil
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.err
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	}
}

func (c *stdioCaller) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *stdioCaller) close() { c.w.Close() }

// ---- Streamable HTTP: one POST per call ----

type httpCaller struct {
	url    string
	tool   string
	client *http.Client
}

func newHTTPCaller(addr, tool string) *httpCaller {
	return &httpCaller{
		url:  "http://" + addr + "/mcp",
		tool: tool,
		client: &http.Client{Transport: &http.Transport{
			// Enough idle connections that every concurrent worker keeps its
			// own: the bench measures calls, not TCP handshakes.
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
		}},
	}
}

func (h *httpCaller) call(ctx context.Context, id int64, request []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(request))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", h.tool)
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, truncate(bytes.TrimSpace(body), 200))
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		return sseReply(body)
	case strings.HasPrefix(ct, "application/json"):
		return body, nil
	}
	return nil, fmt.Errorf("unexpected Content-Type %q", ct)
}

func (h *httpCaller) close() { h.client.CloseIdleConnections() }

// sseReply finds the JSON-RPC response among the events of an SSE body:
// the first event whose data is a message with an id and no method (the
// others are notifications or requests the server sent on the way).
func sseReply(body []byte) ([]byte, error) {
	var data []byte
	event := false
	flush := func() []byte {
		defer func() { data, event = nil, false }()
		if !event {
			return nil
		}
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(data, &head) == nil && len(head.ID) > 0 && string(head.ID) != "null" && head.Method == "" {
			return data
		}
		return nil
	}
	for line := range bytes.Lines(body) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if msg := flush(); msg != nil {
				return msg, nil
			}
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if event {
				data = append(data, '\n')
			}
			data = append(data, v...)
			event = true
		}
	}
	if msg := flush(); msg != nil {
		return msg, nil
	}
	return nil, errors.New("no JSON-RPC response in the event stream")
}
