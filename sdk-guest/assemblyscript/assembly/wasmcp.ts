// AssemblyScript guest SDK for wasmcp.
//
// A wasmcp tool is a WASI preview 1 command: for each call the host starts a
// fresh instance with argv [stem, toolName], the call's arguments as one JSON
// object on stdin, and reads the result from stdout and the exit status
// (docs/abi.md). A tool built on this file is top-level code:
//
//   import { args, text, fail } from "./wasmcp";
//   const name = args().getString("name");
//   if (name.length == 0) fail("name must not be empty");
//   text("Hello, " + name + "!");
//
// Compile with the WASI shim's config so that abort, argv and exit use WASI:
//   asc assembly/index.ts --config ./node_modules/@assemblyscript/wasi-shim/asconfig.json -O3 -o tool.wasm
//
// AssemblyScript has no exceptions: every check here that fails ends the call
// through fail(), which is what a tool wants for bad input. Code that must
// inspect a failure itself uses parseJSON, which returns the error instead.

// ---- host functions --------------------------------------------------------

// @ts-ignore: decorator
@external("wasmcp", "log")
declare function hostLog(level: i32, msg: usize, len: usize): i32;

// @ts-ignore: decorator
@external("wasmcp", "progress")
declare function hostProgress(progress: f64, total: f64, msg: usize, len: usize): i32;

// http_request makes the request and writes its answer's length; the answer
// waits in the host until http_response copies it, whole, into a buffer.
// @ts-ignore: decorator
@external("wasmcp", "http_request")
declare function hostHttpRequest(req: usize, len: usize, answerLen: usize): i32;

// @ts-ignore: decorator
@external("wasmcp", "http_response")
declare function hostHttpResponse(buf: usize, len: usize): i32;

// The asks of the client: each sends its request and writes its answer's
// length; the answer waits until ask_response copies it.
// @ts-ignore: decorator
@external("wasmcp", "elicit")
declare function hostElicit(req: usize, len: usize, answerLen: usize): i32;

// @ts-ignore: decorator
@external("wasmcp", "create_message")
declare function hostCreateMessage(req: usize, len: usize, answerLen: usize): i32;

// @ts-ignore: decorator
@external("wasmcp", "list_roots")
declare function hostListRoots(req: usize, len: usize, answerLen: usize): i32;

// @ts-ignore: decorator
@external("wasmcp", "ask_response")
declare function hostAskResponse(buf: usize, len: usize): i32;

// Declared here rather than taken from the shim's stream classes, which write
// once and ignore a short count; a large result must be written in full.
// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_read")
declare function fdRead(fd: u32, iovs: usize, iovsLen: usize, nread: usize): u16;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "fd_write")
declare function fdWrite(fd: u32, iovs: usize, iovsLen: usize, nwritten: usize): u16;

// One iovec and a result word, so that I/O allocates nothing.
const iov: usize = memory.data(12, 4);

/** Log levels: the RFC 5424 levels MCP uses, in increasing severity. */
export enum Level {
  Debug = 0,
  Info = 1,
  Notice = 2,
  Warning = 3,
  Error = 4,
  Critical = 5,
  Alert = 6,
  Emergency = 7,
}

/**
 * What the host functions return (docs/abi.md, "Result codes"): Ok, or why
 * the message was not sent or the request got no answer. The values are
 * those of the constants of wasmcp's Go package abi.
 */
export enum Code {
  /** Done as asked: the message was accepted, or the request answered. */
  Ok = 0,
  /** A pointer and length outside the module's memory. */
  Fault = 1,
  /** A bad argument (level, progress, total), or a malformed request. */
  Invalid = 2,
  /** A message that is not UTF-8. */
  Encoding = 3,
  /** A message or a request over its size limit. */
  TooLong = 4,
  /** The call has used up an allowance: of messages, progress reports, requests or their bytes. */
  Limit = 5,
  /** Progress that did not increase. */
  Order = 6,
  /** A request the operator's policy does not allow. */
  Denied = 7,
  /** A request that was allowed but failed: no answer, a timeout, a response over the size limit, too many redirects. */
  Network = 8,
}

// The host refuses longer messages (Code.TooLong); cutting keeps the
// useful start.
const MAX_MESSAGE = 8 << 10;

/**
 * Sends msg to the client as an MCP log notification; the client's chosen
 * level decides whether it is shown. Returns the host's Code: Code.Ok when
 * accepted, otherwise why not; the tool may go on either way.
 * Messages over 8 KiB are cut at a character boundary.
 */
export function log(level: Level, msg: string): i32 {
  const buf = message(msg);
  return hostLog(<i32>level, changetype<usize>(buf), <usize>buf.byteLength);
}

/**
 * Reports how far the call has got, when the client asked for progress.
 * progress must grow from one report to the next; total is the value it will
 * reach, or negative when unknown. Returns the host's Code, as log does.
 */
export function progress(progress: f64, total: f64, msg: string = ""): i32 {
  const buf = message(msg);
  return hostProgress(progress, total, changetype<usize>(buf), <usize>buf.byteLength);
}

