// Tests of the SDK, built as a wasmcp tool "astest" and run under the real
// server by as_test.go. AssemblyScript has no exceptions, so failure paths
// that end the process are separate calls, chosen by the "case" argument;
// everything else runs in the "unit" case, which prints one line per failed
// check and a closing count.

import {
  args, text, fail, log, progress, toolName, Level,
  parseJSON, quote, JSONWriter, JSONValue, JSONKind, json, MAX_DEPTH,
  http, httpRequestJSON, httpAnswer, HttpResult, Code, elicit, askRequestJSON,
} from "../assembly/wasmcp";

let passed = 0;
let failed = 0;
const failures: string[] = [];

function check(name: string, ok: bool, detail: string = ""): void {
  if (ok) {
    passed++;
  } else {
    failed++;
    failures.push("FAIL " + name + (detail.length > 0 ? ": " + detail : ""));
  }
}

function eq(name: string, got: string, want: string): void {
  check(name, got == want, "got " + quote(got) + ", want " + quote(want));
}

function reserialize(v: JSONValue): string {
  return new JSONWriter().value(v).toString();
}

// Valid documents and their canonical form, written back by JSONWriter.value.
function testRoundTrip(): void {
  const cases: string[][] = [
    ["{}", "{}"],
    ["[]", "[]"],
    [" \t\r\n{ \"a\" : [ 1 , 2 ] }\n", "{\"a\":[1,2]}"],
    ["{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}", "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}"],
    ["[[[]],{}]", "[[[]],{}]"],
    ["\"\"", "\"\""],
    ["-0", "-0"],
    ["[0,-1,1.5,-2.25e-7,1E+2,12345678901234567890123]", "[0,-1,1.5,-2.25e-7,1E+2,12345678901234567890123]"],
    ["\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "\"/\\b\\f\\n\\r\\t\\\"\\\\\""],
    ["\"é😀 \\u00e9\\uD83D\\uDE00\"", "\"é😀 é😀\""],
    ["{\"z\":1,\"a\":2}", "{\"z\":1,\"a\":2}"],
  ];
  for (let i = 0; i < cases.length; i++) {
    const r = parseJSON(cases[i][0]);
    if (!r.ok) {
      check("parse " + cases[i][0], false, r.error);
      continue;
    }
    eq("round trip " + cases[i][0], reserialize(r.value!), cases[i][1]);
  }
}

function parseString(src: string): string {
  const r = parseJSON(src);
  if (!r.ok) return "error: " + r.error;
  if (r.value!.kind != JSONKind.String) return "not a string";
  return r.value!.str;
}

function testStrings(): void {
  eq("escapes", parseString("\"a\\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\""), "a\"b\\c/d\be\ff\ng\rh\ti");
  eq("BMP escape", parseString("\"\\u0041\\u00e9\\u20AC\\uffff\""), "A\u00e9\u20AC\uFFFF");
  eq("NUL escape", parseString("\"a\\u0000b\""), "a\u0000b");
  eq("surrogate pair", parseString("\"\\ud83d\\ude00\""), "\uD83D\uDE00");
  eq("raw non-ASCII", parseString("\"ßæøå 日本 😀\""), "ßæøå 日本 😀");
  // Lone surrogates cannot be represented in UTF-8; they become U+FFFD, as
  // encoding/json makes them.
  eq("lone high", parseString("\"\\ud800\""), "\uFFFD");
  eq("lone low", parseString("\"\\udc00x\""), "\uFFFDx");
  eq("high then BMP", parseString("\"\\ud800\\u0041\""), "\uFFFDA");
  eq("high then high pair", parseString("\"\\ud800\\ud83d\\ude00\""), "\uFFFD\uD83D\uDE00");
  eq("high then text", parseString("\"\\ud800abc\""), "\uFFFDabc");
  eq("high then other escape", parseString("\"\\ud800\\n\""), "\uFFFD\n");
  eq("reversed pair", parseString("\"\\ude00\\ud83d\""), "\uFFFD\uFFFD");
}

