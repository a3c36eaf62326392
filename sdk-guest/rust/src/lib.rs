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
//! [`progress`] writing to stderr, so a tool's logic can be tested with
//! `cargo test`.

use std::fmt::{self, Display};
use std::io::{self, Read, Write};
use std::panic::{self, AssertUnwindSafe};

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

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

/// A refusal from a wasmcp host function: the message was not sent, and the
/// tool may go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostError(pub i32);

impl Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.0 {
            1 => "message outside the module's memory",
            2 => "invalid level, progress or total",
            3 => "message is not UTF-8",
            4 => "message too long",
            5 => "this call's allowance of messages is used up",
            6 => "progress did not increase",
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

fn status(code: i32) -> Result<(), HostError> {
    match code {
        0 => Ok(()),
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

#[cfg(target_arch = "wasm32")]
mod host {
    #[link(wasm_import_module = "wasmcp")]
    extern "C" {
        #[link_name = "log"]
        fn wasmcp_log(level: i32, msg: *const u8, len: usize) -> i32;
        #[link_name = "progress"]
        fn wasmcp_progress(progress: f64, total: f64, msg: *const u8, len: usize) -> i32;
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
    pub fn log(level: super::Level, msg: &str) -> i32 {
        eprintln!("[{}] {}", level.name(), msg);
        0
    }

    pub fn progress(progress: f64, total: f64, msg: &str) -> i32 {
        if total < 0.0 {
            eprintln!("[progress {}] {}", progress, msg);
        } else {
            eprintln!("[progress {}/{}] {}", progress, total, msg);
        }
        0
    }
}