function message(msg: string): ArrayBuffer {
  let buf = utf8(msg);
  if (buf.byteLength <= MAX_MESSAGE) return buf;
  let n = MAX_MESSAGE;
  // Back off continuation bytes so the cut falls between characters.
  while (n > 0 && (load<u8>(changetype<usize>(buf) + n) & 0xC0) == 0x80) n--;
  return buf.slice(0, n);
}

// Lone surrogates become U+FFFD: the host refuses a log message that is not
// UTF-8, and would mangle such text anyway.
function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s, false, String.UTF8.ErrorMode.REPLACE);
}

// ---- process ---------------------------------------------------------------

/** The tool the host asked for (argv[1]), or "" when none was named. */
export function toolName(): string {
  const argv = process.argv;
  return argv.length > 1 ? argv[1] : "";
}

/**
 * Writes msg to stderr as one line and exits with status 1: the host then
 * reports the call as a tool error whose text ends with msg. Never returns.
 */
export function fail(msg: string): void {
  write(2, utf8(oneLine(msg) + "\n"));
  process.exit(1);
}

// The host shows the model the tail of stderr, so a multi-line message would
// lose its start.
function oneLine(s: string): string {
  let out = "";
  let start = 0;
  let space = false;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 0x20;
    const ws = c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D;
    if (ws && !space) {
      if (i > start) out += (out.length > 0 ? " " : "") + s.substring(start, i);
      space = true;
    } else if (!ws && space) {
      start = i;
      space = false;
    }
  }
  return out;
}

/** Writes s to stdout: the result of a tool whose output mode is "text". */
export function text(s: string): void {
  write(1, utf8(s));
}

/**
 * Writes w's document to stdout: the result of a tool whose output mode is
 * "json". It must be one JSON object; anything else fails the call here, with
 * a message about the module rather than the host's about unusable output.
 */
export function json(w: JSONWriter): void {
  const s = w.toString();
  const r = parseJSON(s);
  if (!r.ok) fail("module bug: the tool wrote invalid JSON: " + r.error);
  else if (r.value!.kind != JSONKind.Object) fail("module bug: the tool's JSON result must be an object, not " + r.value!.kindName());
  text(s);
}

function write(fd: u32, buf: ArrayBuffer): void {
  let p = changetype<usize>(buf);
  let n = <usize>buf.byteLength;
  while (n > 0) {
    store<usize>(iov, p);
    store<usize>(iov, n, 4);
    // Nothing useful can be said about a failed write to stdout or stderr:
    // the host has gone or the output limit was reached.
    if (fdWrite(fd, iov, 1, iov + 8) != 0) process.exit(1);
    const done = load<usize>(iov, 8);
    if (done == 0) process.exit(1);
    p += done;
    n -= done;
  }
}

/** Reads all of stdin as UTF-8 text. Invalid UTF-8 fails the call. */
export function readInput(): string {
  let buf = new ArrayBuffer(4096);
  let len = 0;
  while (true) {
    if (len == buf.byteLength) {
      const bigger = new ArrayBuffer(len * 2);
      memory.copy(changetype<usize>(bigger), changetype<usize>(buf), <usize>len);
      buf = bigger;
    }
    store<usize>(iov, changetype<usize>(buf) + len);
    store<usize>(iov, <usize>(buf.byteLength - len), 4);
    const err = fdRead(0, iov, 1, iov + 8);
    if (err != 0) fail("reading arguments: WASI error " + err.toString());
    const n = <i32>load<usize>(iov, 8);
    if (n == 0) break;
    len += n;
  }
  const bad = invalidUTF8(changetype<usize>(buf), len);
  if (bad >= 0) fail("invalid arguments: not UTF-8 (at byte " + bad.toString() + ")");
  return String.UTF8.decodeUnsafe(changetype<usize>(buf), <usize>len);
}

