package guard

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// These tests hold what the guard assumes of the SDK to the SDK itself, so
// that an SDK upgrade that changes it fails here.

func TestTheSDKReadsEveryDepthTheGuardPasses(t *testing.T) {
	if _, err := jsonrpc.DecodeMessage([]byte(nestedCall(1, MaxDepth))); err != nil {
		t.Fatalf("the SDK refuses a message nested %d levels, which the guard passes: %v", MaxDepth, err)
	}
	// The SDK's own limit, which MaxDepth's comment cites.
	if _, err := jsonrpc.DecodeMessage([]byte(nestedCall(1, 1000))); err != nil {
		t.Errorf("the SDK refuses a message nested 1,000 levels: %v", err)
	}
	if _, err := jsonrpc.DecodeMessage([]byte(nestedCall(1, 1001))); err == nil {
		t.Error("the SDK reads a message nested 1,001 levels; MaxDepth's comment is out of date")
	}
}

// sdkEchoes reports whether the SDK answers a request with id with a
// response carrying exactly the same bytes.
func sdkEchoes(t *testing.T, id string) bool {
	t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
	if err != nil {
		t.Fatalf("the SDK refuses id %s: %v", id, err)
	}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: msg.(*jsonrpc.Request).ID, Result: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatalf("the SDK cannot encode the answer to id %s: %v", id, err)
	}
	got, ok := ResponseID(out)
	return ok && string(got) == id
}

func TestPlainID(t *testing.T) {
	plain := []string{
		`0`, `1`, `-1`, `42`, `999999999999999`, `-999999999999999`, `9007199254740992`, `-9007199254740992`,
		`""`, `"a"`, `"req-1"`, `" ~!#$%&'()*+,-./:;<=>?@[]^_{|}"`, `"wasmcp-id"`, `"x-wasmcp-id:1"`,
	}
	notPlain := []string{
		`-0`, `9007199254740993`, `-9007199254740993`, `9223372036854775807`, `-9223372036854775808`,
		`"\u0061"`, `"a\/b"`, `"tab\t"`, `"é"`, "\"\u2028\"", `"\ud800"`, `"wasmcp-id:1"`, `"wasmcp-id:"`,
	}
	for _, id := range plain {
		if !PlainID(json.RawMessage(id)) {
			t.Errorf("PlainID(%s) = false, want true", id)
		}
		if !sdkEchoes(t, id) {
			t.Errorf("PlainID(%s) is true, but the SDK does not give the id back byte for byte", id)
		}
	}
	for _, id := range notPlain {
		if PlainID(json.RawMessage(id)) {
			t.Errorf("PlainID(%s) = true, want false", id)
		}
	}
	// The reason for each refusal: the SDK changes these ids. (Others it
	// keeps, like "é", are refused all the same: only printable ASCII is
	// known to come back as it was.)
	for _, id := range []string{`-0`, `9007199254740993`, `9223372036854775807`, `"\u0061"`, `"a\/b"`, "\"\u2028\"", `"\ud800"`} {
		if sdkEchoes(t, id) {
			t.Errorf("the SDK gives id %s back unchanged; the test's reason for refusing it is gone", id)
		}
	}
}

func TestMember(t *testing.T) {
	obj := []byte(`{"id":1, "params" : {"requestId":"x","id":2} ,"\u0069d":"last","requestId":[1,{"a":"}"}]}`)
	for _, tc := range []struct{ name, want string }{
		{"id", `"last"`},
		{"params", `{"requestId":"x","id":2}`},
		{"requestId", `[1,{"a":"}"}]`},
	} {
		got, ok := Member(obj, tc.name)
		if !ok || string(got) != tc.want {
			t.Errorf("Member(%s) = %s, %v; want %s", tc.name, got, ok, tc.want)
		}
	}
	if got, ok := Member(obj, "absent"); ok {
		t.Errorf("Member(absent) = %s; want none", got)
	}
	for _, bad := range []string{`[]`, `"id"`, `{"id":`, ``} {
		if got, ok := Member([]byte(bad), "id"); ok {
			t.Errorf("Member(%s, id) = %s; want none", bad, got)
		}
		if got, ok := WithMember([]byte(bad), "id", []byte(`0`)); ok {
			t.Errorf("WithMember(%s, id) = %s; want none", bad, got)
		}
	}
}

func TestWithMember(t *testing.T) {
	obj := []byte(`{"jsonrpc":"2.0", "id" : 9223372036854775807 ,"method":"m","params":{"id":1}}`)
	orig := string(obj)
	got, ok := WithMember(obj, "id", []byte(`"wasmcp-id:1"`))
	if want := `{"jsonrpc":"2.0", "id" : "wasmcp-id:1" ,"method":"m","params":{"id":1}}`; !ok || string(got) != want {
		t.Errorf("WithMember(id) = %s, %v; want %s", got, ok, want)
	}
	got, ok = WithMember(obj, "params", []byte(`{}`))
	if want := `{"jsonrpc":"2.0", "id" : 9223372036854775807 ,"method":"m","params":{}}`; !ok || string(got) != want {
		t.Errorf("WithMember(params) = %s, %v; want %s", got, ok, want)
	}
	if string(obj) != orig {
		t.Errorf("WithMember changed its input to %s", obj)
	}
	// The member a decoder reads is the one replaced.
	got, _ = WithMember([]byte(`{"id":1,"id":2}`), "id", []byte(`3`))
	var m struct{ ID int }
	if err := json.Unmarshal(got, &m); err != nil || m.ID != 3 || !strings.HasPrefix(string(got), `{"id":1,`) {
		t.Errorf("WithMember on a repeated id = %s", got)
	}
}
