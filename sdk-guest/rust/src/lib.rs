//! Turns Rust functions into wasmcp tools.
//!
//! A wasmcp tool is a WASI preview 1 command module. For every call the host
//! starts a fresh instance with the arguments `[stem, tool name]`, the call's
//! arguments as a JSON object on stdin, and reads the result from stdout and
//! the exit status (docs/abi.md in the wasmcp repository is the contract).
//! This crate does that plumbing, so a tool is a function and one line of
//! `main`:
//!
//! ```no_run
//! #[derive(serde::Deserialize)]
//! struct Args {
//!     name: String,
//! }
//!
//! fn greet(args: Args) -> Result<String, String> {
//!     Ok(format!("Hello, {}!", args.name))
//! }
//!
//! fn main() {
//!     wasmcp_guest::main(&[wasmcp_guest::text_tool("greet", greet)]);
//! }
//! ```
//!
//! Each constructor matches one `output` mode of the manifest: [`text_tool`]
//! for `text`, [`json_tool`] for `json` and [`result_tool`] for `result`. The
//! manifest is still written by hand; this crate cannot check that a tool's
//! mode matches it.
//!
//! Build with `cargo build --release --target wasm32-wasi` (`wasm32-wasip1`
//! on Rust 1.78 and later). Natively the crate builds too, with [`log`] and
//! [`progress`] writing to stderr and [`http`] refused unless a test stands
//! in for the host ([`set_http_stand_in`]), so a tool's logic can be tested
//! with `cargo test`.

use std::collections::BTreeMap;
use std::fmt::{self, Display};
use std::io::{self, Read, Write};
use std::panic::{self, AssertUnwindSafe};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// The call succeeded: stdout holds the result.
pub const EXIT_OK: i32 = 0;
/// The call failed: the tool returned an error, the arguments did not decode
/// or the tool panicked. stderr ends with a one-line reason.
pub const EXIT_ERROR: i32 = 1;
/// The module was asked for a tool it does not have. The host treats every
/// non-zero status alike; this one tells a human reading the host's log that
/// the module was started wrongly rather than that a call failed.
pub const EXIT_USAGE: i32 = 2;

/// One tool a module implements. Make it with [`text_tool`], [`json_tool`]
/// or [`result_tool`].
pub struct Tool {
    name: String,
    // Returns stdout's bytes rather than writing them, so that a failed call
    // leaves stdout empty.
    call: Box<dyn Fn(&[u8]) -> Result<Vec<u8>, String>>,
}

impl Tool {
    /// The tool's name, the one the manifest declares.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A tool for output mode `text`: the returned string becomes the result's
/// only text block, byte for byte, so no newline is added.
///
/// `In` is decoded from the arguments with serde; an `Err` becomes a tool
/// error the model reads, so make its message say what to change.
pub fn text_tool<In, E, F>(name: &str, f: F) -> Tool
where
    In: DeserializeOwned,
    E: Display,
    F: Fn(In) -> Result<String, E> + 'static,
{
    tool(name, f, |out: String| Ok(out.into_bytes()))
}

/// A tool for output mode `json`: `Out` is serialized as the result's
/// `structuredContent`, so it must serialize to a JSON object (a struct or a
/// map). The host checks it against the tool's `outputSchema`.
pub fn json_tool<In, Out, E, F>(name: &str, f: F) -> Tool
where
    In: DeserializeOwned,
    Out: Serialize,
    E: Display,
    F: Fn(In) -> Result<Out, E> + 'static,
{
    tool(name, f, |out: Out| encode_object(&out, "the result"))
}

/// A tool for output mode `result`, for tools that need several content
/// blocks, images or audio, or to shape the result themselves. A result with
/// `is_error` set is still a successful run: the model sees a tool error, but
/// stdout carries it and the exit status is 0.
pub fn result_tool<In, E, F>(name: &str, f: F) -> Tool
where
    In: DeserializeOwned,
    E: Display,
    F: Fn(In) -> Result<CallResult, E> + 'static,
{
    tool(name, f, |res: CallResult| {
        if let Some(sc) = &res.structured_content {
            // Checked here because the host would blame the module, not the
            // line of the tool that built the result.
            if !sc.is_object() {
                return Err("tool bug: structuredContent must be a JSON object".to_string());
            }
        }
        encode(&res)
    })
}

// tool wires decoding, the tool's function and an output encoding together;
// the constructors differ only in the encoding.
fn tool<In, Out, E, F, W>(name: &str, f: F, write: W) -> Tool
where
    In: DeserializeOwned,
    E: Display,
    F: Fn(In) -> Result<Out, E> + 'static,
    W: Fn(Out) -> Result<Vec<u8>, String> + 'static,
{
    Tool {
        name: name.to_string(),
        call: Box::new(move |args| {
            let out = f(decode(args)?).map_err(|e| e.to_string())?;
            write(out)
        }),
    }
}

/// Runs the tool the host asked for and exits; it never returns. Call it
/// from `main` with every tool the module declares in its manifest. A module
/// with a single tool also runs it when no name is given, so that it can be
/// tried by hand under any WASI runtime.
pub fn main(tools: &[Tool]) -> ! {
    // wasm32-wasi aborts on panic, which the host would report only as a
    // trap; exiting from the hook puts the panic's message in the error.
    panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" (at {}:{})", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("{}{}", one_line(&panic_message(info.payload())), place);
        std::process::exit(EXIT_ERROR);
    }));
    let argv: Vec<String> = std::env::args().collect();
    let code = run(
        &argv,
        &mut io::stdin(),
        &mut io::stdout(),
        &mut io::stderr(),
        tools,
    );
    // process::exit skips destructors, and with them stdout's flush.
    let _ = io::stdout().flush();
    std::process::exit(code)
}