// invalidUTF8 returns the offset of the first byte that does not start a
// well-formed UTF-8 sequence, or -1. The standard decoder guesses at
// malformed input, so it is checked first.
function invalidUTF8(p: usize, n: i32): i32 {
  let i = 0;
  while (i < n) {
    const b = <u32>load<u8>(p + i);
    if (b < 0x80) {
      i++;
      continue;
    }
    let need = 0;
    let c: u32 = 0;
    let min: u32 = 0;
    if ((b & 0xE0) == 0xC0) { need = 1; c = b & 0x1F; min = 0x80; }
    else if ((b & 0xF0) == 0xE0) { need = 2; c = b & 0x0F; min = 0x800; }
    else if ((b & 0xF8) == 0xF0) { need = 3; c = b & 0x07; min = 0x10000; }
    else return i;
    if (i + need >= n) return i;
    for (let k = 1; k <= need; k++) {
      const x = <u32>load<u8>(p + i + k);
      if ((x & 0xC0) != 0x80) return i;
      c = (c << 6) | (x & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return i;
    i += need + 1;
  }
  return -1;
}

let cachedArgs: JSONValue | null = null;

/**
 * The call's arguments: stdin parsed as a JSON object. Empty input counts as
 * {} so that the module can be run by hand. Malformed input fails the call.
 * stdin is read once; later calls return the same object.
 */
export function args(): JSONValue {
  let a = cachedArgs;
  if (a != null) return a;
  const input = readInput();
  const r = parseJSON(isBlank(input) ? "{}" : input);
  if (!r.ok) fail("invalid arguments: " + r.error);
  a = r.value!;
  if (a.kind != JSONKind.Object) fail("invalid arguments: want a JSON object, not " + a.kindName());
  cachedArgs = a;
  return a;
}

function isBlank(s: string): bool {
  for (let i = 0; i < s.length; i++) {
    if (!isSpace(s.charCodeAt(i))) return false;
  }
  return true;
}

// ---- JSON values -----------------------------------------------------------

export enum JSONKind { Null, Bool, Number, String, Array, Object }

/**
 * A parsed JSON value. Fields not of the value's kind keep their zero value.
 * Object members keep their order; a key appears at most once.
 */
export class JSONValue {
  kind: JSONKind = JSONKind.Null;
  bool: bool = false;
  /** A Number's value. */
  num: f64 = 0;
  /** A String's value, or a Number's source text (for exact integers). */
  str: string = "";
  /** An Array's elements, or an Object's values. */
  items: JSONValue[] = [];
  /** An Object's keys, matching items. */
  keys: string[] = [];

  constructor(kind: JSONKind) {
    this.kind = kind;
  }

  /** "a string", "an object", ...: for messages. */
  kindName(): string {
    switch (this.kind) {
      case JSONKind.Null: return "null";
      case JSONKind.Bool: return "a boolean";
      case JSONKind.Number: return "a number";
      case JSONKind.String: return "a string";
      case JSONKind.Array: return "an array";
      default: return "an object";
    }
  }

  /** The member named key of an object, or null when absent. */
  get(key: string): JSONValue | null {
    const keys = this.keys;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] == key) return this.items[i];
    }
    return null;
  }

  /**
   * Whether an object has a member key that is not null. An optional
   * argument sent as null counts as absent, as encoding/json treats it.
   */
  has(key: string): bool {
    const v = this.get(key);
    return v != null && v.kind != JSONKind.Null;
  }

  // The getters below fail the call when key is absent (or null) or holds
  // another kind of value; test optional members with has() first.

  getString(key: string): string {
    return this.member(key, JSONKind.String).str;
  }

  getNumber(key: string): f64 {
    return this.member(key, JSONKind.Number).num;
  }

  getBool(key: string): bool {
    return this.member(key, JSONKind.Bool).bool;
  }

  getObject(key: string): JSONValue {
    return this.member(key, JSONKind.Object);
  }

  getArray(key: string): JSONValue[] {
    return this.member(key, JSONKind.Array).items;
  }

  /**
   * A whole number. Written without fraction or exponent it is read exactly,
   * so 9007199254740993 stays itself; 2.0 and 1e3 are accepted too, as JSON
   * Schema's "integer" accepts them.
   */
  getInteger(key: string): i64 {
    const v = this.member(key, JSONKind.Number);
    const r = exactInteger(v.str);
    if (r.ok) return r.value;
    if (!r.plain && Math.floor(v.num) == v.num && Math.abs(v.num) < 9.223372036854775808e18) {
      return <i64>v.num;
    }
    if (r.plain || Math.floor(v.num) == v.num) {
      fail("invalid arguments: \"" + key + "\" must be an integer that fits 64 bits, not " + v.str);
    } else {
      fail("invalid arguments: \"" + key + "\" must be an integer, not " + v.str);
    }
    return unreachable();
  }

  private member(key: string, want: JSONKind): JSONValue {
    const v = this.get(key);
    if (v == null || v.kind == JSONKind.Null) {
      fail("invalid arguments: \"" + key + "\" is required");
      return unreachable();
    }
    if (v.kind != want) {
      const w = new JSONValue(want);
      fail("invalid arguments: \"" + key + "\" must be " + w.kindName() + ", not " + v.kindName());
    }
    return v;
  }
}

class IntResult {
  ok: bool = false;
  /** Whether the text was digits only, with no fraction or exponent. */
  plain: bool = false;
  value: i64 = 0;
}

function exactInteger(s: string): IntResult {
  const r = new IntResult();
  let i = 0;
  const neg = s.charCodeAt(0) == 0x2D;
  if (neg) i++;
  for (let j = i; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c < 0x30 || c > 0x39) return r;
  }
  r.plain = true;
  // Accumulated as a negative number, whose range is one larger, so that
  // -9223372036854775808 is read too.
  let v: i64 = 0;
  for (; i < s.length; i++) {
    const d = <i64>(s.charCodeAt(i) - 0x30);
    if (v < (i64.MIN_VALUE + d) / 10) return r;
    v = v * 10 - d;
  }
  if (!neg) {
    if (v == i64.MIN_VALUE) return r;
    v = -v;
  }
  r.ok = true;
  r.value = v;
  return r;
}

// ---- JSON reader -----------------------------------------------------------

/** parseJSON's result: value when ok, otherwise error says what is wrong. */
export class ParseResult {
  value: JSONValue | null = null;
  error: string = "";
  get ok(): bool {
    return this.value != null;
  }
}

/** Nesting deeper than this is refused, so hostile input cannot exhaust the stack. */
export const MAX_DEPTH = 64;

