// Drives the SDK through its public run function, the way the host drives a
// module: argv, stdin, stdout, stderr and the exit status.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::json;
use wasmcp_guest::*;

#[derive(Deserialize)]
struct Pair {
    #[serde(default)]
    a: f64,
    #[serde(default)]
    b: f64,
}

#[derive(Serialize)]
struct Sum {
    sum: f64,
}

fn add(p: Pair) -> Result<String, String> {
    if p.a < 0.0 {
        return Err("a must not be negative\nsecond line".to_string());
    }
    Ok(format!("sum is <{}>", p.a + p.b))
}

fn tools() -> Vec<Tool> {
    vec![
        text_tool("add", add),
        json_tool("add_json", |p: Pair| {
            Ok::<_, String>(Sum { sum: p.a + p.b })
        }),
        json_tool("array_json", |_: Value| Ok::<_, String>(vec![1])),
        json_tool("none_json", |_: Value| Ok::<Option<Sum>, String>(None)),
        json_tool("map_json", |_: Value| {
            let mut m = BTreeMap::new();
            m.insert("k", 1);
            Ok::<_, String>(m)
        }),
        result_tool("add_result", |p: Pair| {
            Ok::<_, String>(CallResult {
                content: vec![
                    Content::text("sum <ok>"),
                    Content::image(&[1, 2, 3], "image/png"),
                ],
                structured_content: Some(json!({"sum": p.a + p.b})),
                is_error: p.a + p.b > 100.0,
            })
        }),
        result_tool("empty_result", |_: Value| {
            Ok::<_, String>(CallResult::default())
        }),
        result_tool("bad_structured", |_: Value| {
            Ok::<_, String>(CallResult {
                structured_content: Some(json!("text")),
                ..CallResult::default()
            })
        }),
        result_tool("raw", |_: Value| {
            Ok::<_, String>(CallResult {
                content: vec![
                    Content::raw(json!({"type": "resource_link", "uri": "file:///x", "name": "x"})),
                    Content::text(""),
                    Content::audio(b"", "audio/wav"),
                ],
                ..CallResult::default()
            })
        }),
        text_tool("panics", |_: Value| -> Result<String, String> {
            panic!("boom")
        }),
        text_tool("count", |_: Count| Ok::<_, String>("ok".to_string())),
        text_tool(
            "boxed",
            |_: Value| -> Result<String, Box<dyn std::error::Error>> {
                let n: i32 = "x".parse()?;
                Ok(n.to_string())
            },
        ),
    ]
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct Count {
    n: u8,
    items: Option<Vec<String>>,
}

type Value = serde_json::Value;

// invoke runs one call and returns the exit status, stdout and stderr.
fn invoke(tools: &[Tool], stdin: &str, args: &[&str]) -> (i32, String, String) {
    let mut argv = vec!["module".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run(&argv, &mut stdin.as_bytes(), &mut out, &mut err, tools);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn text() {
    let got = invoke(&tools(), r#"{"a":1,"b":2.5}"#, &["add"]);
    assert_eq!(got, (EXIT_OK, "sum is <3.5>".into(), "".into()));
}

#[test]
fn empty_stdin_is_empty_object() {
    for stdin in ["", "  \n", "{}"] {
        let got = invoke(&tools(), stdin, &["add"]);
        assert_eq!(
            got,
            (EXIT_OK, "sum is <0>".into(), "".into()),
            "stdin {:?}",
            stdin
        );
    }
}

#[test]
fn unknown_fields_ignored() {
    let got = invoke(&tools(), r#"{"a":1,"b":1,"c":"x"}"#, &["add"]);
    assert_eq!(got, (EXIT_OK, "sum is <2>".into(), "".into()));
}

#[test]
fn tool_error_is_one_line() {
    let got = invoke(&tools(), r#"{"a":-1}"#, &["add"]);
    assert_eq!(
        got,
        (
            EXIT_ERROR,
            "".into(),
            "a must not be negative second line\n".into()
        )
    );
}

#[test]
fn any_display_error() {
    let (code, out, err) = invoke(&tools(), "{}", &["boxed"]);
    assert_eq!((code, out.as_str()), (EXIT_ERROR, ""));
    assert_eq!(err, "invalid digit found in string\n");
}

#[test]
fn json() {
    let got = invoke(&tools(), r#"{"a":1,"b":2}"#, &["add_json"]);
    assert_eq!(got, (EXIT_OK, r#"{"sum":3.0}"#.into(), "".into()));
    let got = invoke(&tools(), "{}", &["map_json"]);
    assert_eq!(got, (EXIT_OK, r#"{"k":1}"#.into(), "".into()));
}

#[test]
fn json_must_be_object() {
    for (name, shown) in [("array_json", "[1]"), ("none_json", "null")] {
        let (code, out, err) = invoke(&tools(), "{}", &[name]);
        assert_eq!((code, out.as_str()), (EXIT_ERROR, ""), "{}", name);
        assert_eq!(
            err,
            format!(
                "tool bug: the result must serialize to a JSON object, not {}\n",
                shown
            )
        );
    }
}

#[test]
fn result() {
    let (code, out, _) = invoke(&tools(), r#"{"a":1,"b":2}"#, &["add_result"]);
    assert_eq!(code, EXIT_OK);
    let want = json!({
        "content": [
            {"type": "text", "text": "sum <ok>"},
            {"type": "image", "data": "AQID", "mimeType": "image/png"},
        ],
        "structuredContent": {"sum": 3.0},
    });
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), want);

    // isError is the model's business: the run itself succeeded.
    let (code, out, _) = invoke(&tools(), r#"{"a":100,"b":2}"#, &["add_result"]);
    assert_eq!(code, EXIT_OK);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["isError"],
        json!(true)
    );
}

#[test]
fn result_shapes() {
    let got = invoke(&tools(), "{}", &["empty_result"]);
    assert_eq!(got, (EXIT_OK, r#"{"content":[]}"#.into(), "".into()));

    let (code, out, _) = invoke(&tools(), "{}", &["raw"]);
    assert_eq!(code, EXIT_OK);
    let want = json!({"content": [
        {"type": "resource_link", "uri": "file:///x", "name": "x"},
        {"type": "text", "text": ""},
        {"type": "audio", "data": "", "mimeType": "audio/wav"},
    ]});
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), want);

    let got = invoke(&tools(), "{}", &["bad_structured"]);
    let want = "tool bug: structuredContent must be a JSON object\n";
    assert_eq!(got, (EXIT_ERROR, "".into(), want.into()));
}

#[test]
fn base64_padding() {
    let cases: [(&[u8], &str); 5] = [
        (b"", ""),
        (b"f", "Zg=="),
        (b"fo", "Zm8="),
        (b"foo", "Zm9v"),
        (&[0xfb, 0xff, 0xbf, 0x00], "+/+/AA=="),
    ];
    for (data, want) in cases {
        let got = serde_json::to_value(Content::image(data, "image/png")).unwrap();
        assert_eq!(got["data"], json!(want), "{:?}", data);
    }
}

#[test]
fn panic_is_an_error() {
    let (code, out, err) = invoke(&tools(), "{}", &["panics"]);
    assert_eq!((code, out.as_str()), (EXIT_ERROR, ""));
    assert_eq!(err, "internal error: boom\n");
}

#[test]
fn decoding_errors_speak_json() {
    let cases = [
        (r#"{"a":"x"}"#, "add", r#"invalid arguments: invalid type: string "x", expected a number at line 1 column 8"#),
        (r#"{"n":300}"#, "count", "invalid arguments: invalid value: integer `300`, expected an integer that fits u8 at line 1 column 8"),
        (r#"{"n":1.5}"#, "count", "invalid arguments: invalid type: number `1.5`, expected an integer that fits u8 at line 1 column 8"),
        (r#"{"n":1,"items":{}}"#, "count", "invalid arguments: invalid type: object, expected an array at line 1 column 15"),
        (r#"{"n":1,"items":[1]}"#, "count", "invalid arguments: invalid type: integer `1`, expected a string at line 1 column 17"),
        (r#""x""#, "count", r#"invalid arguments: invalid type: string "x", expected an object at line 1 column 3"#),
        (r#"{"a":[]}"#, "add", "invalid arguments: invalid type: array, expected a number at line 1 column 5"),
        (r#"{}"#, "count", "invalid arguments: missing field `n` at line 1 column 2"),
        (r#"{"a":"#, "add", "invalid arguments: EOF while parsing a value at line 1 column 5"),
    ];
    for (stdin, tool, want) in cases {
        let (code, out, err) = invoke(&tools(), stdin, &[tool]);
        assert_eq!((code, out.as_str()), (EXIT_ERROR, ""), "{}", stdin);
        assert_eq!(err.trim_end(), want, "{}", stdin);
    }
}

#[test]
fn dispatch() {
    let (code, _, err) = invoke(&tools(), "{}", &["nope"]);
    assert_eq!(code, EXIT_USAGE);
    assert!(
        err.starts_with(r#"unknown tool "nope"; this module has tools "add", "add_json","#),
        "{}",
        err
    );

    let (code, _, err) = invoke(&tools(), "{}", &[]);
    assert_eq!(code, EXIT_USAGE);
    assert!(
        err.starts_with("no tool name given; this module has tools"),
        "{}",
        err
    );

    // A single-tool module runs its tool when none is named.
    let one = [text_tool("add", add)];
    assert_eq!(
        invoke(&one, r#"{"a":2}"#, &[]),
        (EXIT_OK, "sum is <2>".into(), "".into())
    );

    let (code, _, err) = invoke(&[], "{}", &["add"]);
    assert_eq!(
        (code, err.as_str()),
        (
            EXIT_USAGE,
            "unknown tool \"add\"; this module has no tools\n"
        )
    );

    let twice = [text_tool("add", add), text_tool("add", add)];
    let (code, _, err) = invoke(&twice, "{}", &["add"]);
    assert_eq!(
        (code, err.as_str()),
        (EXIT_USAGE, "module bug: tool \"add\" is registered twice\n")
    );
}

#[test]
fn tool_name() {
    assert_eq!(tools()[1].name(), "add_json");
}

#[test]
fn host_functions_natively() {
    // Outside WebAssembly there is no host to refuse anything.
    assert_eq!(try_log(Level::Info, "hello"), Ok(()));
    assert_eq!(try_log(Level::Debug, &"é".repeat(10_000)), Ok(()));
    assert_eq!(try_progress(1.0, None, ""), Ok(()));
    assert_eq!(try_progress(2.0, Some(10.0), "half way"), Ok(()));
    log(Level::Emergency, "still fine");
    progress(3.0, Some(10.0), "");
}

#[test]
fn levels_match_the_abi() {
    let all = [
        Level::Debug,
        Level::Info,
        Level::Notice,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::Alert,
        Level::Emergency,
    ];
    let names: Vec<_> = all.iter().map(|l| l.name()).collect();
    assert_eq!(
        names,
        [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency"
        ]
    );
    for (i, l) in all.iter().enumerate() {
        assert_eq!(*l as i32, i as i32);
    }
    assert!(Level::Warning > Level::Info);
}

#[test]
fn host_errors_read_well() {
    assert_eq!(
        HostError(code::TOO_LONG).to_string(),
        "wasmcp host: message too long"
    );
    assert_eq!(
        HostError(code::ORDER).to_string(),
        "wasmcp host: progress did not increase"
    );
    assert_eq!(
        HostError(code::DENIED).to_string(),
        "wasmcp host: the server's policy does not allow this"
    );
    assert_eq!(
        HostError(code::NETWORK).to_string(),
        "wasmcp host: the request failed"
    );
    assert_eq!(HostError(99).to_string(), "wasmcp host: error 99");
}

// HTTP: a stand-in host records each request and gives a canned answer.
// Stand-ins are per thread, and each test runs on its own.

use std::cell::RefCell;
use std::rc::Rc;

fn stand_in(code: i32, answer: &str) -> Rc<RefCell<Vec<Value>>> {
    let sent = Rc::new(RefCell::new(Vec::new()));
    let log = sent.clone();
    let answer = answer.as_bytes().to_vec();
    set_http_stand_in(move |req| {
        log.borrow_mut().push(serde_json::from_slice(req).unwrap());
        (code, answer.clone())
    });
    sent
}

fn answer(code: i32, answer: &str) -> Result<HttpResponse, HttpError> {
    stand_in(code, answer);
    http(&HttpRequest::get("https://x.test/"))
}

#[test]
fn http_request_encoding() {
    let sent = stand_in(0, r#"{"status":200}"#);
    http(&HttpRequest::get("https://x.test/?q=\"a\"")).unwrap();
    let mut req = HttpRequest {
        method: "POST".into(),
        url: "https://x.test/".into(),
        body: Some("{\"a\":\"h\u{e9}\\n\"}\n\u{1}".into()),
        secret: Some("github".into()),
        ..HttpRequest::default()
    };
    req.headers
        .insert("Accept".into(), "application/json".into());
    req.headers.insert("X-\"Q\"".into(), "tab\there".into());
    http(&req).unwrap();
    req.headers.clear();
    req.secret = Some(String::new());
    req.body = Some(Vec::new());
    http(&req).unwrap();
    req.body = Some(vec![0, 0xff, 0xfe, b'a']);
    http(&req).unwrap();
    req.body = Some(b"a\0b".to_vec());
    http(&req).unwrap();
    let want = [
        json!({"method": "GET", "url": "https://x.test/?q=\"a\""}),
        json!({"method": "POST", "url": "https://x.test/",
               "headers": {"Accept": "application/json", "X-\"Q\"": "tab\there"},
               "body": "{\"a\":\"h\u{e9}\\n\"}\n\u{1}", "secret": "github"}),
        json!({"method": "POST", "url": "https://x.test/", "body": ""}),
        json!({"method": "POST", "url": "https://x.test/", "body_base64": "AP/+YQ=="}),
        json!({"method": "POST", "url": "https://x.test/", "body": "a\u{0}b"}),
    ];
    assert_eq!(*sent.borrow(), want);
}

#[test]
fn http_request_wire_text() {
    // The exact bytes, escapes and member order included.
    let seen = Rc::new(RefCell::new(String::new()));
    let s = seen.clone();
    set_http_stand_in(move |req| {
        *s.borrow_mut() = String::from_utf8(req.to_vec()).unwrap();
        (0, br#"{"status":200}"#.to_vec())
    });
    let mut req = HttpRequest::get("https://x.test/");
    req.headers.insert("A".into(), "\"\\\u{7}".into());
    req.body = Some(vec![0xff]);
    req.secret = Some("s".into());
    http(&req).unwrap();
    assert_eq!(
        *seen.borrow(),
        r#"{"method":"GET","url":"https://x.test/","headers":{"A":"\"\\\u0007"},"body_base64":"/w==","secret":"s"}"#
    );
}

#[test]
fn http_success() {
    let resp = answer(
        0,
        r#"{"status":200,"headers":{"Content-Type":"text/plain","X-A":"1"},"body":"h\u00e9llo\n"}"#,
    )
    .unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body, "h\u{e9}llo\n".as_bytes());
    assert_eq!(resp.header("content-type"), Some("text/plain"));
    assert_eq!(resp.header("X-A"), Some("1"));
    assert_eq!(resp.header("X"), None);

    let resp = answer(0, r#"{"status":201,"body_base64":"AP/+YQ=="}"#).unwrap();
    assert_eq!(
        (resp.status, resp.body, resp.headers.len()),
        (201, vec![0, 0xff, 0xfe, b'a'], 0)
    );
    for (b64, want) in [("", ""), ("Zg==", "f"), ("Zm8=", "fo"), ("Zm9v", "foo")] {
        let resp = answer(0, &format!(r#"{{"status":200,"body_base64":"{}"}}"#, b64)).unwrap();
        assert_eq!(resp.body, want.as_bytes(), "{}", b64);
    }
    let resp = answer(0, r#"{"status":204,"headers":null,"extra":[1]}"#).unwrap();
    assert_eq!((resp.status, resp.body.len()), (204, 0));
    let resp = answer(
        0,
        r#"{"status":200,"body":"a\u0000b","body_base64":"eA=="}"#,
    )
    .unwrap();
    assert_eq!(resp.body, b"a\0b", "body wins over body_base64");
}

#[test]
fn http_refusals() {
    let err = answer(
        7,
        r#"{"error":"http requests to https://x.test/: this tool has no http grant"}"#,
    )
    .unwrap_err();
    assert!(err.denied);
    assert_eq!(
        err.to_string(),
        "http requests to https://x.test/: this tool has no http grant"
    );
    let err = answer(8, r#"{"error":"dial tcp: i/o timeout"}"#).unwrap_err();
    assert_eq!(
        err,
        HttpError {
            denied: false,
            message: "dial tcp: i/o timeout".into()
        }
    );
    // Without a readable message, the code speaks.
    let cases = [
        (
            7,
            "",
            true,
            "wasmcp host: the server's policy does not allow this request",
        ),
        (
            7,
            r#"{"error":""}"#,
            true,
            "wasmcp host: the server's policy does not allow this request",
        ),
        (
            7,
            r#"{"error":7}"#,
            true,
            "wasmcp host: the server's policy does not allow this request",
        ),
        (8, r#"{"error":"#, false, "wasmcp host: the request failed"),
        (4, "", false, "wasmcp host: the request is too long"),
        (2, "[]", false, "wasmcp host: invalid request"),
        (42, "", false, "wasmcp host: error 42"),
    ];
    for (code, ans, denied, msg) in cases {
        let err = answer(code, ans).unwrap_err();
        assert_eq!(
            (err.denied, err.message.as_str()),
            (denied, msg),
            "{} {}",
            code,
            ans
        );
    }
}

#[test]
fn http_hostile_answers() {
    let cases = [
        (
            r#"{"status":200,"body":"ab"#,
            "unreadable http answer: EOF while parsing a string",
        ),
        ("", "unreadable http answer: there is none"),
        ("[]", "unreadable http answer: not a JSON object"),
        (r#"{"status":"200"}"#, "status is not an HTTP status"),
        (r#"{"status":2.5}"#, "status is not an HTTP status"),
        (r#"{"status":-1}"#, "status is not an HTTP status"),
        (r#"{"status":1000}"#, "status is not an HTTP status"),
        (r#"{"status":200,"headers":[]}"#, "headers is not an object"),
        (
            r#"{"status":200,"headers":{"A":"b","C":1}}"#,
            "a header's value is not a string",
        ),
        (r#"{"status":200,"body":5}"#, "body is not a string"),
        (
            r#"{"status":200,"body_base64":7}"#,
            "body_base64 is not a string",
        ),
        (
            r#"{"status":200,"body_base64":"abc"}"#,
            "body_base64 is not base64",
        ),
        (
            r#"{"status":200,"body_base64":"Zg==Zg=="}"#,
            "body_base64 is not base64",
        ),
        (
            r#"{"status":200,"body_base64":"Zm9v!A=="}"#,
            "body_base64 is not base64",
        ),
        (
            "{\"status\":200,\"body\":\"\u{0}\"}",
            "unreadable http answer: control character",
        ),
    ];
    for (ans, want) in cases {
        let err = answer(0, ans).unwrap_err();
        assert!(!err.denied, "{}", ans);
        assert!(
            err.message.starts_with("wasmcp host: ") && err.message.contains(want),
            "{}: {}",
            ans,
            err.message
        );
    }
    // Not UTF-8.
    set_http_stand_in(|_| (0, b"{\"status\":200,\"body\":\"\xff\"}".to_vec()));
    let err = http(&HttpRequest::get("u")).unwrap_err();
    assert!(err.message.contains("unreadable http answer"), "{}", err);
}

#[test]
fn http_without_a_host() {
    // No stand-in set on this thread: natively there is no host.
    let err = http(&HttpRequest::get("https://x.test/")).unwrap_err();
    assert!(err.denied);
    assert_eq!(
        err.message,
        "no wasmcp host: HTTP needs the tool to run under wasmcp"
    );
}

fn entries() -> Vec<Tool> {
    vec![
        text_tool("add", add),
        resources(|req: ReadRequest| match req.uri.as_str() {
            "a://empty" => Ok(ReadResult {
                contents: vec![Contents::default()],
            }),
            "a://none" => Ok(ReadResult::default()),
            "a://bytes" => Ok(ReadResult {
                contents: vec![Contents {
                    mime_type: "image/png".into(),
                    ..Contents::blob(vec![0, 1, 2])
                }],
            }),
            "a://missing" => Err("there is no such item"),
            uri => Ok(ReadResult {
                contents: vec![Contents {
                    uri: uri.into(),
                    ..Contents::text(format!("item {}", req.arguments["id"]))
                }],
            }),
        }),
        prompts(|req: PromptRequest| match req.name.as_str() {
            "greet" => Ok(PromptResult {
                description: "d".into(),
                messages: vec![PromptMessage {
                    role: Role::User,
                    content: Content::text(format!("hello {}", req.arguments["who"])),
                }],
            }),
            "plain" => Ok(PromptResult {
                messages: vec![PromptMessage {
                    role: Role::Assistant,
                    content: Content::image(b"\x89PNG", "image/png"),
                }],
                ..PromptResult::default()
            }),
            "empty" => Ok(PromptResult::default()),
            _ => Err("no such prompt"),
        }),
    ]
}

#[test]
fn entry_names_are_the_abis() {
    assert_eq!(
        (ENTRY_READ_RESOURCE, ENTRY_GET_PROMPT),
        ("resources/read", "prompts/get")
    );
}

#[test]
fn resources_read() {
    for (stdin, want) in [
        (
            r#"{"uri":"a://items/7","arguments":{"id":"7"}}"#,
            r#"{"contents":[{"text":"item 7","uri":"a://items/7"}]}"#,
        ),
        (r#"{"uri":"a://empty"}"#, r#"{"contents":[{"text":""}]}"#),
        (
            r#"{"uri":"a://bytes","arguments":{}}"#,
            r#"{"contents":[{"blob":"AAEC","mimeType":"image/png"}]}"#,
        ),
    ] {
        let got = invoke(&entries(), stdin, &[ENTRY_READ_RESOURCE]);
        assert_eq!(got, (EXIT_OK, want.into(), "".into()), "{}", stdin);
    }
    for (stdin, want) in [
        (r#"{"uri":"a://none"}"#, "the read returned no contents\n"),
        (r#"{"uri":"a://missing"}"#, "there is no such item\n"),
        (
            r#"{"uri":"a://x","arguments":{"path":["a","b"]}}"#,
            "invalid arguments: invalid type: array, expected a string at line 1 column 35\n",
        ),
    ] {
        let got = invoke(&entries(), stdin, &[ENTRY_READ_RESOURCE]);
        assert_eq!(got, (EXIT_ERROR, "".into(), want.into()), "{}", stdin);
    }
}

#[test]
fn prompts_get() {
    let got = invoke(
        &entries(),
        r#"{"name":"greet","arguments":{"who":"Ada"}}"#,
        &[ENTRY_GET_PROMPT],
    );
    let want = r#"{"description":"d","messages":[{"role":"user","content":{"text":"hello Ada","type":"text"}}]}"#;
    assert_eq!(got, (EXIT_OK, want.into(), "".into()));
    let got = invoke(&entries(), r#"{"name":"plain"}"#, &[ENTRY_GET_PROMPT]);
    let want = r#"{"messages":[{"role":"assistant","content":{"data":"iVBORw==","mimeType":"image/png","type":"image"}}]}"#;
    assert_eq!(got, (EXIT_OK, want.into(), "".into()));
    for (name, want) in [
        ("empty", "the prompt has no messages\n"),
        ("other", "no such prompt\n"),
    ] {
        let stdin = format!(r#"{{"name":"{}"}}"#, name);
        let got = invoke(&entries(), &stdin, &[ENTRY_GET_PROMPT]);
        assert_eq!(got, (EXIT_ERROR, "".into(), want.into()), "{}", name);
    }
}