/// [`main`] without the process: runs the tool named by `argv[1]` with the
/// arguments read from `stdin` and returns the exit status. It lets native
/// tests drive a module exactly as the host does.
pub fn run(
    argv: &[String],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    tools: &[Tool],
) -> i32 {
    for (i, t) in tools.iter().enumerate() {
        if tools[..i].iter().any(|u| u.name == t.name) {
            let _ = writeln!(stderr, "module bug: tool {:?} is registered twice", t.name);
            return EXIT_USAGE;
        }
    }
    let tool = match (argv.get(1), tools) {
        (Some(name), _) => match tools.iter().find(|t| &t.name == name) {
            Some(t) => t,
            None => {
                let _ = writeln!(
                    stderr,
                    "unknown tool {:?}; this module has {}",
                    name,
                    names(tools)
                );
                return EXIT_USAGE;
            }
        },
        (None, [only]) => only,
        (None, _) => {
            let _ = writeln!(
                stderr,
                "no tool name given; this module has {}",
                names(tools)
            );
            return EXIT_USAGE;
        }
    };

    let mut args = Vec::new();
    if let Err(e) = stdin.read_to_end(&mut args) {
        let _ = writeln!(stderr, "reading arguments: {}", e);
        return EXIT_ERROR;
    }
    // Natively a panic unwinds to here; in the module the hook set by main
    // has already exited.
    let result = panic::catch_unwind(AssertUnwindSafe(|| (tool.call)(&args)))
        .unwrap_or_else(|p| Err(panic_message(&*p)));
    match result {
        Ok(out) => match stdout.write_all(&out).and_then(|_| stdout.flush()) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                let _ = writeln!(stderr, "writing result: {}", e);
                EXIT_ERROR
            }
        },
        Err(msg) => {
            let _ = writeln!(stderr, "{}", one_line(&msg));
            EXIT_ERROR
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let what = if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.as_str()
    } else {
        "panic"
    };
    format!("internal error: {}", what)
}

fn names(tools: &[Tool]) -> String {
    if tools.is_empty() {
        return "no tools".to_string();
    }
    let quoted: Vec<String> = tools.iter().map(|t| format!("{:?}", t.name)).collect();
    format!("tools {}", quoted.join(", "))
}

// The host may show the model only the last line of stderr.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

// The host has already validated the arguments against the inputSchema, but
// a module may be run by other hosts or by hand, so decoding failures are
// reported rather than trusted away.
fn decode<In: DeserializeOwned>(args: &[u8]) -> Result<In, String> {
    let args: &[u8] = if args.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        args
    };
    serde_json::from_slice(args).map_err(|e| format!("invalid arguments: {}", describe(&e)))
}

