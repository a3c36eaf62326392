package guard

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"
)

func TestScanEnvelope(t *testing.T) {
	// want is the envelope as "name=value" pairs joined by "|", in the
	// fixed order jsonrpc, id, method, params, result, error; absent
	// members are left out.
	tests := []struct {
		name string
		msg  string
		ok   bool
		want string
	}{
		{"empty object", `{}`, true, ``},
		{"empty object with space", " { \t\r\n} ", true, ``},
		{"request", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}]}}`, true,
			`jsonrpc="2.0"|id=1|method="m"|params={"a":[1,{"b":null}]}`},
		{"response with error", `{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}}`, true,
			`jsonrpc="2.0"|id="x"|error={"code":-1,"message":"m"}`},
		{"response with result and newline", "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n", true,
			`jsonrpc="2.0"|id=7|result={}`},
		{"space around members", ` { "id" : 5 , "method" : "m" } `, true, `id=5|method="m"`},
		{"scalars of every kind", `{"id":-1.5e3,"method":true,"params":false,"result":null}`, true,
			`id=-1.5e3|method=true|params=false|result=null`},
		{"last of a repeated member wins", `{"id":1,"id":"two"}`, true, `id="two"`},
		{"escaped key is matched", `{"\u0069d":3,"meth\u006fd":"m"}`, true, `id=3|method="m"`},
		{"keys are case-sensitive", `{"ID":1,"Method":"m"}`, true, ``},
		{"nested members are not top-level", `{"params":{"id":1,"method":"x"},"result":[{"error":2}]}`, true,
			`params={"id":1,"method":"x"}|result=[{"error":2}]`},
		{"quotes and brackets inside strings", `{"params":{"s":"}\"]{\\"},"id":"a\"b\\"}`, true,
			`id="a\"b\\"|params={"s":"}\"]{\\"}`},
		{"backslash run before a closing quote", `{"id":"\\\\","method":"m"}`, true, `id="\\\\"|method="m"`},
		{"unknown members are skipped", `{"x":[1,2,{"y":"}"}],"id":2}`, true, `id=2`},

		{"empty input", ``, false, ``},
		{"only space", "  \n", false, ``},
		{"array", `[{"id":1}]`, false, ``},
		{"string", `"id"`, false, ``},
		{"unterminated object", `{"id":1`, false, ``},
		{"unterminated key", `{"id`, false, ``},
		{"missing colon", `{"id" 1}`, false, ``},
		{"missing value", `{"id":}`, false, ``},
		{"missing value at end", `{"id":`, false, ``},
		{"unterminated nested value", `{"params":{"a":[1}`, false, ``},
		{"unterminated string value", `{"id":"abc}`, false, ``},
		{"trailing comma", `{"id":1,}`, false, ``},
		{"key not a string", `{id:1}`, false, ``},
		{"members without a comma", `{"id":1 "method":"m"}`, false, ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, ok := scanEnvelope([]byte(tc.msg))
			if ok != tc.ok {
				t.Fatalf("scanEnvelope(%s) ok = %v, want %v", tc.msg, ok, tc.ok)
			}
			if !ok {
				return
			}
			if got := describe(env); got != tc.want {
				t.Errorf("scanEnvelope(%s) = %s, want %s", tc.msg, got, tc.want)
			}
		})
	}
}

// describe renders an envelope as TestScanEnvelope's want strings.
func describe(env envelope) string {
	var parts []string
	for _, m := range []struct {
		name string
		val  []byte
	}{{"jsonrpc", env.jsonrpc}, {"id", env.id}, {"method", env.method}, {"params", env.params}, {"result", env.result}, {"error", env.error}} {
		if m.val != nil {
			parts = append(parts, m.name+"="+string(m.val))
		}
	}
	return strings.Join(parts, "|")
}

func TestScannedValuesCannotGrowIntoTheMessage(t *testing.T) {
	msg := []byte(`{"id":1,"params":{}}`)
	env, ok := scanEnvelope(msg)
	if !ok {
		t.Fatal("scanEnvelope failed")
	}
	_ = append(env.id, 'x')
	_ = append(env.params, 'x')
	if string(msg) != `{"id":1,"params":{}}` {
		t.Errorf("appending to a scanned value changed the message to %s", msg)
	}
}