function parseNumber(src: string): f64 {
  const r = parseJSON(src);
  if (!r.ok || r.value!.kind != JSONKind.Number) return NaN;
  return r.value!.num;
}

function testNumbers(): void {
  const cases: string[] = ["0", "-0", "1", "-1", "0.1", "0.30000000000000004", "1e23", "1.5e300",
    "2.2250738585072014e-308", "5e-324", "1.7976931348623157e308", "9007199254740993", "123.456e-2"];
  const want: f64[] = [0, -0.0, 1, -1, 0.1, 0.30000000000000004, 1e23, 1.5e300,
    2.2250738585072014e-308, 5e-324, 1.7976931348623157e308, 9007199254740992, 1.23456];
  for (let i = 0; i < cases.length; i++) {
    const got = parseNumber(cases[i]);
    check("number " + cases[i], got == want[i] && (1 / got) == (1 / want[i]), "got " + got.toString());
  }
}

// Malformed input and the substring its error must contain.
function testErrors(): void {
  const cases: string[][] = [
    ["", "expected a JSON value, found end of input (at character 0)"],
    ["   ", "expected a JSON value, found end of input (at character 3)"],
    ["{", "expected a string key, found end of input"],
    ["{\"a\":1,}", "expected a string key, found '}' (at character 7)"],
    ["{a:1}", "expected a string key, found 'a'"],
    ["{'a':1}", "expected a string key, found '''"],
    ["[1,]", "expected a JSON value, found ']'"],
    ["[,1]", "expected a JSON value, found ','"],
    ["{\"a\" 1}", "expected ':' after an object key, found '1'"],
    ["{\"a\":1 \"b\":2}", "expected ',' or '}' after an object member, found '\"'"],
    ["{\"a\":1", "expected ',' or '}' after an object member, found end of input"],
    ["[1 2]", "expected ',' or ']' after an array element, found '2'"],
    ["[1", "expected ',' or ']' after an array element, found end of input"],
    ["01", "unexpected '1' after the JSON value (at character 1)"],
    ["{} x", "unexpected 'x' after the JSON value (at character 3)"],
    ["1.", "expected a digit after '.', found end of input"],
    [".5", "expected a JSON value, found '.'"],
    ["-", "expected a digit, found end of input"],
    ["-a", "expected a digit, found 'a'"],
    ["+1", "expected a JSON value, found '+'"],
    ["1e", "expected a digit in the exponent, found end of input"],
    ["1e+", "expected a digit in the exponent"],
    ["1e999", "number 1e999 is too large for a 64-bit float (at character 0)"],
    ["[-1e400]", "number -1e400 is too large"],
    ["\"abc", "unterminated string"],
    ["\"a\nb\"", "control character U+000A in a string must be escaped"],
    ["\"a\u0001\"", "control character U+0001"],
    ["\"\\x\"", "invalid escape in a string: \\x (at character 1)"],
    ["\"\\", "invalid escape in a string: \\"],
    ["\"\\u12\"", "expected 4 hex digits after \\u, found '\"'"],
    ["\"\\u12G4\"", "expected 4 hex digits after \\u, found 'G'"],
    ["\"\\ud800\\u12\"", "expected 4 hex digits after \\u"],
    ["tru", "expected a JSON value, found 't'"],
    ["nul", "expected a JSON value, found 'n'"],
    ["True", "expected a JSON value, found 'T'"],
    ["NaN", "expected a JSON value, found 'N'"],
    ["Infinity", "expected a JSON value, found 'I'"],
    ["// c\n{}", "expected a JSON value, found '/'"],
    ["\u00a0{}", "expected a JSON value, found U+00A0"],
    ["{\"a\":1,\"a\":2}", "duplicate key \"a\" (at character 7)"],
    ["{\"a\":{\"b\":1,\"b\":1}}", "duplicate key \"b\""],
    ["truex", "unexpected 'x' after the JSON value"],
  ];
  for (let i = 0; i < cases.length; i++) {
    const r = parseJSON(cases[i][0]);
    check("error for " + quote(cases[i][0]), !r.ok && r.error.includes(cases[i][1]),
      r.ok ? "parsed" : "error " + quote(r.error) + " lacks " + quote(cases[i][1]));
  }
}