/**
 * Parses text as one JSON value (RFC 8259): no trailing commas, comments or
 * text after the value. Duplicate object keys are refused, since readers
 * disagree on which one wins. Numbers that overflow a 64-bit float are
 * refused. Invalid \u escapes of surrogates decode to U+FFFD, as Go's
 * encoding/json does.
 */
export function parseJSON(text: string, maxDepth: i32 = MAX_DEPTH): ParseResult {
  const p = new Parser(text, maxDepth);
  const r = new ParseResult();
  p.space();
  let v = p.value(0);
  if (v != null) {
    p.space();
    if (p.pos < text.length) v = p.fail("unexpected " + p.found() + " after the JSON value");
  }
  r.value = v;
  r.error = p.err;
  return r;
}

function isSpace(c: i32): bool {
  return c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D;
}

function isDigit(c: i32): bool {
  return c >= 0x30 && c <= 0x39;
}

class Parser {
  s: string;
  pos: i32 = 0;
  maxDepth: i32;
  err: string = "";

  constructor(s: string, maxDepth: i32) {
    this.s = s;
    this.maxDepth = maxDepth;
  }

  // The character at pos, or -1 at the end.
  peek(): i32 {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos) : -1;
  }

  found(): string {
    const c = this.peek();
    if (c < 0) return "end of input";
    if (c >= 0x20 && c < 0x7F) return "'" + String.fromCharCode(c) + "'";
    return "U+" + c.toString(16).toUpperCase().padStart(4, "0");
  }

  fail(msg: string): JSONValue | null {
    if (this.err.length == 0) this.err = msg + " (at character " + this.pos.toString() + ")";
    return null;
  }

  space(): void {
    while (isSpace(this.peek())) this.pos++;
  }

  value(depth: i32): JSONValue | null {
    const c = this.peek();
    if (c == 0x7B || c == 0x5B) {
      if (depth >= this.maxDepth) return this.fail("nested deeper than " + this.maxDepth.toString() + " levels");
      return c == 0x7B ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c == 0x22) {
      const s = this.string();
      if (s == null) return null;
      const v = new JSONValue(JSONKind.String);
      v.str = s;
      return v;
    }
    if (c == 0x2D || isDigit(c)) return this.number();
    if (this.literal("true")) {
      const v = new JSONValue(JSONKind.Bool);
      v.bool = true;
      return v;
    }
    if (this.literal("false")) return new JSONValue(JSONKind.Bool);
    if (this.literal("null")) return new JSONValue(JSONKind.Null);
    return this.fail("expected a JSON value, found " + this.found());
  }

  literal(word: string): bool {
    const end = this.pos + word.length;
    if (end > this.s.length || this.s.substring(this.pos, end) != word) return false;
    this.pos = end;
    return true;
  }

  object(depth: i32): JSONValue | null {
    const v = new JSONValue(JSONKind.Object);
    this.pos++; // {
    this.space();
    if (this.peek() == 0x7D) {
      this.pos++;
      return v;
    }
    while (true) {
      if (this.peek() != 0x22) return this.fail("expected a string key, found " + this.found());
      const at = this.pos;
      const key = this.string();
      if (key == null) return null;
      if (v.get(key) != null) {
        this.pos = at;
        return this.fail("duplicate key " + quote(key));
      }
      this.space();
      if (this.peek() != 0x3A) return this.fail("expected ':' after an object key, found " + this.found());
      this.pos++;
      this.space();
      const item = this.value(depth);
      if (item == null) return null;
      v.keys.push(key);
      v.items.push(item);
      this.space();
      const c = this.peek();
      this.pos++;
      if (c == 0x7D) return v;
      if (c != 0x2C) {
        this.pos--;
        return this.fail("expected ',' or '}' after an object member, found " + this.found());
      }
      this.space();
    }
  }

  array(depth: i32): JSONValue | null {
    const v = new JSONValue(JSONKind.Array);
    this.pos++; // [
    this.space();
    if (this.peek() == 0x5D) {
      this.pos++;
      return v;
    }
    while (true) {
      const item = this.value(depth);
      if (item == null) return null;
      v.items.push(item);
      this.space();
      const c = this.peek();
      this.pos++;
      if (c == 0x5D) return v;
      if (c != 0x2C) {
        this.pos--;
        return this.fail("expected ',' or ']' after an array element, found " + this.found());
      }
      this.space();
    }
  }

  number(): JSONValue | null {
    const start = this.pos;
    if (this.peek() == 0x2D) this.pos++;
    if (this.peek() == 0x30) {
      this.pos++;
    } else if (isDigit(this.peek())) {
      while (isDigit(this.peek())) this.pos++;
    } else {
      return this.fail("expected a digit, found " + this.found());
    }
    if (this.peek() == 0x2E) {
      this.pos++;
      if (!isDigit(this.peek())) return this.fail("expected a digit after '.', found " + this.found());
      while (isDigit(this.peek())) this.pos++;
    }
    const e = this.peek();
    if (e == 0x65 || e == 0x45) {
      this.pos++;
      const sign = this.peek();
      if (sign == 0x2B || sign == 0x2D) this.pos++;
      if (!isDigit(this.peek())) return this.fail("expected a digit in the exponent, found " + this.found());
      while (isDigit(this.peek())) this.pos++;
    }
    const src = this.s.substring(start, this.pos);
    const n = parseFloat(src);
    if (!isFinite(n)) {
      this.pos = start;
      return this.fail("number " + src + " is too large for a 64-bit float");
    }
    const v = new JSONValue(JSONKind.Number);
    v.num = n;
    v.str = src;
    return v;
  }

  // string reads a quoted string starting at pos. Runs without escapes are
  // copied whole; an array of parts avoids quadratic concatenation.
  string(): string | null {
    this.pos++; // "
    const parts: string[] = [];
    let run = this.pos;
    while (true) {
      const c = this.peek();
      if (c < 0) {
        this.fail("unterminated string");
        return null;
      }
      if (c == 0x22) {
        parts.push(this.s.substring(run, this.pos));
        this.pos++;
        return parts.length == 1 ? parts[0] : parts.join("");
      }
      if (c < 0x20) {
        this.fail("control character U+" + c.toString(16).toUpperCase().padStart(4, "0") + " in a string must be escaped");
        return null;
      }
      if (c != 0x5C) {
        this.pos++;
        continue;
      }
      parts.push(this.s.substring(run, this.pos));
      const at = this.pos;
      this.pos++; // backslash
      const e = this.peek();
      this.pos++;
      switch (e) {
        case 0x22: parts.push("\""); break;
        case 0x5C: parts.push("\\"); break;
        case 0x2F: parts.push("/"); break;
        case 0x62: parts.push("\b"); break;
        case 0x66: parts.push("\f"); break;
        case 0x6E: parts.push("\n"); break;
        case 0x72: parts.push("\r"); break;
        case 0x74: parts.push("\t"); break;
        case 0x75: {
          const u = this.hex4();
          if (u < 0) return null;
          if (u >= 0xD800 && u <= 0xDBFF) {
            // A high surrogate counts only when a \u low surrogate follows.
            if (this.peek() == 0x5C && this.pos + 1 < this.s.length && this.s.charCodeAt(this.pos + 1) == 0x75) {
              const back = this.pos;
              this.pos += 2;
              const lo = this.hex4();
              if (lo < 0) return null;
              if (lo >= 0xDC00 && lo <= 0xDFFF) {
                parts.push(String.fromCharCode(u, lo));
                break;
              }
              this.pos = back;
            }
            parts.push("\uFFFD");
          } else if (u >= 0xDC00 && u <= 0xDFFF) {
            parts.push("\uFFFD");
          } else {
            parts.push(String.fromCharCode(u));
          }
          break;
        }
        default:
          this.pos = at;
          this.fail("invalid escape in a string: \\" + (e < 0 ? "" : String.fromCharCode(e)));
          return null;
      }
      run = this.pos;
    }
  }

  hex4(): i32 {
    let u = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.peek();
      let d = -1;
      if (c >= 0x30 && c <= 0x39) d = c - 0x30;
      else if (c >= 0x61 && c <= 0x66) d = c - 0x61 + 10;
      else if (c >= 0x41 && c <= 0x46) d = c - 0x41 + 10;
      if (d < 0) {
        this.fail("expected 4 hex digits after \\u, found " + this.found());
        return -1;
      }
      u = (u << 4) | d;
      this.pos++;
    }
    return u;
  }
}

