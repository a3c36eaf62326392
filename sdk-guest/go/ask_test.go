package guest

import (
	"encoding/json"
	"errors"
	"testing"
)

// standIn replaces a host ask with f for the test.
func standIn(t *testing.T, ask *func([]byte) (int32, []byte), f func(req map[string]any) (int32, string)) {
	t.Helper()
	old := *ask
	*ask = func(req []byte) (int32, []byte) {
		var m struct {
			ID     string         `json:"id"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(req, &m); err != nil || m.Params == nil {
			t.Fatalf("the SDK sent %q, not an id and params", req)
		}
		if m.ID != "" {
			m.Params["(id)"] = m.ID
		}
		code, answer := f(m.Params)
		return code, []byte(answer)
	}
	t.Cleanup(func() { *ask = old })
}

func TestElicitSendsAFormAndReadsTheAnswer(t *testing.T) {
	standIn(t, &hostElicit, func(req map[string]any) (int32, string) {
		schema, _ := req["requestedSchema"].(map[string]any)
		if req["mode"] != "form" || req["message"] != "Go on?" || schema["type"] != "object" || req["(id)"] != "confirm" {
			t.Errorf("request = %v", req)
		}
		return Ok, `{"action":"accept","content":{"confirm":true}}`
	})
	r, err := Elicit(Elicitation{ID: "confirm", Message: "Go on?", Schema: map[string]any{"type": "object"}})
	if err != nil || r.Action != Accept || r.Content["confirm"] != true {
		t.Fatalf("Elicit = %+v, %v", r, err)
	}
}

func TestElicitSendsAURL(t *testing.T) {
	standIn(t, &hostElicit, func(req map[string]any) (int32, string) {
		if req["mode"] != "url" || req["url"] != "https://example.com/sign-in" || req["elicitationId"] != "e1" || req["(id)"] != nil {
			t.Errorf("request = %v", req)
		}
		return Ok, `{"action":"decline"}`
	})
	if r, err := Elicit(Elicitation{Message: "Sign in", URL: "https://example.com/sign-in", ElicitationID: "e1"}); err != nil || r.Action != Decline {
		t.Fatalf("ElicitURL = %+v, %v", r, err)
	}
}

func TestCreateMessageAndListRoots(t *testing.T) {
	standIn(t, &hostCreateMessage, func(req map[string]any) (int32, string) {
		msgs, _ := req["messages"].([]any)
		if len(msgs) != 1 || req["maxTokens"] != float64(10) {
			t.Errorf("request = %v", req)
		}
		return Ok, `{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}`
	})
	r, err := CreateMessage(SamplingRequest{Messages: []SamplingMessage{TextMessage("user", "2+2?")}, MaxTokens: 10})
	if err != nil || r.Text() != "4" || r.Model != "m" {
		t.Fatalf("CreateMessage = %+v, %v", r, err)
	}
	standIn(t, &hostListRoots, func(map[string]any) (int32, string) {
		return Ok, `{"roots":[{"uri":"file:///work","name":"work"}]}`
	})
	roots, err := ListRoots("")
	if err != nil || len(roots) != 1 || roots[0].URI != "file:///work" {
		t.Fatalf("ListRoots = %+v, %v", roots, err)
	}
}

func TestAskRefusalsBecomeAskErrors(t *testing.T) {
	standIn(t, &hostElicit, func(map[string]any) (int32, string) {
		return ErrDenied, `{"error":"the client did not declare the elicitation capability"}`
	})
	_, err := Elicit(Elicitation{Message: "Go on?", Schema: map[string]any{"type": "object"}})
	var ae *AskError
	if !errors.As(err, &ae) || ae.Code != ErrDenied || ae.Message != "the client did not declare the elicitation capability" {
		t.Fatalf("Elicit refused = %v", err)
	}
	standIn(t, &hostListRoots, func(map[string]any) (int32, string) { return ErrLimit, "" })
	if _, err := ListRoots("roots"); !errors.As(err, &ae) || ae.Code != ErrLimit || ae.Message != "wasmcp host: this call's allowance is used up" {
		t.Fatalf("ListRoots without an answer = %v", err)
	}
}

func TestAskAllSendsEachAskAndSplitsTheAnswers(t *testing.T) {
	old := hostAskAll
	t.Cleanup(func() { hostAskAll = old })
	hostAskAll = func(req []byte) (int32, []byte) {
		const want = `[{"method":"elicitation/create","id":"name","params":{"mode":"form","message":"Name?"}},` +
			`{"method":"roots/list","id":"roots","params":{}}]`
		if string(req) != want {
			t.Errorf("request = %s; want %s", req, want)
		}
		return ErrDenied, []byte(`{"name":{"action":"accept","content":{"name":"Ada"}},"roots":{"error":"the client did not declare the roots capability","code":7}}`)
	}
	got, err := AskAll(Elicitation{ID: "name", Message: "Name?"}, RootsRequest{ID: "roots"})
	if err != nil {
		t.Fatal(err)
	}
	var r ElicitResult
	if err := got["name"].Decode(&r); err != nil || r.Content["name"] != "Ada" {
		t.Errorf("name = %+v, %v", r, err)
	}
	var roots struct{ Roots []Root }
	if err := got["roots"].Decode(&roots); err == nil || got["roots"].Err.Code != ErrDenied {
		t.Errorf("roots = %v; want the refusal", err)
	}
	hostAskAll = func([]byte) (int32, []byte) { return ErrInvalid, []byte(`{"error":"the request is not a list"}`) }
	if _, err := AskAll(RootsRequest{}); err == nil || err.Error() != "the request is not a list" {
		t.Errorf("a refused request = %v", err)
	}
}
