package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
)

// askerFunc is a function answering one ask as an Asker: an error that
// ends the run ends it, any other is the ask's.
type askerFunc func(ctx context.Context, ask Ask) (json.RawMessage, error)

func (f askerFunc) Ask(ctx context.Context, asks []Ask) ([]Answer, error) {
	answers := make([]Answer, len(asks))
	for i, a := range asks {
		b, err := f(ctx, a)
		if errors.Is(err, ErrInputRequired) {
			return nil, err
		}
		answers[i] = Answer{JSON: b, Err: err}
	}
	return answers, nil
}

func TestAskFunctionsCheckEveryArgument(t *testing.T) {
	e := newEngine(t)
	var asked []string
	ask := askerFunc(func(_ context.Context, a Ask) (json.RawMessage, error) {
		asked = append(asked, a.Capability+" "+a.Method+" "+a.ID+" "+string(a.Params))
		return json.RawMessage(`{"action":"accept","content":{}}`), nil
	})
	out := compile(t, e, "ask").Run(context.Background(), Run{Limits: small, Asker: ask})
	if out.Failure != nil {
		t.Fatalf("run failed: %+v", out.Failure)
	}
	// One digit per call in ask.wat, in order, then the first answer.
	const want = "0402042012\n" + `{"action":"accept","content":{}}`
	if string(out.Stdout) != want {
		t.Fatalf("stdout = %q; want %q", out.Stdout, want)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `elicitation elicitation/create confirm {"message":"ok?"`) {
		t.Errorf("asked %q; want the one valid ask, as elicitation/create", asked)
	}
}

func TestAskWithoutAnAskerIsDenied(t *testing.T) {
	e := newEngine(t)
	out := compile(t, e, "ask").Run(context.Background(), Run{Limits: small})
	if out.Failure != nil {
		t.Fatalf("run failed: %+v", out.Failure)
	}
	if got, _, _ := strings.Cut(string(out.Stdout), "\n"); got[0] != '0'+byte(abi.ErrDenied) {
		t.Fatalf("result codes = %q; want the ask denied (%d)", got, abi.ErrDenied)
	}
}

func TestAskRefusedOrTooLargeAnswer(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		name string
		ask  askerFunc
		code int32
		text string
	}{
		{"refused", func(context.Context, Ask) (json.RawMessage, error) {
			return nil, &AskError{Code: abi.ErrDenied, Text: "no elicitation here"}
		}, abi.ErrDenied, `{"error":"no elicitation here"}`},
		{"too large", func(context.Context, Ask) (json.RawMessage, error) {
			return json.RawMessage(`"` + strings.Repeat("a", abi.MaxAnswerLen) + `"`), nil
		}, abi.ErrNetwork, "over the 64 KiB an answer may have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := compile(t, e, "ask").Run(context.Background(), Run{Limits: small, Asker: tc.ask})
			if out.Failure != nil {
				t.Fatalf("run failed: %+v", out.Failure)
			}
			codes, answer, _ := strings.Cut(string(out.Stdout), "\n")
			if codes[0] != '0'+byte(tc.code) || !strings.Contains(answer, tc.text) {
				t.Fatalf("stdout = %q; want code %d and an answer with %q", out.Stdout, tc.code, tc.text)
			}
		})
	}
}

func TestAskEndingTheRunStopsItAtOnce(t *testing.T) {
	e := newEngine(t)
	ask := askerFunc(func(context.Context, Ask) (json.RawMessage, error) {
		return nil, ErrInputRequired
	})
	out := compile(t, e, "ask").Run(context.Background(), Run{Limits: small, Asker: ask})
	if out.Failure == nil || out.Failure.Kind != InputRequired {
		t.Fatalf("failure = %+v; want %s", out.Failure, InputRequired)
	}
	if len(out.Stdout) != 0 {
		t.Errorf("the guest ran on after its ask and wrote %q", out.Stdout)
	}
}

func TestAskInALoopIsStopped(t *testing.T) {
	e := newEngine(t)
	asks := 0
	ask := askerFunc(func(context.Context, Ask) (json.RawMessage, error) {
		asks++
		return json.RawMessage(`{"action":"decline"}`), nil
	})
	out := compile(t, e, "askloop").Run(context.Background(), Run{Limits: small, Asker: ask})
	if out.Failure == nil || out.Failure.Kind != AskLimit || !strings.Contains(out.Failure.Detail, "more than 16 times") {
		t.Fatalf("failure = %+v; want %s", out.Failure, AskLimit)
	}
	if asks != abi.MaxAsks {
		t.Errorf("the client was asked %d times; want %d", asks, abi.MaxAsks)
	}
}

func TestAskWaitEndsWithTheTimeLimit(t *testing.T) {
	e := newEngine(t)
	ask := askerFunc(func(ctx context.Context, _ Ask) (json.RawMessage, error) {
		<-ctx.Done() // a client that never answers in time
		return nil, context.Cause(ctx)
	})
	lim := small
	lim.Timeout = 200 * time.Millisecond
	out := compile(t, e, "ask").Run(context.Background(), Run{Limits: lim, Asker: ask})
	if out.Failure == nil || out.Failure.Kind != TimeLimit {
		t.Fatalf("failure = %+v; want %s", out.Failure, TimeLimit)
	}
}

func TestAskWaitEndsWithCancellation(t *testing.T) {
	e := newEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	ask := askerFunc(func(run context.Context, _ Ask) (json.RawMessage, error) {
		cancel() // the client cancels the call while it is asked
		<-run.Done()
		return nil, context.Cause(run)
	})
	out := compile(t, e, "ask").Run(ctx, Run{Limits: small, Asker: ask})
	if out.Failure == nil || out.Failure.Kind != Cancelled {
		t.Fatalf("failure = %+v; want %s", out.Failure, Cancelled)
	}
}

func TestAskAllAnswersEachAsk(t *testing.T) {
	e := newEngine(t)
	var asked []string
	ask := askerFunc(func(_ context.Context, a Ask) (json.RawMessage, error) {
		asked = append(asked, a.ID+" "+a.Capability)
		if a.Method == "roots/list" {
			return nil, &AskError{Code: abi.ErrDenied, Text: "the client did not declare the roots capability"}
		}
		return json.RawMessage(`{"action":"accept"}`), nil
	})
	out := compile(t, e, "askall").Run(context.Background(), Run{Limits: small, Asker: ask})
	if out.Failure != nil {
		t.Fatalf("run failed: %+v", out.Failure)
	}
	const want = "72\n" + `{"a":{"action":"accept"},"b":{"error":"the client did not declare the roots capability","code":7}}`
	if string(out.Stdout) != want {
		t.Fatalf("stdout = %q; want %q", out.Stdout, want)
	}
	if strings.Join(asked, ",") != "a elicitation,b roots" {
		t.Errorf("asked %q", asked)
	}
}