// ---- JSON writer -----------------------------------------------------------

/** s as a JSON string literal, with its quotes. */
export function quote(s: string): string {
  const parts: string[] = ["\""];
  let run = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | null = null;
    if (c == 0x22) esc = "\\\"";
    else if (c == 0x5C) esc = "\\\\";
    else if (c < 0x20) {
      if (c == 0x0A) esc = "\\n";
      else if (c == 0x0D) esc = "\\r";
      else if (c == 0x09) esc = "\\t";
      else if (c == 0x08) esc = "\\b";
      else if (c == 0x0C) esc = "\\f";
      else esc = "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16);
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      // A pair passes through; a lone surrogate cannot be UTF-8 encoded, but
      // as an escape it is still valid JSON (readers make it U+FFFD).
      const pair = c <= 0xDBFF && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xFC00) == 0xDC00;
      if (pair) {
        i++;
        continue;
      }
      esc = "\\u" + c.toString(16);
    }
    if (esc != null) {
      parts.push(s.substring(run, i));
      parts.push(esc);
      run = i + 1;
    }
  }
  parts.push(s.substring(run));
  parts.push("\"");
  return parts.join("");
}

/**
 * Builds a JSON document piece by piece; commas are placed for you.
 *
 *   const w = new JSONWriter();
 *   w.beginObject().key("slug").string(s).key("length").integer(s.length).endObject();
 *   json(w);
 */
export class JSONWriter {
  private parts: string[] = [];
  // One entry per open container: whether it already has an element.
  private filled: bool[] = [];
  private afterKey: bool = false;

  private next(): void {
    if (this.afterKey) {
      this.afterKey = false;
      return;
    }
    const n = this.filled.length;
    if (n == 0) return;
    if (this.filled[n - 1]) this.parts.push(",");
    this.filled[n - 1] = true;
  }

  beginObject(): JSONWriter {
    this.next();
    this.parts.push("{");
    this.filled.push(false);
    return this;
  }

