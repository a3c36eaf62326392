package main

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{50: 50, 90: 90, 99: 99, 100: 100, 0: 1, 0.5: 1} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v of 1..100 = %d, want %d", p, got, want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one value = %d, want 7", got)
	}
	s := summarize([]time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond})
	if s.Calls != 3 || s.MeanMs != 2 || s.MinMs != 1 || s.P50Ms != 2 || s.MaxMs != 3 {
		t.Errorf("summarize = %+v", s)
	}
}

func TestSSEReply(t *testing.T) {
	body := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n" +
		"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\r\ndata: \"result\":{}}\r\n\r\n"
	got, err := sseReply([]byte(body))
	if err != nil || string(got) != "{\"jsonrpc\":\"2.0\",\"id\":7,\n\"result\":{}}" {
		t.Fatalf("sseReply = %q, %v", got, err)
	}
	if _, err := sseReply([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n")); err == nil {
		t.Fatal("sseReply found a reply in a stream of notifications")
	}
}

func TestVerify(t *testing.T) {
	check := wantText("15.0")
	ok := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"15.0"}]}}`
	if err := verify([]byte(ok), 3, check); err != nil {
		t.Errorf("verify(correct reply) = %v", err)
	}
	for name, raw := range map[string]string{
		"wrong id":  `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"15.0"}]}}`,
		"isError":   `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"15.0"}],"isError":true}}`,
		"rpc error": `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad"}}`,
		"wrong":     `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"15"}]}}`,
		"not json":  `nope`,
	} {
		if err := verify([]byte(raw), 3, check); err == nil {
			t.Errorf("verify(%s) accepted it", name)
		}
	}
}