function nested(depth: i32): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

function testDepth(): void {
  check("depth at limit", parseJSON(nested(MAX_DEPTH)).ok);
  const r = parseJSON(nested(MAX_DEPTH + 1));
  check("depth over limit", !r.ok && r.error.includes("nested deeper than 64 levels"), r.error);
  // Far past the limit: must fail cleanly, not overflow the stack.
  const deep = parseJSON("{\"a\":" + nested(100000) + "}");
  check("very deep", !deep.ok && deep.error.includes("nested deeper"), deep.error);
  check("custom depth", !parseJSON("[[1]]", 1).ok && parseJSON("[1]", 1).ok);
}

function testQuote(): void {
  eq("quote plain", quote("abc"), "\"abc\"");
  eq("quote specials", quote("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  eq("quote controls", quote("\n\r\t\b\f\u0000\u0001\u001f\u007f"), "\"\\n\\r\\t\\b\\f\\u0000\\u0001\\u001f\u007f\"");
  eq("quote non-ASCII", quote("é😀\u2028"), "\"é😀\u2028\"");
  eq("quote lone surrogates", quote("a\uD800b\uDC00"), "\"a\\ud800b\\udc00\"");
  eq("quote high at end", quote("\uD83D"), "\"\\ud83d\"");
  // Every string comes back from quote and parse unchanged.
  const samples = ["", "\"", "\\", "x\u0000y", "tab\there", "\u0000\u001f \u007f\u0080\u07ff\u0800\uFFFF", "😀😀", "{\"a\":[1]}"];
  for (let i = 0; i < samples.length; i++) {
    eq("quote round trip " + i.toString(), parseString(quote(samples[i])), samples[i]);
  }
}

function testWriter(): void {
  const w = new JSONWriter();
  w.beginObject()
    .key("a").beginArray().integer(1).integer(-2).number(1.5).endArray()
    .key("b").beginObject().endObject()
    .key("c").string("x\"y")
    .key("d").bool(true).key("e").bool(false).key("f").nullValue()
    .key("g").beginArray().beginObject().key("h").beginArray().endArray().endObject().beginArray().endArray().endArray()
    .endObject();
  eq("writer", w.toString(), "{\"a\":[1,-2,1.5],\"b\":{},\"c\":\"x\\\"y\",\"d\":true,\"e\":false,\"f\":null,\"g\":[{\"h\":[]},[]]}");
  eq("writer extremes", new JSONWriter().beginArray().integer(i64.MIN_VALUE).integer(i64.MAX_VALUE).number(-0.0).number(1e21).number(5e-324).endArray().toString(),
    "[-9223372036854775808,9223372036854775807,-0.0,1e+21,5e-324]");
  // The writer's numbers must read back as the same values.
  const nums: f64[] = [0.1, 1 / 3.0, 1e21, 1e-7, 123456789.125, 1.7976931348623157e308, 5e-324, -2.5];
  for (let i = 0; i < nums.length; i++) {
    const s = new JSONWriter().number(nums[i]).toString();
    const back = parseJSON(s);
    check("number " + s + " reads back", back.ok && back.value!.num == nums[i], back.error);
  }
}

function testGetters(): void {
  const r = parseJSON("{\"s\":\"x\",\"n\":2.5,\"i\":9007199254740993,\"neg\":-9223372036854775808,\"max\":9223372036854775807," +
    "\"f\":2.0,\"e\":1e3,\"b\":true,\"z\":null,\"o\":{\"k\":1},\"a\":[1,\"2\"]}");
  if (!r.ok) {
    check("getters document", false, r.error);
    return;
  }
  const o = r.value!;
  eq("getString", o.getString("s"), "x");
  check("getNumber", o.getNumber("n") == 2.5);
  check("getInteger exact", o.getInteger("i") == 9007199254740993);
  check("getInteger min", o.getInteger("neg") == i64.MIN_VALUE);
  check("getInteger max", o.getInteger("max") == i64.MAX_VALUE);
  check("getInteger 2.0", o.getInteger("f") == 2);
  check("getInteger 1e3", o.getInteger("e") == 1000);
  check("getBool", o.getBool("b"));
  check("getObject", o.getObject("o").getInteger("k") == 1);
  const a = o.getArray("a");
  check("getArray", a.length == 2 && a[1].str == "2");
  check("has", o.has("s") && !o.has("z") && !o.has("missing"));
  check("get null member", o.get("z") != null && o.get("z")!.kind == JSONKind.Null);
  check("get missing", o.get("missing") == null);
}

function bytes(a: i32[]): ArrayBuffer {
  const b = new ArrayBuffer(a.length);
  for (let i = 0; i < a.length; i++) store<u8>(changetype<usize>(b) + i, <u8>a[i]);
  return b;
}

function hex(b: ArrayBuffer): string {
  let s = "";
  for (let i = 0; i < b.byteLength; i++) {
    const x = load<u8>(changetype<usize>(b) + i);
    s += (x < 16 ? "0" : "") + x.toString(16);
  }
  return s;
}

// One line per result: "ok STATUS CONTENT-TYPE BODY-HEX" or "err CODE
// denied|not-denied MESSAGE".
function show(r: HttpResult): string {
  if (!r.ok) return "err " + r.code.toString() + " " + (r.denied ? "denied" : "not-denied") + " " + r.error;
  const resp = r.response!;
  const ct = resp.header("content-type");
  return "ok " + resp.status.toString() + " " + (ct != null ? ct : "-") + " " + hex(resp.body);
}

function testHttpRequest(): void {
  eq("request defaults", httpRequestJSON("", "https://x.test/?q=\"a\"", null, null, ""),
    "{\"method\":\"GET\",\"url\":\"https://x.test/?q=\\\"a\\\"\"}");
  const h = new Map<string, string>();
  h.set("Accept", "application/json");
  h.set("X-\"Q\"", "tab\there\\");
  eq("request escaped", httpRequestJSON("POST", "https://x.test/", h, String.UTF8.encode("{\"a\":\"hé\\n\"}\n\u0001"), "github"),
    "{\"method\":\"POST\",\"url\":\"https://x.test/\",\"headers\":{\"Accept\":\"application/json\",\"X-\\\"Q\\\"\":\"tab\\there\\\\\"}," +
    "\"body\":\"{\\\"a\\\":\\\"hé\\\\n\\\"}\\n\\u0001\",\"secret\":\"github\"}");
  const base = "{\"method\":\"PUT\",\"url\":\"u\",";
  eq("empty headers, empty body", httpRequestJSON("PUT", "u", new Map<string, string>(), new ArrayBuffer(0), ""), base + "\"body\":\"\"}");
  eq("NUL is UTF-8", httpRequestJSON("PUT", "u", null, bytes([0x61, 0, 0x62]), ""), base + "\"body\":\"a\\u0000b\"}");
  eq("binary body", httpRequestJSON("PUT", "u", null, bytes([0, 0xff, 0xfe, 0x61]), ""), base + "\"body_base64\":\"AP/+YQ==\"}");
  eq("1 byte", httpRequestJSON("PUT", "u", null, bytes([0xff]), ""), base + "\"body_base64\":\"/w==\"}");
  eq("2 bytes", httpRequestJSON("PUT", "u", null, bytes([0xff, 0xfe]), ""), base + "\"body_base64\":\"//4=\"}");
  eq("3 bytes", httpRequestJSON("PUT", "u", null, bytes([0xff, 0xfe, 0x61]), ""), base + "\"body_base64\":\"//5h\"}");
  eq("encoded surrogate", httpRequestJSON("PUT", "u", null, bytes([0xed, 0xa0, 0x80]), ""), base + "\"body_base64\":\"7aCA\"}");
  eq("truncated character", httpRequestJSON("PUT", "u", null, bytes([0x61, 0x62, 0xc3]), ""), base + "\"body_base64\":\"YWLD\"}");
}

function testHttpAnswers(): void {
  let r = httpAnswer(0, "{\"status\":200,\"headers\":{\"Content-Type\":\"text/plain\",\"X-A\":\"1\"},\"body\":\"h\\u00e9llo\\n\"}");
  eq("text answer", show(r), "ok 200 text/plain 68c3a96c6c6f0a");
  if (r.ok) {
    const resp = r.response!;
    eq("text()", resp.text(), "héllo\n");
    check("header case", resp.header("X-A") == "1" && resp.header("x-a") == "1" && resp.header("X") == null);
    check("headers kept", resp.headers.size == 2 && resp.headers.has("Content-Type"));
  }
  eq("base64 answer", show(httpAnswer(0, "{\"status\":201,\"body_base64\":\"AP/+YQ==\"}")), "ok 201 - 00fffe61");
  const b64 = ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "+/+/"];
  const want = ["", "66", "666f", "666f6f", "666f6f62", "fbffbf"];
  for (let i = 0; i < b64.length; i++) {
    eq("base64 " + b64[i], show(httpAnswer(0, "{\"status\":200,\"body_base64\":\"" + b64[i] + "\"}")), "ok 200 - " + want[i]);
  }
  eq("no body", show(httpAnswer(0, "{\"status\":204,\"headers\":null,\"extra\":[1]}")), "ok 204 - ");
  eq("body wins", show(httpAnswer(0, "{\"status\":200,\"body\":\"a\\u0000b\",\"body_base64\":\"eA==\"}")), "ok 200 - 610062");

  // Refusals carry the host's message; without one, the code speaks.
  r = httpAnswer(7, "{\"error\":\"http requests to https://x.test/: no grant\"}");
  check("denied", !r.ok && r.response == null && r.denied);
  eq("denied message", show(r), "err 7 denied http requests to https://x.test/: no grant");
  eq("network", show(httpAnswer(8, "{\"error\":\"dial tcp: i/o timeout\"}")), "err 8 not-denied dial tcp: i/o timeout");
  eq("bare 7", show(httpAnswer(7, "")), "err 7 denied wasmcp host: the server's policy does not allow this request");
  eq("bare 4", show(httpAnswer(Code.TooLong, "")), "err 4 not-denied wasmcp host: the request is too long");
  eq("bare 5", show(httpAnswer(Code.Limit, "")), "err 5 not-denied wasmcp host: this call's allowance of requests is used up");
  eq("unknown code", show(httpAnswer(42, "")), "err 42 not-denied wasmcp host: error 42");
  eq("truncated error", show(httpAnswer(8, "{\"error\":")), "err 8 not-denied wasmcp host: the request failed");
  eq("error not a string", show(httpAnswer(7, "{\"error\":7}")), "err 7 denied wasmcp host: the server's policy does not allow this request");
  eq("empty error", show(httpAnswer(7, "{\"error\":\"\"}")), "err 7 denied wasmcp host: the server's policy does not allow this request");

  // Hostile or broken success answers fail cleanly, with -1.
  const bad: string[][] = [
    ["{\"status\":200,\"body\":\"ab", "unreadable http answer: unterminated string"],
    ["", "unreadable http answer: there is none"],
    ["[]", "unreadable http answer: not a JSON object"],
    ["{\"status\":\"200\"}", "status is not an HTTP status"],
    ["{\"status\":2.5}", "status is not an HTTP status"],
    ["{\"status\":2e2}", "status is not an HTTP status"],
    ["{\"status\":-1}", "status is not an HTTP status"],
    ["{\"status\":1000}", "status is not an HTTP status"],
    ["{\"status\":99999999999999999999999}", "status is not an HTTP status"],
    ["{\"status\":200,\"headers\":[]}", "headers is not an object"],
    ["{\"status\":200,\"headers\":{\"A\":\"b\",\"C\":1}}", "a header's value is not a string"],
    ["{\"status\":200,\"body\":5}", "body is not a string"],
    ["{\"status\":200,\"body_base64\":7}", "body_base64 is not a string"],
    ["{\"status\":200,\"body_base64\":\"abc\"}", "body_base64 is not base64"],
    ["{\"status\":200,\"body_base64\":\"ab=c\"}", "body_base64 is not base64"],
    ["{\"status\":200,\"body_base64\":\"=abc\"}", "body_base64 is not base64"],
    ["{\"status\":200,\"body_base64\":\"Zg==Zg==\"}", "body_base64 is not base64"],
    ["{\"status\":200,\"body_base64\":\"Z===\"}", "body_base64 is not base64"],
    ["{\"status\":200,\"body_base64\":\"Zm9v!A==\"}", "body_base64 is not base64"],
  ];
  for (let i = 0; i < bad.length; i++) {
    const got = show(httpAnswer(0, bad[i][0]));
    check("hostile " + quote(bad[i][0]), got.startsWith("err -1 not-denied wasmcp host: ") && got.includes(bad[i][1]), got);
  }
}