  endObject(): JSONWriter {
    this.filled.pop();
    this.parts.push("}");
    return this;
  }

  beginArray(): JSONWriter {
    this.next();
    this.parts.push("[");
    this.filled.push(false);
    return this;
  }

  endArray(): JSONWriter {
    this.filled.pop();
    this.parts.push("]");
    return this;
  }

  /** Starts an object member; the next value written is its value. */
  key(k: string): JSONWriter {
    this.next();
    this.parts.push(quote(k));
    this.parts.push(":");
    this.afterKey = true;
    return this;
  }

  string(s: string): JSONWriter {
    this.next();
    this.parts.push(quote(s));
    return this;
  }

  /** A number; NaN and infinities fail the call, since JSON has neither. */
  number(n: f64): JSONWriter {
    if (!isFinite(n)) fail("module bug: JSON has no NaN or infinity");
    this.next();
    // The standard formatting drops the sign of -0.
    this.parts.push(n == 0 && 1 / n < 0 ? "-0.0" : n.toString());
    return this;
  }

  integer(n: i64): JSONWriter {
    this.next();
    this.parts.push(n.toString());
    return this;
  }

  bool(b: bool): JSONWriter {
    this.next();
    this.parts.push(b ? "true" : "false");
    return this;
  }

  nullValue(): JSONWriter {
    this.next();
    this.parts.push("null");
    return this;
  }

  /** A parsed value, written back; numbers keep their source text. */
  value(v: JSONValue): JSONWriter {
    switch (v.kind) {
      case JSONKind.Null: return this.nullValue();
      case JSONKind.Bool: return this.bool(v.bool);
      case JSONKind.String: return this.string(v.str);
      case JSONKind.Number:
        this.next();
        this.parts.push(v.str.length > 0 ? v.str : v.num.toString());
        return this;
      case JSONKind.Array:
        this.beginArray();
        for (let i = 0; i < v.items.length; i++) this.value(v.items[i]);
        return this.endArray();
      default:
        this.beginObject();
        for (let i = 0; i < v.items.length; i++) this.key(v.keys[i]).value(v.items[i]);
        return this.endObject();
    }
  }

  toString(): string {
    return this.parts.join("");
  }
}

// ---- HTTP ------------------------------------------------------------------

/** What the host got back: any HTTP status, error statuses included. */
export class HttpResponse {
  status: i32 = 0;
  /** Header names as the host sent them: look them up with header(). */
  headers: Map<string, string> = new Map<string, string>();
  /** Exactly the response's bytes. */
  body: ArrayBuffer = new ArrayBuffer(0);

  /** The value of the header called name, in any case, or null. */
  header(name: string): string | null {
    const want = name.toLowerCase();
    const keys = this.headers.keys();
    for (let i = 0; i < keys.length; i++) {
      if (keys[i].toLowerCase() == want) return this.headers.get(keys[i]);
    }
    return null;
  }

  /** The body as text; bytes that are not UTF-8 become U+FFFD. */
  text(): string {
    return String.UTF8.decode(this.body);
  }
}

/**
 * http's result: response when ok. Otherwise code is the host's (a Code:
 * Denied by the operator's policy, Network for a failure or a timeout,
 * Invalid or TooLong for a bad or oversized request, Limit when the call
 * has used up its requests; -1 for an unreadable answer) and error says
 * what was missing or what failed, in words to pass on with fail().
 */
export class HttpResult {
  response: HttpResponse | null = null;
  code: i32 = 0;
  error: string = "";
  get ok(): bool {
    return this.response != null;
  }
  get denied(): bool {
    return this.code == Code.Denied;
  }
}

/**
 * Has the host make an HTTP request; a tool has no network of its own, and
 * the host checks every request against the operator's policy. method ""
 * means GET. A body that is not UTF-8 travels base64-encoded. secret names a
 * secret the operator bound to the URL's host: the host adds it (typically
 * as an Authorization header) and the tool never sees its value.
 */
export function http(method: string, url: string, headers: Map<string, string> | null = null,
  body: ArrayBuffer | null = null, secret: string = ""): HttpResult {
  const req = utf8(httpRequestJSON(method, url, headers, body, secret));
  // Where the host writes the answer's length; static data local to this
  // function, so that modules that never call http do not carry it. The
  // host leaves it alone when it refuses a request outright.
  const answerLen = memory.data(4, 4);
  store<u32>(answerLen, 0);
  const code = hostHttpRequest(changetype<usize>(req), <usize>req.byteLength, answerLen);
  const n = load<u32>(answerLen);
  if (n == 0) return httpAnswer(code, "");
  const buf = new ArrayBuffer(<i32>n);
  const rc = hostHttpResponse(changetype<usize>(buf), <usize>n);
  if (rc != Code.Ok) {
    return httpError(rc, rc == Code.TooLong
      ? "wasmcp host: the answer did not fit the " + n.toString() + " bytes announced for it"
      : "wasmcp host: taking the answer failed with error " + rc.toString());
  }
  if (invalidUTF8(changetype<usize>(buf), <i32>n) >= 0) {
    return code == Code.Ok ? httpError(-1, "wasmcp host: unreadable http answer: not UTF-8") : httpAnswer(code, "");
  }
  return httpAnswer(code, String.UTF8.decodeUnsafe(changetype<usize>(buf), <usize>n));
}