// describe rewords serde's errors, which name Rust types, in the JSON terms
// a model can act on.
fn describe(e: &serde_json::Error) -> String {
    let msg = e
        .to_string()
        .replace("invalid type: sequence", "invalid type: array")
        .replace("invalid type: map", "invalid type: object")
        .replace("floating point `", "number `");
    let sep = ", expected ";
    let i = match msg.find(sep) {
        Some(i) => i + sep.len(),
        None => return msg,
    };
    let (head, tail) = msg.split_at(i);
    let end = tail.find(" at line ").unwrap_or(tail.len());
    let (expected, rest) = tail.split_at(end);
    let json = match expected {
        "f32" | "f64" => "a number".to_string(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" => format!("an integer that fits {}", expected),
        "a sequence" => "an array".to_string(),
        "a map" => "an object".to_string(),
        s if s.starts_with("struct ") => "an object".to_string(),
        s => s.to_string(),
    };
    format!("{}{}{}", head, json, rest)
}

fn encode<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>, String> {
    serde_json::to_vec(v).map_err(|e| format!("encoding the result: {}", e))
}

// MCP accepts only an object as structuredContent.
fn encode_object<T: Serialize + ?Sized>(v: &T, what: &str) -> Result<Vec<u8>, String> {
    let b = encode(v)?;
    if b.first() != Some(&b'{') {
        let start: String = String::from_utf8_lossy(&b).chars().take(40).collect();
        return Err(format!(
            "tool bug: {} must serialize to a JSON object, not {}",
            what, start
        ));
    }
    Ok(b)
}

/// An MCP `CallToolResult`, what a [`result_tool`] returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// What the model reads.
    pub content: Vec<Content>,
    /// If set, must be a JSON object; the host checks it against the tool's
    /// `outputSchema`. `serde_json::to_value` makes one from a struct.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Marks the result as a tool error the model should see and may recover
    /// from, as opposed to a failed run.
    #[serde(skip_serializing_if = "is_false")]
    pub is_error: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One MCP content block.
#[derive(Clone, Debug, PartialEq)]
pub struct Content(Value);

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content(serde_json::json!({"type": "text", "text": text.into()}))
    }

    /// An image block; `mime_type` is e.g. `image/png`.
    pub fn image(data: &[u8], mime_type: &str) -> Content {
        Content(serde_json::json!({"type": "image", "data": base64(data), "mimeType": mime_type}))
    }

    /// An audio block; `mime_type` is e.g. `audio/wav`.
    pub fn audio(data: &[u8], mime_type: &str) -> Content {
        Content(serde_json::json!({"type": "audio", "data": base64(data), "mimeType": mime_type}))
    }

    /// Any other block, such as `resource_link` or `resource`, written as
    /// given, so that this crate need not model every block type.
    pub fn raw(block: Value) -> Content {
        Content(block)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// The names of a module's entry points other than its tools: the host starts
/// the module with one of them as `argv[1]` (docs/abi.md, "Reading a
/// resource" and "Getting a prompt"). No tool may have them.
pub const ENTRY_READ_RESOURCE: &str = "resources/read";
/// See [`ENTRY_READ_RESOURCE`].
pub const ENTRY_GET_PROMPT: &str = "prompts/get";

/// What the host asks of a module's `resources/read`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ReadRequest {
    /// The URI read: a resource's the manifest declares without contents, or
    /// one its templates matched.
    pub uri: String,
    /// The template's variables, as the URI gave them; empty for a declared
    /// resource. (An exploded variable with several values, such as
    /// `{/path*}`, arrives as a JSON array, which this map cannot hold: the
    /// read then fails to decode. Declare such variables unexploded.)
    #[serde(default)]
    pub arguments: BTreeMap<String, String>,
}

/// What a read returns: one or more contents of the URI read.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReadResult {
    /// At least one; the host takes at most 100.
    pub contents: Vec<Contents>,
}

/// One of a read's contents: text, or a blob when `blob` is set. `uri` and
/// `mime_type` may be left empty: the host fills in the URI read and the MIME
/// type the manifest declares.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contents {
    /// The URI read, or empty.
    pub uri: String,
    /// The contents' MIME type, or empty for the manifest's.
    pub mime_type: String,
    /// The contents as text, when `blob` is `None`.
    pub text: String,
    /// The contents as bytes.
    pub blob: Option<Vec<u8>>,
}

impl Contents {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> Contents {
        Contents {
            text: text.into(),
            ..Contents::default()
        }
    }

    /// Contents as bytes (a blob).
    pub fn blob(data: impl Into<Vec<u8>>) -> Contents {
        Contents {
            blob: Some(data.into()),
            ..Contents::default()
        }
    }
}

// Exactly one of text and blob is written, so that an empty text still
// encodes as "text": "".
impl Serialize for Contents {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = Map::new();
        if !self.uri.is_empty() {
            m.insert("uri".into(), Value::String(self.uri.clone()));
        }
        if !self.mime_type.is_empty() {
            m.insert("mimeType".into(), Value::String(self.mime_type.clone()));
        }
        match &self.blob {
            Some(b) => m.insert("blob".into(), Value::String(base64(b))),
            None => m.insert("text".into(), Value::String(self.text.clone())),
        };
        m.serialize(s)
    }
}

/// Makes the module's `resources/read` entry point: `f` answers the reads of
/// every resource the manifest declares without contents and of every URI its
/// templates match. An `Err` fails the read: the client gets its message.
/// Pass the result to [`main`] with the module's tools.
pub fn resources<E, F>(f: F) -> Tool
where
    E: Display,
    F: Fn(ReadRequest) -> Result<ReadResult, E> + 'static,
{
    tool(ENTRY_READ_RESOURCE, f, |res: ReadResult| {
        if res.contents.is_empty() {
            return Err("the read returned no contents".to_string());
        }
        encode(&res)
    })
}

/// What the host asks of a module's `prompts/get`. The host has checked the
/// arguments against those the manifest declares: the required ones are
/// there, and no others.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct PromptRequest {
    /// One of the prompts the manifest declares without messages.
    pub name: String,
    /// The arguments the client gave.
    #[serde(default)]
    pub arguments: BTreeMap<String, String>,
}

/// A prompt's messages, and optionally a description.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PromptResult {
    /// What the prompt is, or empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// At least one; the host takes at most 100.
    pub messages: Vec<PromptMessage>,
}

