package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadLineSkipsOversizedLines(t *testing.T) {
	long := strings.Repeat("x", 100)
	r := bufio.NewReaderSize(strings.NewReader("short\n"+long+"\nnext\nlast"), 16)
	var got []string
	var buf []byte
	for {
		line, tooLong, err := readLine(r, 50, buf)
		buf = line // as forwardLines does, each line reuses the last one's storage
		switch {
		case tooLong:
			got = append(got, "<too long>")
		case len(line) > 0:
			got = append(got, strings.TrimSuffix(string(line), "\n"))
		}
		if err != nil {
			break
		}
	}
	want := []string{"short", "<too long>", "next", "last"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines = %q; want %q", got, want)
	}
}

// TestServeStdioKeepsGoingAfterBadLines drives ServeStdio in-process: each
// malformed line is answered and the next request still works, and the
// request read just before end of input is answered before ServeStdio
// returns.
func TestServeStdioKeepsGoingAfterBadLines(t *testing.T) {
	s := newTestServer(t, nil)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{oops`,
		``,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`,
	}, "\n")
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(context.Background(), strings.NewReader(in), pw, StdioOptions{DrainTimeout: time.Minute})
	}()
	replies := map[string]string{}
	dec := json.NewDecoder(pr)
	for len(replies) < 3 {
		var m struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("decoding a reply: %v (got %v)", err, replies)
		}
		if m.Error != nil {
			replies[string(m.ID)] = fmt.Sprintf("error %d", m.Error.Code)
		} else {
			replies[string(m.ID)] = string(m.Result)
		}
	}
	if replies["null"] != "error -32700" {
		t.Errorf("bad line: %q", replies["null"])
	}
	if !strings.Contains(replies["2"], `{\"n\":1}`) {
		t.Errorf("call after the bad line: %q", replies["2"])
	}
	pr.Close()
	if err := <-done; err != nil {
		t.Errorf("ServeStdio = %v", err)
	}
}