func TestUnquote(t *testing.T) {
	for _, q := range []string{
		`""`, `"abc"`, `"tools/call"`, `"tools\/call"`, `"\u0061\n\t\"\\"`, `"é"`, `"\u00e9"`,
		`"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", "\"a\x01b\"", `"a"b"`, `"unterminated`, `abc`, `1`, `null`, ``, `"`,
	} {
		var want string
		if json.Unmarshal([]byte(q), &want) != nil {
			want = ""
		}
		if got := unquote([]byte(q)); got != want {
			t.Errorf("unquote(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestResponseID(t *testing.T) {
	tests := []struct {
		msg    string
		wantID string // "" for no response id
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", `1`},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}`, `"a"`},
		{`{"jsonrpc":"2.0","id":3,"method":null,"result":{}}`, `3`},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, `null`},
		{`{"jsonrpc":"2.0","result":{"id":4,"content":[{"type":"text","text":"{\"id\":5}"}]},"id":6}`, `6`},
		{`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{}}`, ``},
		{`{"jsonrpc":"2.0","id":2,"method":1}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}`, ``},
		{`{"jsonrpc":"2.0","result":{}}`, ``},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, ``},
		{`{"jsonrpc":"2.0","id":1,"result":`, ``},
		{``, ``},
	}
	for _, tc := range tests {
		id, ok := ResponseID([]byte(tc.msg))
		if ok != (tc.wantID != "") || string(id) != tc.wantID {
			t.Errorf("ResponseID(%s) = %s, %v; want %s", tc.msg, id, ok, tc.wantID)
		}
	}
}

// FuzzScan checks the scanner on arbitrary input: it never panics, and
// on valid JSON it finds what encoding/json finds.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"a\":1}"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1}}`,
		`{"jsonrpc":"2.0","id":"\"}","method":null,"error":{"code":1,"message":"\\"}}`,
		`{"\u0069d":1,"id":2,"params":[{"x":"]"}]}`,
		`{"id":1,`,
		`"\u00e9\\"`,
		`{"params":{"a":[[[-1.5e400,{"b":1E309}]]]},"id":0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		env, scanned := scanEnvelope(msg)
		id, isResponse := ResponseID(msg)
		_ = unquote(msg)
		if !json.Valid(msg) {
			return
		}

		var s string
		if json.Unmarshal(msg, &s) == nil {
			if got := unquote(bytes.Trim(msg, jsonSpace)); got != s {
				t.Fatalf("unquote(%q) = %q, encoding/json gives %q", msg, got, s)
			}
		}

		var m map[string]json.RawMessage
		isObject := json.Unmarshal(msg, &m) == nil && m != nil
		if scanned != isObject {
			t.Fatalf("scanEnvelope(%q) ok = %v, want %v", msg, scanned, isObject)
		}
		if !isObject {
			return
		}
		if depth, big := referenceWalk(msg); env.depth != depth || !bytes.Equal(env.bigNumber, big) {
			t.Fatalf("scanEnvelope(%q) met depth %d and number %q; encoding/json reads depth %d and number %q", msg, env.depth, env.bigNumber, depth, big)
		}
		for name, got := range map[string][]byte{"jsonrpc": env.jsonrpc, "id": env.id, "method": env.method, "params": env.params, "result": env.result, "error": env.error} {
			want, present := m[name]
			if (got != nil) != present || !bytes.Equal(got, want) {
				t.Fatalf("scanEnvelope(%q): %s = %q, encoding/json finds %q (present %v)", msg, name, got, want, present)
			}
		}
		members, unique := Members(msg)
		ref, refUnique := referenceMembers(msg)
		if unique != refUnique || unique && !maps.EqualFunc(members, ref, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("Members(%q) = %q, %v; encoding/json's tokens give %q, %v", msg, members, unique, ref, refUnique)
		}
		for name, want := range m {
			if got, ok := Member(msg, name); !ok || !bytes.Equal(got, want) {
				t.Fatalf("Member(%q, %q) = %q, %v; encoding/json finds %q", msg, name, got, ok, want)
			}
			replaced, ok := WithMember(msg, name, []byte(`["x"]`))
			var after map[string]json.RawMessage
			if !ok || json.Unmarshal(replaced, &after) != nil || string(after[name]) != `["x"]` || len(after) != len(m) {
				t.Fatalf("WithMember(%q, %q) = %q, which encoding/json reads as %q", msg, name, replaced, after)
			}
		}
		method, hasMethod := m["method"]
		wantID, hasID := m["id"]
		wantResponse := hasID && (!hasMethod || string(method) == "null")
		if isResponse != wantResponse || !bytes.Equal(id, wantID) && wantResponse {
			t.Fatalf("ResponseID(%q) = %q, %v; want %q, %v", msg, id, isResponse, wantID, wantResponse)
		}
	})
}

// referenceMembers is Members by encoding/json's tokens: the members of
// the object data by their decoded names, unless one repeats.
func referenceMembers(data []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	members := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if _, dup := members[t.(string)]; dup {
			return nil, false
		}
		members[t.(string)] = v
	}
	return members, true
}

func TestMembersRefusesARepeatedName(t *testing.T) {
	for _, obj := range []string{`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`} {
		if m, ok := Members([]byte(obj)); ok {
			t.Errorf("Members(%s) = %q; want a refusal: a name repeats", obj, m)
		}
	}
	if m, ok := Members([]byte(` { "a" : [1, {"a":2}] , "b":"x" } `)); !ok || string(m["a"]) != `[1, {"a":2}]` || string(m["b"]) != `"x"` || len(m) != 2 {
		t.Errorf("Members = %q, %v", m, ok)
	}
}