/// Who speaks a prompt's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: Role,
    /// One content block, as in a tool's result.
    pub content: Content,
}

/// Makes the module's `prompts/get` entry point: `f` gets every prompt the
/// manifest declares without messages, dispatching on the request's `name`.
/// An `Err` fails the request: the client gets its message. Pass the result
/// to [`main`] with the module's tools.
pub fn prompts<E, F>(f: F) -> Tool
where
    E: Display,
    F: Fn(PromptRequest) -> Result<PromptResult, E> + 'static,
{
    tool(ENTRY_GET_PROMPT, f, |res: PromptResult| {
        if res.messages.is_empty() {
            return Err("the prompt has no messages".to_string());
        }
        encode(&res)
    })
}

// Standard base64 with padding, as MCP's image and audio blocks carry.
fn base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity((data.len() + 2) / 3 * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A log level: the RFC 5424 levels MCP uses, in increasing severity, with
/// the numbers the host function takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Notice = 2,
    Warning = 3,
    Error = 4,
    Critical = 5,
    Alert = 6,
    Emergency = 7,
}

impl Level {
    /// The level's name in MCP, e.g. `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }
}

/// What the host functions return (docs/abi.md, "Result codes"): `OK`, or
/// why the message was not sent or the request got no answer. The values
/// are those of the constants of wasmcp's Go package `abi`.
pub mod code {
    /// Done as asked: the message was accepted, or the request answered.
    pub const OK: i32 = 0;
    /// A pointer and length outside the module's memory.
    pub const FAULT: i32 = 1;
    /// A bad argument (level, progress, total), or a malformed request.
    pub const INVALID: i32 = 2;
    /// A message that is not UTF-8.
    pub const ENCODING: i32 = 3;
    /// A message or a request over its size limit.
    pub const TOO_LONG: i32 = 4;
    /// The call has used up an allowance: of messages, progress reports,
    /// requests or their bytes.
    pub const LIMIT: i32 = 5;
    /// Progress that did not increase.
    pub const ORDER: i32 = 6;
    /// A request the operator's policy does not allow.
    pub const DENIED: i32 = 7;
    /// A request that was allowed but failed: no answer, a timeout, a
    /// response over the size limit, too many redirects.
    pub const NETWORK: i32 = 8;
}

/// A refusal from a wasmcp host function: the message was not sent, and the
/// tool may go on. It holds one of the [`code`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostError(pub i32);

impl Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.0 {
            code::FAULT => "message outside the module's memory",
            code::INVALID => "invalid level, progress or total",
            code::ENCODING => "message is not UTF-8",
            code::TOO_LONG => "message too long",
            code::LIMIT => "this call's allowance is used up",
            code::ORDER => "progress did not increase",
            code::DENIED => "the server's policy does not allow this",
            code::NETWORK => "the request failed",
            n => return write!(f, "wasmcp host: error {}", n),
        };
        write!(f, "wasmcp host: {}", what)
    }
}

impl std::error::Error for HostError {}

/// The longest message the host accepts; longer ones are cut rather than
/// lost.
const MAX_MESSAGE: usize = 8 << 10;

/// Sends a message to the client that called the tool, as an MCP log
/// notification; the client's chosen level decides whether it is shown.
/// Messages over 8 KiB are cut at a character boundary. A refusal by the
/// host is ignored: use [`try_log`] to see it.
pub fn log(level: Level, msg: &str) {
    let _ = try_log(level, msg);
}

/// [`log`] that says whether the host took the message.
pub fn try_log(level: Level, msg: &str) -> Result<(), HostError> {
    status(host::log(level, truncate(msg)))
}

/// Reports how far the call has got, when the client asked for progress.
/// `progress` must grow from one report to the next; `total` is the value it
/// will reach, if known. `msg` may be empty. A refusal by the host is
/// ignored: use [`try_progress`] to see it.
pub fn progress(progress: f64, total: Option<f64>, msg: &str) {
    let _ = try_progress(progress, total, msg);
}

/// [`progress`] that says whether the host took the report.
pub fn try_progress(progress: f64, total: Option<f64>, msg: &str) -> Result<(), HostError> {
    // The ABI's "unknown total" is any negative number.
    status(host::progress(
        progress,
        total.unwrap_or(-1.0),
        truncate(msg),
    ))
}

fn status(c: i32) -> Result<(), HostError> {
    match c {
        code::OK => Ok(()),
        n => Err(HostError(n)),
    }
}

fn truncate(s: &str) -> &str {
    if s.len() <= MAX_MESSAGE {
        return s;
    }
    let mut end = MAX_MESSAGE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// An HTTP request for the host to make on the tool's behalf. A tool has no
/// network of its own: the host checks every request against the operator's
/// policy (docs/abi.md, "Permissions").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET` when empty.
    pub method: String,
    pub url: String,
    pub headers: BTreeMap<String, String>,
    /// `None` sends no body. Bytes that are not UTF-8 travel base64-encoded.
    pub body: Option<Vec<u8>>,
    /// Names a secret the operator bound to the URL's host: the host adds it
    /// (typically as an `Authorization` header), and the tool never sees its
    /// value.
    pub secret: Option<String>,
}