/** The JSON http sends the host (docs/abi.md); exported for tests. */
export function httpRequestJSON(method: string, url: string, headers: Map<string, string> | null,
  body: ArrayBuffer | null, secret: string): string {
  const w = new JSONWriter();
  w.beginObject().key("method").string(method.length > 0 ? method : "GET").key("url").string(url);
  if (headers != null && headers.size > 0) {
    w.key("headers").beginObject();
    const keys = headers.keys();
    for (let i = 0; i < keys.length; i++) w.key(keys[i]).string(headers.get(keys[i]));
    w.endObject();
  }
  if (body != null) {
    const p = changetype<usize>(body);
    if (invalidUTF8(p, body.byteLength) < 0) w.key("body").string(String.UTF8.decodeUnsafe(p, <usize>body.byteLength));
    else w.key("body_base64").string(base64(body));
  }
  if (secret.length > 0) w.key("secret").string(secret);
  return w.endObject().toString();
}

/**
 * Reads the host's answer to a request that returned code, as http does;
 * exported so that tests can give a tool's logic canned answers.
 */
export function httpAnswer(code: i32, answer: string): HttpResult {
  const p = parseJSON(answer);
  const a = p.ok && p.value!.kind == JSONKind.Object ? p.value : null;
  if (code != Code.Ok) {
    const e = a != null ? a.get("error") : null;
    if (e != null && e.kind == JSONKind.String && e.str.length > 0) return httpError(code, e.str);
    return httpError(code, "wasmcp host: " + httpCodeText(code));
  }
  if (a == null) {
    return unreadable(answer.length == 0 ? "there is none" : p.ok ? "not a JSON object" : p.error);
  }
  const resp = new HttpResponse();
  const status = a.get("status");
  if (status != null && status.kind != JSONKind.Null) {
    const n = status.kind == JSONKind.Number ? exactInteger(status.str) : new IntResult();
    if (!n.ok || n.value < 0 || n.value > 999) return unreadable("status is not an HTTP status");
    resp.status = <i32>n.value;
  }
  const headers = a.get("headers");
  if (headers != null && headers.kind == JSONKind.Object) {
    for (let i = 0; i < headers.keys.length; i++) {
      const v = headers.items[i];
      if (v.kind != JSONKind.String) return unreadable("a header's value is not a string");
      resp.headers.set(headers.keys[i], v.str);
    }
  } else if (headers != null && headers.kind != JSONKind.Null) {
    return unreadable("headers is not an object");
  }
  let body = a.get("body");
  if (body != null && body.kind == JSONKind.String) {
    resp.body = utf8(body.str);
  } else if (body != null && body.kind != JSONKind.Null) {
    return unreadable("body is not a string");
  } else {
    body = a.get("body_base64");
    if (body != null && body.kind == JSONKind.String) {
      const b = base64Decode(body.str);
      if (b == null) return unreadable("body_base64 is not base64");
      resp.body = b;
    } else if (body != null && body.kind != JSONKind.Null) {
      return unreadable("body_base64 is not a string");
    }
  }
  const r = new HttpResult();
  r.response = resp;
  return r;
}

function httpError(code: i32, msg: string): HttpResult {
  const r = new HttpResult();
  r.code = code;
  r.error = msg;
  return r;
}

function unreadable(what: string): HttpResult {
  return httpError(-1, "wasmcp host: unreadable http answer: " + what);
}

// What a refusal means when the host gave no answer saying so.
function httpCodeText(code: i32): string {
  switch (code) {
    case Code.Fault: return "the request is outside the module's memory";
    case Code.Invalid: return "invalid request";
    case Code.TooLong: return "the request is too long";
    case Code.Limit: return "this call's allowance of requests is used up";
    case Code.Denied: return "the server's policy does not allow this request";
    case Code.Network: return "the request failed";
    default: return "error " + code.toString();
  }
}

// Padded standard base64: how the ABI carries a body that is not UTF-8,
// which a JSON string cannot hold.
function base64(buf: ArrayBuffer): string {
  const p = changetype<usize>(buf);
  const n = buf.byteLength;
  const out = new ArrayBuffer((n + 2) / 3 * 4);
  const q = changetype<usize>(out);
  for (let i = 0, j = 0; i < n; i += 3, j += 4) {
    const v = (<u32>load<u8>(p + i) << 16) | (i + 1 < n ? <u32>load<u8>(p + i + 1) << 8 : 0) |
      (i + 2 < n ? <u32>load<u8>(p + i + 2) : 0);
    store<u8>(q + j, base64Digit(v >> 18));
    store<u8>(q + j + 1, base64Digit((v >> 12) & 63));
    store<u8>(q + j + 2, i + 1 < n ? base64Digit((v >> 6) & 63) : 0x3D);
    store<u8>(q + j + 3, i + 2 < n ? base64Digit(v & 63) : 0x3D);
  }
  return String.UTF8.decode(out);
}

