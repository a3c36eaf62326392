package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	const noID = "" // the verdict's ID must be nil
	tests := []struct {
		name       string
		msg        string
		wantKind   Kind
		wantID     string // exact bytes of Verdict.ID; noID for nil
		wantMethod string
		wantParams string // exact bytes of Verdict.Params; "" for nil
		wantCode   int    // for Invalid
		wantMsg    string // a substring of Message, for Invalid
	}{
		// Well-formed messages.
		{name: "request with integer id", msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			wantKind: Request, wantID: `1`, wantMethod: "tools/list"},
		{name: "request with string id and params", msg: `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"calc","arguments":{}}}`,
			wantKind: Request, wantID: `"abc"`, wantMethod: "tools/call", wantParams: `{"name":"calc","arguments":{}}`},
		{name: "request with empty params object", msg: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{}}`,
			wantKind: Request, wantID: `2`, wantMethod: "ping", wantParams: `{}`},
		{name: "request with negative id", msg: `{"jsonrpc":"2.0","id":-42,"method":"ping"}`,
			wantKind: Request, wantID: `-42`, wantMethod: "ping"},
		{name: "request with id zero", msg: `{"jsonrpc":"2.0","id":0,"method":"ping"}`,
			wantKind: Request, wantID: `0`, wantMethod: "ping"},
		{name: "request with largest int64 id", msg: `{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}`,
			wantKind: Request, wantID: `9223372036854775807`, wantMethod: "ping"},
		{name: "request with smallest int64 id", msg: `{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}`,
			wantKind: Request, wantID: `-9223372036854775808`, wantMethod: "ping"},
		{name: "request with empty string id", msg: `{"jsonrpc":"2.0","id":"","method":"ping"}`,
			wantKind: Request, wantID: `""`, wantMethod: "ping"},
		{name: "request with escaped string id keeps its spelling", msg: `{"jsonrpc":"2.0","id":"\u0061\n","method":"ping"}`,
			wantKind: Request, wantID: `"\u0061\n"`, wantMethod: "ping"},
		{name: "request with escaped method", msg: `{"jsonrpc":"2.0","id":1,"method":"tools\/list"}`,
			wantKind: Request, wantID: `1`, wantMethod: "tools/list"},
		{name: "request with members in any order", msg: `{"params":{"a":1},"method":"m","id":5,"jsonrpc":"2.0"}`,
			wantKind: Request, wantID: `5`, wantMethod: "m", wantParams: `{"a":1}`},
		{name: "request with whitespace everywhere", msg: " \r\n\t{ \"jsonrpc\" : \"2.0\" , \"id\" : 7 , \"method\" : \"m\" , \"params\" : { } }\n",
			wantKind: Request, wantID: `7`, wantMethod: "m", wantParams: `{ }`},
		{name: "request with extra members", msg: `{"jsonrpc":"2.0","id":1,"method":"m","extra":[1,2]}`,
			wantKind: Request, wantID: `1`, wantMethod: "m"},
		{name: "notification", msg: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			wantKind: Notification, wantID: noID, wantMethod: "notifications/initialized"},
		{name: "notification with params", msg: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			wantKind: Notification, wantID: noID, wantMethod: "notifications/cancelled", wantParams: `{"requestId":1}`},
		{name: "response with result", msg: `{"jsonrpc":"2.0","id":1,"result":{}}`,
			wantKind: Response, wantID: `1`},
		{name: "response with null result", msg: `{"jsonrpc":"2.0","id":"r","result":null}`,
			wantKind: Response, wantID: `"r"`},
		{name: "response with error", msg: `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no"}}`,
			wantKind: Response, wantID: `"x"`},

		// Not JSON.
		{name: "empty message", msg: ``, wantKind: Invalid, wantCode: CodeParseError, wantMsg: "parse error"},
		{name: "only whitespace", msg: " \n\t ", wantKind: Invalid, wantCode: CodeParseError, wantMsg: "parse error"},
		{name: "truncated object", msg: `{"jsonrpc":"2.0","id":1`, wantKind: Invalid, wantCode: CodeParseError, wantMsg: "not valid JSON"},
		{name: "missing value", msg: `{"jsonrpc":}`, wantKind: Invalid, wantCode: CodeParseError},
		{name: "plain text", msg: `hello`, wantKind: Invalid, wantCode: CodeParseError},
		{name: "single quotes", msg: `{'jsonrpc':'2.0'}`, wantKind: Invalid, wantCode: CodeParseError},
		{name: "two objects", msg: `{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}`, wantKind: Invalid, wantCode: CodeParseError},
		{name: "trailing comma", msg: `{"jsonrpc":"2.0","method":"a",}`, wantKind: Invalid, wantCode: CodeParseError},
		{name: "parse error hides a readable id", msg: `{"jsonrpc":"2.0","id":9,"method":}`, wantKind: Invalid, wantCode: CodeParseError},

		// Valid JSON that is not one object.
		{name: "batch", msg: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "batches are not supported"},
		{name: "empty batch", msg: ` [] `, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "batches"},
		{name: "number", msg: `1`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "must be a JSON object"},
		{name: "string", msg: `"ping"`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "must be a JSON object"},
		{name: "null", msg: `null`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "must be a JSON object"},
		{name: "boolean", msg: `true`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "must be a JSON object"},

		// jsonrpc member.
		{name: "jsonrpc missing", msg: `{"id":3,"method":"ping"}`, wantKind: Invalid, wantID: `3`, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc" must be "2.0"`},
		{name: "jsonrpc 1.0", msg: `{"jsonrpc":"1.0","id":3,"method":"ping"}`, wantKind: Invalid, wantID: `3`, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc"`},
		{name: "jsonrpc as number", msg: `{"jsonrpc":2.0,"id":"s","method":"ping"}`, wantKind: Invalid, wantID: `"s"`, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc"`},
		{name: "jsonrpc with inner space", msg: `{"jsonrpc":"2.0 ","method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc"`},
		{name: "jsonrpc null", msg: `{"jsonrpc":null,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc"`},
		{name: "jsonrpc key in wrong case", msg: `{"JSONRPC":"2.0","id":1,"method":"ping"}`, wantKind: Invalid, wantID: `1`, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc"`},
		{name: "response without jsonrpc", msg: `{"id":1,"result":{}}`, wantKind: Invalid, wantID: `1`, wantCode: CodeInvalidRequest, wantMsg: `"jsonrpc"`},

		// id member.
		{name: "id null", msg: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be a string or an integer"},
		{name: "id object", msg: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id array", msg: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id boolean", msg: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id float", msg: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id integral float", msg: `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id with exponent", msg: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id with capital exponent", msg: `{"jsonrpc":"2.0","id":1E3,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id with negative exponent", msg: `{"jsonrpc":"2.0","id":-5e-1,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id just above int64", msg: `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id just below int64", msg: `{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id far beyond int64", msg: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "id null in a response", msg: `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},
		{name: "bad id checked before jsonrpc", msg: `{"id":null}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "id must be"},

		// method member.
		{name: "method missing", msg: `{"jsonrpc":"2.0","id":4}`, wantKind: Invalid, wantID: `4`, wantCode: CodeInvalidRequest, wantMsg: `"method" is missing`},
		{name: "method missing without id", msg: `{"jsonrpc":"2.0"}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: `"method" is missing`},
		{name: "method number", msg: `{"jsonrpc":"2.0","id":4,"method":1}`, wantKind: Invalid, wantID: `4`, wantCode: CodeInvalidRequest, wantMsg: `"method" must be a non-empty string`},
		{name: "method null", msg: `{"jsonrpc":"2.0","id":4,"method":null}`, wantKind: Invalid, wantID: `4`, wantCode: CodeInvalidRequest, wantMsg: `"method" must be a non-empty string`},
		{name: "method object", msg: `{"jsonrpc":"2.0","method":{}}`, wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: `"method" must be a non-empty string`},
		{name: "method empty", msg: `{"jsonrpc":"2.0","id":"q","method":""}`, wantKind: Invalid, wantID: `"q"`, wantCode: CodeInvalidRequest, wantMsg: `"method" must be a non-empty string`},

		// params member.
		{name: "params array", msg: `{"jsonrpc":"2.0","id":5,"method":"m","params":[1,2]}`, wantKind: Invalid, wantID: `5`, wantCode: CodeInvalidParams, wantMsg: `params of "m" must be an object`},
		{name: "params string", msg: `{"jsonrpc":"2.0","id":5,"method":"m","params":"x"}`, wantKind: Invalid, wantID: `5`, wantCode: CodeInvalidParams, wantMsg: "must be an object"},
		{name: "params null", msg: `{"jsonrpc":"2.0","id":5,"method":"m","params":null}`, wantKind: Invalid, wantID: `5`, wantCode: CodeInvalidParams, wantMsg: "must be an object"},
		{name: "params number", msg: `{"jsonrpc":"2.0","id":5,"method":"m","params":0}`, wantKind: Invalid, wantID: `5`, wantCode: CodeInvalidParams, wantMsg: "must be an object"},
		{name: "notification params array", msg: `{"jsonrpc":"2.0","method":"n","params":[]}`, wantKind: Invalid, wantCode: CodeInvalidParams, wantMsg: `params of "n"`},

		// Notification methods with an id.
		{name: "notification with an id", msg: `{"jsonrpc":"2.0","id":5,"method":"notifications/initialized"}`, wantKind: Invalid, wantID: `5`, wantCode: CodeInvalidRequest, wantMsg: `"notifications/initialized" is a notification`},
		{name: "unknown notification with a string id", msg: `{"jsonrpc":"2.0","id":"n","method":"notifications/x","params":{}}`, wantKind: Invalid, wantID: `"n"`, wantCode: CodeInvalidRequest, wantMsg: "carries no \"id\""},
		{name: "escaped notification method with an id", msg: `{"jsonrpc":"2.0","id":5,"method":"notifications\/cancelled"}`, wantKind: Invalid, wantID: `5`, wantCode: CodeInvalidRequest, wantMsg: "notification"},
		{name: "method merely named like a notification", msg: `{"jsonrpc":"2.0","id":5,"method":"notifications"}`,
			wantKind: Request, wantID: `5`, wantMethod: "notifications"},

		// Nesting depth.
		{name: "arguments nested to the limit", msg: nestedCall(1, MaxDepth), wantKind: Request, wantID: `1`, wantMethod: "tools/call", wantParams: nestedParams(MaxDepth)},
		{name: "arguments nested past the limit", msg: nestedCall(2, MaxDepth+1), wantKind: Invalid, wantID: `2`, wantCode: CodeInvalidRequest, wantMsg: "deeper than 512 levels"},
		{name: "nested a thousand levels", msg: nestedCall(3, 1000), wantKind: Invalid, wantID: `3`, wantCode: CodeInvalidRequest, wantMsg: "deeper than"},
		{name: "nesting past the limit in a notification", msg: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}}`,
			wantKind: Invalid, wantCode: CodeInvalidRequest, wantMsg: "deeper than"},
		{name: "nesting past the limit in a response", msg: `{"jsonrpc":"2.0","id":4,"result":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`,
			wantKind: Invalid, wantID: `4`, wantCode: CodeInvalidRequest, wantMsg: "deeper than"},
		{name: "nesting past the limit outside params", msg: `{"jsonrpc":"2.0","id":4,"method":"ping","x":` + strings.Repeat("{\"a\":", MaxDepth) + "0" + strings.Repeat("}", MaxDepth) + `}`,
			wantKind: Invalid, wantID: `4`, wantCode: CodeInvalidRequest, wantMsg: "deeper than"},
		{name: "brackets in strings are not nesting", msg: `{"jsonrpc":"2.0","id":6,"method":"m","params":{"s":"` + strings.Repeat("[{", 2*MaxDepth) + `"}}`,
			wantKind: Request, wantID: `6`, wantMethod: "m", wantParams: `{"s":"` + strings.Repeat("[{", 2*MaxDepth) + `"}`},

		// Numbers beyond float64.
		{name: "number beyond float64", msg: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"c","arguments":{"a":1e400}}}`,
			wantKind: Invalid, wantID: `7`, wantCode: CodeInvalidParams, wantMsg: "the number 1e400 is beyond the range of a 64-bit float"},
		{name: "negative number beyond float64", msg: `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":[0,-1E+309]}}`,
			wantKind: Invalid, wantID: `7`, wantCode: CodeInvalidParams, wantMsg: "-1E+309"},
		{name: "just past the largest float64", msg: `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1.7976931348623159e308}}`,
			wantKind: Invalid, wantID: `7`, wantCode: CodeInvalidParams, wantMsg: "beyond the range"},
		{name: "309 digits", msg: `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":` + strings.Repeat("9", 309) + `}}`,
			wantKind: Invalid, wantID: `7`, wantCode: CodeInvalidParams, wantMsg: "the number " + strings.Repeat("9", 40) + "..."},
		{name: "the first of two big numbers is named", msg: `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":2e999,"b":1e400}}`,
			wantKind: Invalid, wantID: `7`, wantCode: CodeInvalidParams, wantMsg: "2e999"},
		{name: "big number in a notification", msg: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1e400}}`,
			wantKind: Invalid, wantCode: CodeInvalidParams, wantMsg: "1e400"},
		{name: "big number in a response", msg: `{"jsonrpc":"2.0","id":"r","result":{"n":1e400}}`,
			wantKind: Invalid, wantID: `"r"`, wantCode: CodeInvalidParams, wantMsg: "1e400"},
		{name: "big number outside params", msg: `{"jsonrpc":"2.0","id":8,"method":"ping","x":1e400}`,
			wantKind: Invalid, wantID: `8`, wantCode: CodeInvalidParams, wantMsg: "1e400"},
		{name: "largest float64", msg: `{"jsonrpc":"2.0","id":9,"method":"m","params":{"a":1.7976931348623157e308,"b":-1.7976931348623157E+308}}`,
			wantKind: Request, wantID: `9`, wantMethod: "m", wantParams: `{"a":1.7976931348623157e308,"b":-1.7976931348623157E+308}`},
		{name: "underflow reads as zero", msg: `{"jsonrpc":"2.0","id":9,"method":"m","params":{"a":1e-400,"b":0e99999}}`,
			wantKind: Request, wantID: `9`, wantMethod: "m", wantParams: `{"a":1e-400,"b":0e99999}`},
		{name: "308 digits", msg: `{"jsonrpc":"2.0","id":9,"method":"m","params":{"a":` + strings.Repeat("9", 308) + `}}`,
			wantKind: Request, wantID: `9`, wantMethod: "m", wantParams: `{"a":` + strings.Repeat("9", 308) + `}`},
		{name: "big numbers in strings are text", msg: `{"jsonrpc":"2.0","id":9,"method":"m","params":{"a":"1e400"}}`,
			wantKind: Request, wantID: `9`, wantMethod: "m", wantParams: `{"a":"1e400"}`},

		// result and error.
		{name: "response with result and error", msg: `{"jsonrpc":"2.0","id":6,"result":{},"error":{"code":1,"message":"m"}}`, wantKind: Invalid, wantID: `6`, wantCode: CodeInvalidRequest},
		{name: "response without id", msg: `{"jsonrpc":"2.0","result":{}}`, wantKind: Invalid, wantCode: CodeInvalidRequest},
		{name: "error response without id", msg: `{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}`, wantKind: Invalid, wantCode: CodeInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Inspect([]byte(tc.msg))
			if want := referenceInspect([]byte(tc.msg)); !reflect.DeepEqual(v, want) {
				t.Errorf("Inspect = %+v; the map-decoding reference gives %+v", v, want)
			}
			if v.Kind != tc.wantKind {
				t.Fatalf("Kind = %d, want %d (verdict %+v)", v.Kind, tc.wantKind, v)
			}
			if tc.wantID == noID {
				if v.ID != nil {
					t.Errorf("ID = %s, want nil", v.ID)
				}
			} else if string(v.ID) != tc.wantID {
				t.Errorf("ID = %s, want %s", v.ID, tc.wantID)
			}
			if v.Method != tc.wantMethod {
				t.Errorf("Method = %q, want %q", v.Method, tc.wantMethod)
			}
			if string(v.Params) != tc.wantParams {
				t.Errorf("Params = %s, want %s", v.Params, tc.wantParams)
			}
			if v.Code != tc.wantCode {
				t.Errorf("Code = %d, want %d", v.Code, tc.wantCode)
			}
			if tc.wantKind == Invalid {
				if v.Message == "" {
					t.Error("Message is empty for an Invalid verdict")
				}
				if !strings.Contains(v.Message, tc.wantMsg) {
					t.Errorf("Message = %q, want it to contain %q", v.Message, tc.wantMsg)
				}
			} else if v.Message != "" {
				t.Errorf("Message = %q for a %d verdict, want empty", v.Message, v.Kind)
			}
		})
	}
}

// nestedCall is a tools/call whose message nests depth levels deep.
func nestedCall(id, depth int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, nestedParams(depth))
}

// nestedParams is the params of nestedCall: the message's own object and
// params take two levels, arguments the rest.
func nestedParams(depth int) string {
	inner := depth - 3
	return `{"name":"t","arguments":{"a":` + strings.Repeat("[", inner) + strings.Repeat("]", inner) + `}}`
}

func TestErrorResponse(t *testing.T) {
	tests := []struct {
		name    string
		id      json.RawMessage
		code    int
		message string
		wantID  string
	}{
		{"nil id is null", nil, CodeParseError, "parse error", `null`},
		{"integer id", json.RawMessage(`42`), CodeInvalidRequest, "bad", `42`},
		{"negative id", json.RawMessage(`-7`), CodeInvalidParams, "bad params", `-7`},
		{"string id", json.RawMessage(`"abc"`), CodeMethodNotFound, "no such method", `"abc"`},
		{"escaped string id", json.RawMessage(`"\u0061"`), CodeInternalError, "oops", `"\u0061"`},
		{"empty string id", json.RawMessage(`""`), CodeInvalidRequest, "x", `""`},
		{"message needing escapes", json.RawMessage(`1`), CodeInvalidRequest, "quote \" backslash \\ newline \n tab \t snowman \u2603", `1`},
		{"empty message", json.RawMessage(`1`), CodeInvalidRequest, "", `1`},
		{"empty non-nil id is null", json.RawMessage{}, CodeInvalidRequest, "x", `null`},
		{"id with characters encoding/json escapes", json.RawMessage("\"<&>\u2028\""), CodeInvalidRequest, "x", "\"<&>\u2028\""},
		{"big integer id", json.RawMessage(`9223372036854775807`), CodeInvalidRequest, "x", `9223372036854775807`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := ErrorResponse(tc.id, tc.code, tc.message)
			if !json.Valid(out) {
				t.Fatalf("ErrorResponse = %q, not valid JSON", out)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(out, &top); err != nil {
				t.Fatalf("ErrorResponse = %s, not an object: %v", out, err)
			}
			if len(top) != 3 {
				t.Errorf("ErrorResponse has members %v, want exactly jsonrpc, id and error", keys(top))
			}
			if got := string(top["jsonrpc"]); got != `"2.0"` {
				t.Errorf("jsonrpc = %s, want \"2.0\"", got)
			}
			if got := string(top["id"]); got != tc.wantID {
				t.Errorf("id = %s, want %s", got, tc.wantID)
			}
			var e map[string]json.RawMessage
			if err := json.Unmarshal(top["error"], &e); err != nil {
				t.Fatalf("error member %s is not an object: %v", top["error"], err)
			}
			if len(e) != 2 {
				t.Errorf("error object has members %v, want exactly code and message", keys(e))
			}
			var code int
			if err := json.Unmarshal(e["code"], &code); err != nil || code != tc.code {
				t.Errorf("error.code = %s, want %d", e["code"], tc.code)
			}
			var msg string
			if err := json.Unmarshal(e["message"], &msg); err != nil || msg != tc.message {
				t.Errorf("error.message = %s, want %q", e["message"], tc.message)
			}
		})
	}
}

// errorResponse is a JSON-RPC error response on the wire.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestErrorResponseForInvalidVerdicts(t *testing.T) {
	// Every refusal Inspect produces becomes a response echoing the id.
	tests := []struct {
		msg    string
		wantID string
	}{
		{`{`, `null`},
		{`[]`, `null`},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, `null`},
		{`{"jsonrpc":"1.0","id":"req-1","method":"m"}`, `"req-1"`},
		{`{"jsonrpc":"2.0","id":77,"method":"m","params":[]}`, `77`},
		{`{"jsonrpc":"2.0","id":"\u00e9","method":""}`, `"\u00e9"`},
	}
	for _, tc := range tests {
		t.Run(tc.msg, func(t *testing.T) {
			v := Inspect([]byte(tc.msg))
			if v.Kind != Invalid {
				t.Fatalf("Inspect kind = %d, want Invalid", v.Kind)
			}
			out := ErrorResponse(v.ID, v.Code, v.Message)
			var resp errorResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("ErrorResponse = %q: %v", out, err)
			}
			if string(resp.ID) != tc.wantID {
				t.Errorf("id = %s, want %s", resp.ID, tc.wantID)
			}
			if resp.Error.Code != v.Code || resp.Error.Message != v.Message {
				t.Errorf("error = %d %q, want %d %q", resp.Error.Code, resp.Error.Message, v.Code, v.Message)
			}
		})
	}
}

func TestHasModernMeta(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   bool
	}{
		{"absent params", "", false},
		{"empty object", `{}`, false},
		{"meta without the key", `{"_meta":{"progressToken":1}}`, false},
		{"meta with the key", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, true},
		{"meta with the key and others", `{"name":"x","_meta":{"a":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, true},
		{"key present with null value", `{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}`, true},
		{"key outside _meta", `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, false},
		{"key nested deeper", `{"_meta":{"x":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false},
		{"key with different case", `{"_meta":{"io.modelcontextprotocol/ProtocolVersion":"2026-07-28"}}`, false},
		{"_meta with different case", `{"_META":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, false},
		{"key escaped", `{"_meta":{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28"}}`, true},
		{"_meta null", `{"_meta":null}`, false},
		{"_meta array", `{"_meta":["io.modelcontextprotocol/protocolVersion"]}`, false},
		{"_meta string", `{"_meta":"io.modelcontextprotocol/protocolVersion"}`, false},
		{"params array", `[{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}]`, false},
		{"params not JSON", `{"_meta":`, false},
		{"params null", `null`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var params json.RawMessage
			if tc.params != "" {
				params = json.RawMessage(tc.params)
			}
			if got := HasModernMeta(params); got != tc.want {
				t.Errorf("HasModernMeta(%s) = %v, want %v", tc.params, got, tc.want)
			}
		})
	}
	t.Run("params from an inspected request", func(t *testing.T) {
		v := Inspect([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
		if v.Kind != Request {
			t.Fatalf("Kind = %d, want Request", v.Kind)
		}
		if !HasModernMeta(v.Params) {
			t.Errorf("HasModernMeta(%s) = false, want true", v.Params)
		}
	})
}

func TestIDKey(t *testing.T) {
	t.Run("same value, same key", func(t *testing.T) {
		pairs := [][2]string{
			{`"a"`, `"\u0061"`},
			{`"é"`, `"\u00e9"`},
			{`"a/b"`, `"a\/b"`},
			{`1`, `1`},
			{`1`, ` 1 `},
			{`0`, `-0`},
			{`"x"`, "\t\"x\"\n"},
		}
		for _, p := range pairs {
			a, b := IDKey(json.RawMessage(p[0])), IDKey(json.RawMessage(p[1]))
			if a == "" || a != b {
				t.Errorf("IDKey(%s) = %q, IDKey(%s) = %q, want the same non-empty key", p[0], a, p[1], b)
			}
		}
	})
	t.Run("different values, different keys", func(t *testing.T) {
		pairs := [][2]string{
			{`1`, `"1"`},
			{`0`, `""`},
			{`"a"`, `"b"`},
			{`"a"`, `"A"`},
			{`1`, `2`},
			{`-1`, `1`},
			{`"n1"`, `1`},
			{`"s"`, `""`},
			{`9223372036854775807`, `-9223372036854775808`},
		}
		for _, p := range pairs {
			a, b := IDKey(json.RawMessage(p[0])), IDKey(json.RawMessage(p[1]))
			if a == "" || b == "" || a == b {
				t.Errorf("IDKey(%s) = %q, IDKey(%s) = %q, want distinct non-empty keys", p[0], a, p[1], b)
			}
		}
	})
	t.Run("unreadable ids have the empty key", func(t *testing.T) {
		for _, raw := range []string{``, ` `, `null`, `true`, `{}`, `[]`, `[1]`, `1.0`, `1.5`, `1e2`, `9223372036854775808`, `"unterminated`, `abc`, `-`, `01`} {
			if got := IDKey(json.RawMessage(raw)); got != "" {
				t.Errorf("IDKey(%q) = %q, want \"\"", raw, got)
			}
		}
	})
	t.Run("nil id", func(t *testing.T) {
		if got := IDKey(nil); got != "" {
			t.Errorf("IDKey(nil) = %q, want \"\"", got)
		}
	})
	t.Run("matches request ids to response ids", func(t *testing.T) {
		req := Inspect([]byte(`{"jsonrpc":"2.0","id":"\u0072eq","method":"m"}`))
		resp := Inspect([]byte(`{"jsonrpc":"2.0","id":"req","result":{}}`))
		if req.Kind != Request || resp.Kind != Response {
			t.Fatalf("kinds = %d, %d, want Request, Response", req.Kind, resp.Kind)
		}
		if IDKey(req.ID) != IDKey(resp.ID) {
			t.Errorf("IDKey(%s) = %q, IDKey(%s) = %q, want equal", req.ID, IDKey(req.ID), resp.ID, IDKey(resp.ID))
		}
	})
}

func FuzzInspect(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":"\u0061<>&","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"1.0","id":-5,"method":"m","params":[]}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"m"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":9223372036854775808}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"\"}",
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"m","params":{"a":[[1e400]]}}`,
		`{"jsonrpc":"2.0","id":"~\u0041","method":"notifications/x"}`,
		`{`,
		``,
	} {
		f.Add([]byte(s))
	}
	validCodes := map[int]bool{CodeParseError: true, CodeInvalidRequest: true, CodeInvalidParams: true}

	f.Fuzz(func(t *testing.T, msg []byte) {
		v := Inspect(msg)
		if want := referenceInspect(msg); !reflect.DeepEqual(v, want) {
			t.Fatalf("Inspect(%q) = %+v; the map-decoding reference gives %+v", msg, v, want)
		}

		// The id the message carries, if it is an object with one.
		var env map[string]json.RawMessage
		_ = json.Unmarshal(bytes.TrimSpace(msg), &env)
		inputID, hasInputID := env["id"]

		switch v.Kind {
		case Invalid:
			if !validCodes[v.Code] {
				t.Fatalf("Invalid verdict with code %d; input %q", v.Code, msg)
			}
			if v.Message == "" {
				t.Fatalf("Invalid verdict without a message; input %q", msg)
			}
			out := ErrorResponse(v.ID, v.Code, v.Message)
			if !json.Valid(out) {
				t.Fatalf("ErrorResponse = %q is not valid JSON; input %q", out, msg)
			}
			var resp errorResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("ErrorResponse = %q does not decode: %v", out, err)
			}
			if resp.JSONRPC != "2.0" || resp.Error.Code != v.Code || resp.Error.Message != v.Message {
				t.Fatalf("ErrorResponse = %s, want jsonrpc 2.0, code %d, message %q", out, v.Code, v.Message)
			}
			if v.ID == nil {
				if string(resp.ID) != "null" {
					t.Fatalf("ErrorResponse id = %s for a nil verdict id, want null", resp.ID)
				}
				return
			}
			if !hasInputID {
				t.Fatalf("verdict has id %s but the input has none; input %q", v.ID, msg)
			}
			if k := IDKey(resp.ID); k == "" || k != IDKey(inputID) {
				t.Fatalf("ErrorResponse id = %s (key %q), input id = %s (key %q)", resp.ID, k, inputID, IDKey(inputID))
			}
			if !bytes.Equal(resp.ID, v.ID) {
				t.Fatalf("ErrorResponse id = %s; want the verdict's id %s byte for byte", resp.ID, v.ID)
			}
		case Request, Response:
			if v.Code != 0 || v.Message != "" {
				t.Fatalf("kind %d verdict with code %d, message %q", v.Kind, v.Code, v.Message)
			}
			if IDKey(v.ID) == "" {
				t.Fatalf("kind %d verdict with unreadable id %q; input %q", v.Kind, v.ID, msg)
			}
			if !hasInputID || IDKey(inputID) != IDKey(v.ID) {
				t.Fatalf("verdict id %s does not match input id %s", v.ID, inputID)
			}
			if v.Kind == Request && v.Method == "" {
				t.Fatalf("Request without a method; input %q", msg)
			}
			if v.Kind == Request && PlainID(v.ID) && !sdkEchoes(t, string(v.ID)) {
				t.Fatalf("PlainID(%s) is true, but the SDK does not give the id back byte for byte", v.ID)
			}
			if v.Kind == Response && (v.Method != "" || v.Params != nil) {
				t.Fatalf("Response with method %q, params %s", v.Method, v.Params)
			}
		case Notification:
			if v.Code != 0 || v.Message != "" {
				t.Fatalf("Notification with code %d, message %q", v.Code, v.Message)
			}
			if v.ID != nil || hasInputID {
				t.Fatalf("Notification with id %s (input id %s)", v.ID, inputID)
			}
			if v.Method == "" {
				t.Fatalf("Notification without a method; input %q", msg)
			}
		default:
			t.Fatalf("unknown kind %d; input %q", v.Kind, msg)
		}
		if v.Kind != Invalid && v.Params != nil {
			if p := bytes.TrimSpace(v.Params); len(p) == 0 || p[0] != '{' || !json.Valid(p) {
				t.Fatalf("accepted params %q are not an object", v.Params)
			}
		}
	})
}

func TestOnlyJSONWhiteSpaceIsTrimmed(t *testing.T) {
	if v := Inspect([]byte("\u00a0{\"jsonrpc\":\"2.0\",\"method\":\"x\"}")); v.Kind != Invalid || v.Code != CodeParseError {
		t.Fatalf("a message led by U+00A0 = %+v; want a parse error", v)
	}
	if v := Inspect([]byte(" \t\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n")); v.Kind != Notification {
		t.Fatalf("JSON white space around a message = %+v; want a notification", v)
	}
}

// referenceInspect is Inspect as it was first written, decoding the
// envelope into a map; Inspect now scans instead, and must agree with it.
// The check that comes before either, notAnObject, is shared.
func referenceInspect(msg []byte) Verdict {
	trimmed := Trim(msg)
	if v, bad := notAnObject(trimmed); bad {
		return v
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &env); err != nil {
		return invalid(nil, CodeParseError, "parse error: "+err.Error())
	}
	rawID, hasID := env["id"]
	var id json.RawMessage
	if hasID {
		var ok bool
		if id, ok = referenceCheckID(rawID); !ok {
			return invalid(nil, CodeInvalidRequest, "invalid request: id must be a string or an integer (MCP forbids null)")
		}
	}
	if v, ok := env["jsonrpc"]; !ok || string(Trim(v)) != `"2.0"` {
		return invalid(id, CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	rawMethod, hasMethod := env["method"]
	if !hasMethod {
		_, hasResult := env["result"]
		_, hasError := env["error"]
		if hasID && hasResult != hasError {
			return referenceLimits(trimmed, Verdict{Kind: Response, ID: id})
		}
		return invalid(id, CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	var method string
	if err := json.Unmarshal(rawMethod, &method); err != nil || method == "" {
		return invalid(id, CodeInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	params, hasParams := env["params"]
	if hasParams {
		if p := bytes.Trim(params, jsonSpace); len(p) == 0 || p[0] != '{' {
			return invalid(id, CodeInvalidParams, fmt.Sprintf("invalid params: params of %q must be an object", method))
		}
	}
	if hasID && strings.HasPrefix(method, "notifications/") {
		return invalid(id, CodeInvalidRequest, notificationWithID(method))
	}
	kind := Notification
	if hasID {
		kind = Request
	}
	return referenceLimits(trimmed, Verdict{Kind: kind, ID: id, Method: method, Params: params})
}

// referenceLimits is the limits' check on encoding/json's reading of msg.
func referenceLimits(msg []byte, v Verdict) Verdict {
	depth, big := referenceWalk(msg)
	switch {
	case depth > MaxDepth:
		return invalid(v.ID, CodeInvalidRequest, tooDeep)
	case big != nil:
		return invalid(v.ID, CodeInvalidParams, numberOutOfRange(big))
	}
	return v
}

// referenceWalk reads msg, valid JSON, token by token with encoding/json
// and returns how deep it nests and its first number that encoding/json
// cannot decode into a float64.
func referenceWalk(msg []byte) (depth int, bigNumber []byte) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	open := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return depth, bigNumber
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				open++
				depth = max(depth, open)
			} else {
				open--
			}
		case json.Number:
			var f float64
			if bigNumber == nil && json.Unmarshal([]byte(tok), &f) != nil {
				bigNumber = []byte(tok)
			}
		}
	}
}

func referenceCheckID(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.Trim(raw, jsonSpace)
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		return raw, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if bytes.ContainsAny(raw, ".eE") {
			return nil, false
		}
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return nil, false
		}
		if _, err := n.Int64(); err != nil {
			return nil, false
		}
		return raw, true
	}
	return nil, false
}

func TestResultResponse(t *testing.T) {
	for _, id := range []string{`1`, `"\u0061"`, "\"<&>\u2028\"", `9223372036854775807`} {
		out := ResultResponse(json.RawMessage(id), json.RawMessage(`{"tasks":[]}`))
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"tasks":[]}}`; string(out) != want {
			t.Errorf("ResultResponse(%s) = %s; want %s", id, out, want)
		}
	}
}