impl HttpRequest {
    /// A GET request for `url`; set the other fields as needed.
    pub fn get(url: impl Into<String>) -> HttpRequest {
        HttpRequest {
            url: url.into(),
            ..HttpRequest::default()
        }
    }
}

/// What the host got back: any HTTP status, including errors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    /// Exactly the response's bytes.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The value of the header called `name`, in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A request the host refused (`denied`: the operator's policy does not allow
/// it) or could not complete. The message says what was missing or what went
/// wrong, in words to pass on to the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpError {
    pub denied: bool,
    pub message: String,
}

impl Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HttpError {}

#[derive(Serialize)]
struct WireRequest<'a> {
    method: &'a str,
    url: &'a str,
    #[serde(skip_serializing_if = "no_headers")]
    headers: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body_base64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<&'a str>,
}

fn no_headers(h: &&BTreeMap<String, String>) -> bool {
    h.is_empty()
}

/// Has the host make an HTTP request. Any HTTP status is a response; an
/// `Err` is a request the operator's policy does not allow (`denied`), one
/// that failed (network, timeout, size), or one the host found invalid.
///
/// ```no_run
/// # fn f() -> Result<String, wasmcp_guest::HttpError> {
/// let mut req = wasmcp_guest::HttpRequest::get("https://api.github.com/zen");
/// req.secret = Some("github".to_string());
/// let resp = wasmcp_guest::http(&req)?;
/// Ok(String::from_utf8_lossy(&resp.body).into_owned())
/// # }
/// ```
pub fn http(req: &HttpRequest) -> Result<HttpResponse, HttpError> {
    let body = req.body.as_deref();
    let text = body.and_then(|b| std::str::from_utf8(b).ok());
    let wire = WireRequest {
        method: if req.method.is_empty() {
            "GET"
        } else {
            &req.method
        },
        url: &req.url,
        headers: &req.headers,
        body: text,
        body_base64: match (body, text) {
            (Some(b), None) => Some(base64(b)),
            _ => None,
        },
        secret: req.secret.as_deref().filter(|s| !s.is_empty()),
    };
    let data = serde_json::to_vec(&wire).map_err(|e| HttpError {
        denied: false,
        message: format!("encoding the http request: {}", e),
    })?;
    let (code, answer) = host::http(&data);
    read_answer(code, &answer)
}

/// Makes a request through the two host functions: the answer waits in the
/// host until taken, sized first so that the buffer fits it.
#[cfg_attr(not(any(target_arch = "wasm32", test)), allow(dead_code))]
fn exchange(
    req: &[u8],
    request: impl FnOnce(&[u8], &mut u32) -> i32,
    response: impl FnOnce(&mut [u8]) -> i32,
) -> (i32, Vec<u8>) {
    let mut n = 0u32;
    let rc_request = request(req, &mut n);
    if n == 0 {
        return (rc_request, Vec::new());
    }
    let mut buf = vec![0u8; n as usize];
    match response(&mut buf) {
        code::OK => (rc_request, buf),
        rc => {
            let why = if rc == code::TOO_LONG {
                format!(
                    "wasmcp host: the answer did not fit the {} bytes announced for it",
                    n
                )
            } else {
                format!("wasmcp host: taking the answer failed with error {}", rc)
            };
            (
                rc,
                serde_json::json!({ "error": why }).to_string().into_bytes(),
            )
        }
    }
}

// Reads the host's answer. A refusal's message comes from its "error", or
// from the code when there is none; a success answer is trusted no further
// than any JSON.
fn read_answer(rc: i32, answer: &[u8]) -> Result<HttpResponse, HttpError> {
    let parsed = serde_json::from_slice::<Value>(answer);
    if rc != code::OK {
        let given = match &parsed {
            Ok(v) => v.get("error").and_then(Value::as_str).unwrap_or(""),
            Err(_) => "",
        };
        let message = if given.is_empty() {
            format!("wasmcp host: {}", http_code_text(rc))
        } else {
            given.to_string()
        };
        return Err(HttpError {
            denied: rc == code::DENIED,
            message,
        });
    }
    let unreadable = |what: &str| HttpError {
        denied: false,
        message: format!("wasmcp host: unreadable http answer: {}", what),
    };
    let a = match parsed {
        Ok(Value::Object(a)) => a,
        Ok(_) => return Err(unreadable("not a JSON object")),
        Err(_) if answer.is_empty() => return Err(unreadable("there is none")),
        Err(e) => return Err(unreadable(&e.to_string())),
    };
    let mut resp = HttpResponse::default();
    match a.get("status") {
        None | Some(Value::Null) => {}
        Some(s) => match s.as_u64().filter(|n| *n <= 999) {
            Some(n) => resp.status = n as u16,
            None => return Err(unreadable("status is not an HTTP status")),
        },
    }
    match a.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(h)) => {
            resp.headers =
                string_map(h).ok_or_else(|| unreadable("a header's value is not a string"))?
        }
        Some(_) => return Err(unreadable("headers is not an object")),
    }
    // null counts as absent, as encoding/json reads it.
    let member = |k: &str| a.get(k).filter(|v| !v.is_null());
    match (member("body"), member("body_base64")) {
        (Some(Value::String(b)), _) => resp.body = b.clone().into_bytes(),
        (Some(_), _) => return Err(unreadable("body is not a string")),
        (None, Some(Value::String(b))) => {
            resp.body = base64_decode(b).ok_or_else(|| unreadable("body_base64 is not base64"))?
        }
        (None, Some(_)) => return Err(unreadable("body_base64 is not a string")),
        (None, None) => {}
    }
    Ok(resp)
}

