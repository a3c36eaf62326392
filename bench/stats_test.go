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

func TestCombineRounds(t *testing.T) {
	round := func(p50, rss, other float64, calls, errs int, cps float64) result {
		return result{Server: "s", Transport: "stdio",
			Latency: latency{Calls: calls, P50Ms: p50, P99Ms: 10 * p50}, CPUMsPerCall: p50 / 2,
			Errors: errs, ErrorSamples: []string{"e"}, PeakRSSMiB: rss, OtherCPUPercent: other,
			Throughput: []point{{Concurrency: 4, Calls: calls, CallsPerSec: cps, Seconds: 1}}}
	}
	got := combine([]result{round(0.3, 20, 1, 100, 1, 900), round(0.1, 40, 9, 100, 0, 1000), round(0.2, 30, 2, 100, 2, 1100)})
	if got.Latency.P50Ms != 0.2 || got.Latency.P99Ms != 2 || got.CPUMsPerCall != 0.1 || got.Latency.Calls != 300 {
		t.Errorf("latency %+v, CPU %v: want the medians, over 300 calls", got.Latency, got.CPUMsPerCall)
	}
	if got.PeakRSSMiB != 40 || got.OtherCPUPercent != 9 || got.Errors != 3 || len(got.ErrorSamples) != 3 {
		t.Errorf("peak %v, noise %v, errors %d %q: want the worst round's peak and noise, and every error", got.PeakRSSMiB, got.OtherCPUPercent, got.Errors, got.ErrorSamples)
	}
	if p := got.Throughput[0]; p.CallsPerSec != 1000 || p.Calls != 300 || p.Seconds != 3 || p.Concurrency != 4 {
		t.Errorf("throughput %+v: want the median rate over every round's calls", p)
	}
	if got.Rounds != 3 || len(got.RoundP50Ms) != 3 || got.RoundP50Ms[0] != 0.3 {
		t.Errorf("rounds %d, p50s %v", got.Rounds, got.RoundP50Ms)
	}
	if even := combine([]result{round(0.1, 1, 0, 1, 0, 1), round(0.3, 1, 0, 1, 0, 3)}); even.Latency.P50Ms != 0.2 {
		t.Errorf("median of two = %v, want their mean", even.Latency.P50Ms)
	}
	failed := round(1, 1, 0, 1, 0, 1)
	failed.Failed = "boom"
	if got := combine([]result{round(1, 1, 0, 1, 0, 1), failed}); got.Failed != "round 2: boom" {
		t.Errorf("a failed round: %q", got.Failed)
	}
	if got := inTurn([]int{1, 2, 3}, 4); len(got) != 3 || got[0] != 2 || got[2] != 1 {
		t.Errorf("inTurn(1 2 3, 4) = %v, want 2 3 1", got)
	}
}
