package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
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