// What a refusal means when the host gave no answer saying so.
fn http_code_text(rc: i32) -> String {
    let what = match rc {
        code::FAULT => "the request is outside the module's memory",
        code::INVALID => "invalid request",
        code::TOO_LONG => "the request is too long",
        code::LIMIT => "this call's allowance of requests is used up",
        code::DENIED => "the server's policy does not allow this request",
        code::NETWORK => "the request failed",
        n => return format!("error {}", n),
    };
    what.to_string()
}

fn string_map(m: &Map<String, Value>) -> Option<BTreeMap<String, String>> {
    m.iter()
        .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
        .collect()
}

// Padded standard base64, as the ABI's body_base64 carries.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn digit(c: u8) -> Option<u32> {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        Some(d as u32)
    }
    let b = s.as_bytes();
    if b.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(b.len() / 4 * 3);
    for (i, q) in b.chunks(4).enumerate() {
        let pad = q.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && (i + 1) * 4 != b.len()) {
            return None;
        }
        let mut n = 0u32;
        for &c in &q[..4 - pad] {
            n = n << 6 | digit(c)?;
        }
        n <<= 6 * pad as u32;
        out.push((n >> 16) as u8);
        if pad < 2 {
            out.push((n >> 8) as u8);
        }
        if pad < 1 {
            out.push(n as u8);
        }
    }
    Some(out)
}

/// An ask of the client that brought no answer (docs/abi.md, "Asking the
/// client"): `code` is the host's (`code::DENIED` when the tool's manifest
/// or the client lacks the capability), `message` says why.
#[derive(Debug, Clone, PartialEq)]
pub struct AskError {
    pub code: i32,
    pub message: String,
}

impl Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AskError {}

/// Asks the user, through the client, by elicitation: `params` are
/// `elicitation/create`'s (`message` and `requestedSchema`, or `mode`
/// "url" with `url` and `elicitationId`), and `id` names the ask within the
/// call (on MCP 2026-07-28 the key of its input request; `None`: "ask-N").
/// Returns the client's answer, `{"action": …, "content": {…}}`. The
/// manifest must declare `"client": ["elicitation"]`. On 2026-07-28 the
/// host may end the run at an ask and run the tool again with the answer:
/// ask the same things in the same order each time, and act after the last
/// ask. A call may ask 16 times.
///
/// ```no_run
/// let answer = wasmcp_guest::elicit(Some("confirm"), &serde_json::json!({
///     "message": "Remove it?",
///     "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}},
/// }));
/// ```
pub fn elicit(id: Option<&str>, params: &Value) -> Result<Value, AskError> {
    ask(host::elicit, id, params)
}

/// Asks the client to sample its model (`sampling/createMessage`'s params),
/// as `elicit` asks; the manifest must declare `"client": ["sampling"]`.
/// MCP 2026-07-28 deprecates sampling (SEP-2577).
pub fn create_message(id: Option<&str>, params: &Value) -> Result<Value, AskError> {
    ask(host::create_message, id, params)
}

/// Asks the client for its roots, as `elicit` asks; the manifest must
/// declare `"client": ["roots"]`. MCP 2026-07-28 deprecates roots
/// (SEP-2577).
pub fn list_roots(id: Option<&str>) -> Result<Value, AskError> {
    ask(host::list_roots, id, &Value::Object(Map::new()))
}