// Computed rather than looked up in an alphabet string, which would be
// static data in every module, HTTP or not.
function base64Digit(d: u32): u8 {
  return <u8>(d < 26 ? 0x41 + d : d < 52 ? 0x61 + d - 26 : d < 62 ? 0x30 + d - 52 : d == 62 ? 0x2B : 0x2F);
}

function base64Value(c: i32): i32 {
  if (c >= 0x41 && c <= 0x5A) return c - 0x41;
  if (c >= 0x61 && c <= 0x7A) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c == 0x2B) return 62;
  if (c == 0x2F) return 63;
  return -1;
}

function base64Decode(s: string): ArrayBuffer | null {
  const n = s.length;
  if (n % 4 != 0) return null;
  let pad = 0;
  if (n > 0 && s.charCodeAt(n - 1) == 0x3D) pad++;
  if (n > 1 && s.charCodeAt(n - 2) == 0x3D) pad++;
  const out = new ArrayBuffer(n / 4 * 3 - pad);
  const q = changetype<usize>(out);
  let j = 0;
  for (let i = 0; i < n; i += 4) {
    let v: u32 = 0;
    for (let k = 0; k < 4; k++) {
      let d = base64Value(s.charCodeAt(i + k));
      if (d < 0) {
        // '=' only as the padding at the very end.
        if (s.charCodeAt(i + k) != 0x3D || i + 4 < n || k < 4 - pad) return null;
        d = 0;
      }
      v = (v << 6) | <u32>d;
    }
    const m = i + 4 < n ? 3 : 3 - pad;
    store<u8>(q + j, <u8>(v >> 16));
    if (m > 1) store<u8>(q + j + 1, <u8>(v >> 8));
    if (m > 2) store<u8>(q + j + 2, <u8>v);
    j += m;
  }
  return out;
}

// ---- asking the client -----------------------------------------------------

/** The client's answer to an ask (docs/abi.md, "Asking the client"). */
export class AskResult {
  /** Code.Ok, or the host's code: Code.Denied when the manifest or the client lacks the capability. */
  code: i32 = Code.Ok;
  /** The client's result as JSON, for parseJSON, when code is Code.Ok. */
  answer: string = "";
  /** Why there is no answer, otherwise. */
  error: string = "";
  get ok(): bool { return this.code == Code.Ok; }
}

/**
 * Asks the user, through the client, by elicitation: params is
 * elicitation/create's params as JSON (message and requestedSchema), id
 * names the ask within the call ("" for "ask-N"; on MCP 2026-07-28 the key
 * of its input request). The manifest must declare "client":
 * ["elicitation"]. On 2026-07-28 the host may end the run at an ask and run
 * the tool again with the answer: ask the same things in the same order
 * each time, and act after the last ask.
 */
export function elicit(id: string, params: string): AskResult {
  // Each ask calls its own host function, so that a tool imports only
  // those it uses; the length's word is static data of each.
  const req = utf8(askRequestJSON(id, params));
  const n = memory.data(4, 4);
  store<u32>(n, 0);
  return askAnswer(hostElicit(changetype<usize>(req), <usize>req.byteLength, n), load<u32>(n));
}

/** Asks the client to sample its model (sampling/createMessage's params), as elicit asks; "client": ["sampling"]. */
export function createMessage(id: string, params: string): AskResult {
  const req = utf8(askRequestJSON(id, params));
  const n = memory.data(4, 4);
  store<u32>(n, 0);
  return askAnswer(hostCreateMessage(changetype<usize>(req), <usize>req.byteLength, n), load<u32>(n));
}

/** Asks the client for its roots, as elicit asks; "client": ["roots"]. */
export function listRoots(id: string): AskResult {
  const req = utf8(askRequestJSON(id, "{}"));
  const n = memory.data(4, 4);
  store<u32>(n, 0);
  return askAnswer(hostListRoots(changetype<usize>(req), <usize>req.byteLength, n), load<u32>(n));
}

/** The JSON an ask sends the host: {"id", "params"}, params as given; exported for tests. */
export function askRequestJSON(id: string, params: string): string {
  const w = new JSONWriter();
  w.beginObject();
  if (id.length > 0) w.key("id").string(id);
  return w.toString() + (id.length > 0 ? "," : "") + "\"params\":" + params + "}";
}

// Takes the answer of an ask that returned code, n bytes long.
function askAnswer(code: i32, n: u32): AskResult {
  const r = new AskResult();
  r.code = code;
  let text = "";
  if (n > 0) {
    const buf = new ArrayBuffer(<i32>n);
    const rc = hostAskResponse(changetype<usize>(buf), <usize>n);
    if (rc != Code.Ok) {
      r.code = rc;
      r.error = "wasmcp host: taking the answer failed with error " + rc.toString();
      return r;
    }
    if (invalidUTF8(changetype<usize>(buf), <i32>n) < 0) text = String.UTF8.decodeUnsafe(changetype<usize>(buf), <usize>n);
  }
  if (code == Code.Ok) {
    r.answer = text;
    return r;
  }
  const p = parseJSON(text);
  const e = p.ok && p.value!.kind == JSONKind.Object ? p.value!.get("error") : null;
  r.error = e != null && e.kind == JSONKind.String && e.str.length > 0 ? e.str : "wasmcp host: the ask failed with error " + code.toString();
  return r;
}