function unit(): void {
  testRoundTrip();
  testStrings();
  testNumbers();
  testErrors();
  testDepth();
  testQuote();
  testWriter();
  testGetters();
  testHttpRequest();
  testHttpAnswers();
  failures.push(passed.toString() + " passed, " + failed.toString() + " failed");
  text(failures.join("\n") + "\n");
}

// Each case below reads its own arguments, so these go through the host's
// stdin, argv and exit status exactly as a tool's do.
const a = args();
const c = a.getString("case");
if (c == "unit") {
  unit();
} else if (c == "echo") {
  json(new JSONWriter().value(a));
} else if (c == "tool") {
  text(toolName());
} else if (c == "get") {
  const kind = a.getString("kind");
  let out = "";
  if (kind == "string") out = a.getString("value");
  else if (kind == "number") out = a.getNumber("value").toString();
  else if (kind == "integer") out = a.getInteger("value").toString();
  else if (kind == "bool") out = a.getBool("value") ? "true" : "false";
  else if (kind == "object") out = a.getObject("value").kindName();
  else if (kind == "array") out = a.getArray("value").length.toString();
  else fail("unknown kind " + kind);
  text(out);
} else if (c == "fail") {
  fail("  first line\n\tsecond   line \r\n");
} else if (c == "json-array") {
  json(new JSONWriter().beginArray().endArray());
} else if (c == "json-broken") {
  json(new JSONWriter().beginObject().string("no key").endObject());
} else if (c == "json-nan") {
  json(new JSONWriter().beginObject().key("x").number(NaN).endObject());
} else if (c == "log") {
  const codes: i32[] = [
    log(Level.Info, "hello é"),
    progress(1, 2, "half"),
    progress(1, 2, "again"), // not an increase: refused with 6
    log(<Level>8, "bad level"), // refused with 2
    log(Level.Warning, "x".repeat(9000)), // cut to 8 KiB, so accepted
    log(Level.Debug, "€".repeat(3000)), // cut between characters, so still UTF-8
    log(Level.Error, "lone \uD800 surrogate"), // sent with U+FFFD
    progress(2, -1),
  ];
  text(codes.join(" "));
} else if (c == "http") {
  // Calls the host's http_request as a tool does; "times" repeats the call.
  const h = new Map<string, string>();
  h.set("Accept", "text/plain");
  const body: ArrayBuffer | null = a.has("binary") ? bytes([0, 0xff]) : null;
  const n = a.has("times") ? a.getInteger("times") : 1;
  const out: string[] = [];
  for (let i: i64 = 0; i < n; i++) out.push(show(http("", a.getString("url"), h, body, "s")));
  text(out.join(" | "));
} else if (c == "elicit") {
  // Asks the client as a tool does.
  const r = elicit(a.getString("id"), a.getString("params"));
  text(r.code.toString() + " " + (r.ok ? r.answer : r.error));
} else {
  fail("unknown case " + c);
}