// Each ask names its host function where it is called, so that a tool
// imports only the functions it uses.
fn ask(
    host_fn: fn(&[u8]) -> (i32, Vec<u8>),
    id: Option<&str>,
    params: &Value,
) -> Result<Value, AskError> {
    let mut req = Map::new();
    if let Some(id) = id {
        req.insert("id".to_string(), Value::String(id.to_string()));
    }
    req.insert("params".to_string(), params.clone());
    let data = serde_json::to_vec(&req).map_err(|e| AskError {
        code: code::INVALID,
        message: format!("encoding the ask: {}", e),
    })?;
    let (rc, answer) = host_fn(&data);
    let parsed = serde_json::from_slice::<Value>(&answer).ok();
    if rc != code::OK {
        let message = parsed
            .as_ref()
            .and_then(|v| v.get("error"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("wasmcp host: the ask failed with error {}", rc));
        return Err(AskError { code: rc, message });
    }
    parsed.ok_or_else(|| AskError {
        code: code::INVALID,
        message: "wasmcp host: the client's answer is not JSON".to_string(),
    })
}

/// Native builds only: stands in for the client on the current thread, as
/// `set_http_stand_in` does for HTTP. `f` gets the ask function's name
/// ("elicit", "create_message", "list_roots") and the request's JSON, and
/// returns the host's code and answer. Without a stand-in every ask is
/// refused as denied.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_ask_stand_in(f: impl FnMut(&str, &[u8]) -> (i32, Vec<u8>) + 'static) {
    host::ASK.with(|h| *h.borrow_mut() = Some(Box::new(f)));
}

/// Native builds only: stands in for the host's HTTP on the current thread,
/// so that tests can give a tool canned answers. `f` gets the request's JSON
/// and returns the host's code and answer, as docs/abi.md describes them.
/// Without a stand-in every request is refused as denied, since natively
/// there is no host.
#[cfg(not(target_arch = "wasm32"))]
pub fn set_http_stand_in(f: impl FnMut(&[u8]) -> (i32, Vec<u8>) + 'static) {
    host::HTTP.with(|h| *h.borrow_mut() = Some(Box::new(f)));
}

#[cfg(target_arch = "wasm32")]
mod host {
    #[link(wasm_import_module = "wasmcp")]
    extern "C" {
        #[link_name = "log"]
        fn wasmcp_log(level: i32, msg: *const u8, len: usize) -> i32;
        #[link_name = "progress"]
        fn wasmcp_progress(progress: f64, total: f64, msg: *const u8, len: usize) -> i32;
        #[link_name = "http_request"]
        fn wasmcp_http_request(req: *const u8, len: usize, answer_len: *mut u32) -> i32;
        #[link_name = "http_response"]
        fn wasmcp_http_response(buf: *mut u8, len: usize) -> i32;
        #[link_name = "elicit"]
        fn wasmcp_elicit(req: *const u8, len: usize, answer_len: *mut u32) -> i32;
        #[link_name = "create_message"]
        fn wasmcp_create_message(req: *const u8, len: usize, answer_len: *mut u32) -> i32;
        #[link_name = "list_roots"]
        fn wasmcp_list_roots(req: *const u8, len: usize, answer_len: *mut u32) -> i32;
        #[link_name = "ask_response"]
        fn wasmcp_ask_response(buf: *mut u8, len: usize) -> i32;
    }

    fn ask(f: unsafe extern "C" fn(*const u8, usize, *mut u32) -> i32, req: &[u8]) -> (i32, Vec<u8>) {
        // SAFETY: as for http.
        super::exchange(
            req,
            |r, n| unsafe { f(r.as_ptr(), r.len(), n) },
            |b| unsafe { wasmcp_ask_response(b.as_mut_ptr(), b.len()) },
        )
    }

    pub fn elicit(req: &[u8]) -> (i32, Vec<u8>) {
        ask(wasmcp_elicit, req)
    }

    pub fn create_message(req: &[u8]) -> (i32, Vec<u8>) {
        ask(wasmcp_create_message, req)
    }

    pub fn list_roots(req: &[u8]) -> (i32, Vec<u8>) {
        ask(wasmcp_list_roots, req)
    }

    pub fn http(req: &[u8]) -> (i32, Vec<u8>) {
        // SAFETY: the host reads the request and writes the answer's length
        // and the answer only within the slices given.
        super::exchange(
            req,
            |r, n| unsafe { wasmcp_http_request(r.as_ptr(), r.len(), n) },
            |b| unsafe { wasmcp_http_response(b.as_mut_ptr(), b.len()) },
        )
    }

    pub fn log(level: super::Level, msg: &str) -> i32 {
        // SAFETY: the host only reads len bytes at msg, inside our memory.
        unsafe { wasmcp_log(level as i32, msg.as_ptr(), msg.len()) }
    }

    pub fn progress(progress: f64, total: f64, msg: &str) -> i32 {
        // SAFETY: as for log.
        unsafe { wasmcp_progress(progress, total, msg.as_ptr(), msg.len()) }
    }
}

// Outside WebAssembly there is no host: reports go to stderr, in the form
// `wasmcp call` prints them, so that a tool run or tested natively still
// shows them.
#[cfg(not(target_arch = "wasm32"))]
mod host {
    use std::cell::RefCell;

    type StandIn = Box<dyn FnMut(&[u8]) -> (i32, Vec<u8>)>;
    type AskStandIn = Box<dyn FnMut(&str, &[u8]) -> (i32, Vec<u8>)>;

    thread_local! {
        pub static HTTP: RefCell<Option<StandIn>> = RefCell::new(None);
        pub static ASK: RefCell<Option<AskStandIn>> = RefCell::new(None);
    }

    fn ask(function: &str, req: &[u8]) -> (i32, Vec<u8>) {
        ASK.with(|h| match h.borrow_mut().as_mut() {
            Some(f) => f(function, req),
            None => (
                super::code::DENIED,
                br#"{"error":"no wasmcp host: asking the client needs the tool to run under wasmcp"}"#
                    .to_vec(),
            ),
        })
    }

    pub fn elicit(req: &[u8]) -> (i32, Vec<u8>) {
        ask("elicit", req)
    }

    pub fn create_message(req: &[u8]) -> (i32, Vec<u8>) {
        ask("create_message", req)
    }

    pub fn list_roots(req: &[u8]) -> (i32, Vec<u8>) {
        ask("list_roots", req)
    }

    pub fn http(req: &[u8]) -> (i32, Vec<u8>) {
        HTTP.with(|h| match h.borrow_mut().as_mut() {
            Some(f) => f(req),
            None => (
                super::code::DENIED,
                br#"{"error":"no wasmcp host: HTTP needs the tool to run under wasmcp"}"#.to_vec(),
            ),
        })
    }

    pub fn log(level: super::Level, msg: &str) -> i32 {
        eprintln!("[{}] {}", level.name(), msg);
        super::code::OK
    }

    pub fn progress(progress: f64, total: f64, msg: &str) -> i32 {
        if total < 0.0 {
            eprintln!("[progress {}] {}", progress, msg);
        } else {
            eprintln!("[progress {}/{}] {}", progress, total, msg);
        }
        super::code::OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_send_id_and_params_and_read_the_answer() {
        let sent = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = sent.clone();
        set_ask_stand_in(move |function, req| {
            log.borrow_mut()
                .push(format!("{} {}", function, String::from_utf8_lossy(req)));
            match function {
                "list_roots" => (
                    code::DENIED,
                    br#"{"error":"the client did not declare the roots capability"}"#.to_vec(),
                ),
                _ => (code::OK, br#"{"action":"accept","content":{"ok":true}}"#.to_vec()),
            }
        });
        let answer = elicit(Some("confirm"), &serde_json::json!({"message": "Go on?"})).unwrap();
        assert_eq!(answer["content"]["ok"], Value::Bool(true));
        create_message(None, &serde_json::json!({"messages": [], "maxTokens": 1})).unwrap();
        let err = list_roots(Some("roots")).unwrap_err();
        assert_eq!(
            err,
            AskError {
                code: code::DENIED,
                message: "the client did not declare the roots capability".to_string()
            }
        );
        assert_eq!(
            *sent.borrow(),
            vec![
                r#"elicit {"id":"confirm","params":{"message":"Go on?"}}"#,
                r#"create_message {"params":{"maxTokens":1,"messages":[]}}"#,
                r#"list_roots {"id":"roots","params":{}}"#,
            ]
        );
    }

    // The two-step exchange is the wasm32 path, tested here with closures in
    // the host's place.
    #[test]
    fn exchange_sizes_then_takes() {
        let answer = br#"{"status":200}"#;
        let (code, got) = exchange(
            b"req",
            |r, n| {
                assert_eq!(r, b"req");
                *n = answer.len() as u32;
                0
            },
            |b| {
                b.copy_from_slice(answer);
                0
            },
        );
        assert_eq!((code, got.as_slice()), (0, &answer[..]));

        // No answer: http_response is not called.
        let (code, got) = exchange(b"", |_, _| 4, |_| panic!("called"));
        assert_eq!((code, got.len()), (4, 0));
    }

    #[test]
    fn exchange_buffer_too_small() {
        // A host that announces fewer bytes than it has refuses the buffer.
        let (code, got) = exchange(
            b"req",
            |_, n| {
                *n = 5;
                0
            },
            |b| if b.len() < 14 { 4 } else { 0 },
        );
        assert_eq!(code, 4);
        let err = read_answer(code, &got).unwrap_err();
        assert_eq!(
            err.message,
            "wasmcp host: the answer did not fit the 5 bytes announced for it"
        );
        assert!(!err.denied);

        let (code, got) = exchange(
            b"req",
            |_, n| {
                *n = 9;
                7
            },
            |_| 1,
        );
        let err = read_answer(code, &got).unwrap_err();
        assert_eq!(
            err.message,
            "wasmcp host: taking the answer failed with error 1"
        );
    }

    #[test]
    fn base64_both_ways() {
        for data in [
            &b""[..],
            b"f",
            b"fo",
            b"foo",
            b"foob",
            &[0, 0xff, 0xfe, b'a'],
            &[0xfb, 0xff, 0xbf],
        ] {
            assert_eq!(base64_decode(&base64(data)).as_deref(), Some(data));
        }
        for bad in [
            "abc",
            "ab=c",
            "=abc",
            "Zg==Zg==",
            "Z===",
            "Zm9v!A==",
            "Zm9v\u{e9}A=",
            "====",
        ] {
            assert_eq!(base64_decode(bad), None, "{:?}", bad);
        }
    }
}
