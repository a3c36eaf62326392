// wasmcp: the JavaScript guest SDK, built into the QuickJS runtime as the
// module "wasmcp" (types: wasmcp.d.ts). A tool's code registers its tools
// once, as it starts; the runtime then calls run, which this module hands
// it through register, once per call.
import * as host from "wasmcp:host";

/** Result codes of the host functions (docs/abi.md, "Result codes"). */
export const Code = Object.freeze({
  OK: 0, Fault: 1, Invalid: 2, Encoding: 3, TooLong: 4, Limit: 5, Order: 6, Denied: 7, Network: 8,
});

const levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
let registry = null;

function handlerOf(mode, handler) {
  if (typeof handler !== "function") {
    throw new TypeError(`${mode}() needs the tool's handler function, not ${describe(handler)}`);
  }
  return Object.freeze({ mode, handler });
}

/** A tool whose handler returns a string: one text block ("output": "text"). */
export function text(handler) { return handlerOf("text", handler); }
/** A tool whose handler returns an object: structuredContent ("output": "json"). */
export function json(handler) { return handlerOf("json", handler); }
/** A tool whose handler returns an MCP CallToolResult ("output": "result"). */
export function result(handler) { return handlerOf("result", handler); }

/**
 * Registers the module's tools, by name, as the manifest names them. Call it
 * once, at the top level of the tool's code.
 */
export function tools(map) {
  if (registry !== null) throw new Error("tools() was called twice: register every tool in one call");
  if (map === null || typeof map !== "object") throw new TypeError(`tools() needs an object of tools, not ${describe(map)}`);
  const r = Object.create(null);
  for (const [name, t] of Object.entries(map)) {
    if (t === null || typeof t !== "object" || typeof t.handler !== "function") {
      throw new TypeError(`tool "${name}" must be text(handler), json(handler) or result(handler)`);
    }
    r[name] = t;
  }
  registry = r;
}

// The entry points a module may serve besides its tools: the host starts the
// module with one of them as argv[1] (docs/abi.md, "Reading a resource",
// "Getting a prompt" and "Completions"). No tool may have these names.
const readResource = "resources/read";
const getPrompt = "prompts/get";
const complete = "completion/complete";
// What registers each entry point's handler, for the message of a module
// that lacks one.
const registers = { [readResource]: "resources", [getPrompt]: "prompts", [complete]: "completions" };
const entries = Object.create(null);

function entry(point, fn, handler) {
  if (typeof handler !== "function") throw new TypeError(`${fn}() needs a handler function, not ${describe(handler)}`);
  if (entries[point] !== undefined) throw new Error(`${fn}() was called twice: one handler serves every ${point}`);
  entries[point] = handler;
}

/**
 * Registers the handler of the module's resources/read: handler(uri, args)
 * answers the reads of every resource the manifest declares without contents
 * and of every URI its templates match (args: the template's variables).
 */
export function resources(handler) { entry(readResource, "resources", handler); }

/**
 * Registers the handler of the module's prompts/get: handler(name, args) gets
 * every prompt the manifest declares without messages.
 */
export function prompts(handler) { entry(getPrompt, "prompts", handler); }

/**
 * Registers the handler of the module's completion/complete:
 * handler(ref, name, value, context) offers values for the arguments and
 * variables of every prompt and template whose manifest entry says
 * "complete": "module" and that declare none of their own.
 */
export function completions(handler) { entry(complete, "completions", handler); }

// The completion/complete answer for what a handler returned; throws what is
// wrong.
function completionOf(out) {
  const answer = {};
  if (out !== null && typeof out === "object" && !Array.isArray(out)) {
    const extra = Object.keys(out).filter((k) => !["values", "total", "hasMore"].includes(k));
    if (extra.length > 0) throw new Error(`the completion has ${extra.join(", ")}; it holds only values, total and hasMore`);
    if (out.total !== undefined) answer.total = out.total;
    if (out.hasMore !== undefined) answer.hasMore = Boolean(out.hasMore);
    out = out.values;
  }
  if (!Array.isArray(out) || !out.every((v) => typeof v === "string")) throw new Error("the completion's values must be an array of strings");
  answer.values = out;
  return answer;
}

function bytesOf(v) {
  return v instanceof Uint8Array ? v : v instanceof ArrayBuffer ? new Uint8Array(v) : null;
}

// The resources/read answer for what a handler returned; throws what is wrong.
function contentsOf(out) {
  if (typeof out === "string") out = [{ text: out }];
  else if (bytesOf(out) !== null) out = [{ blob: out }];
  if (!Array.isArray(out) || out.length === 0) {
    throw new Error(`the read returned ${Array.isArray(out) ? "no contents" : describe(out)}; return a string, bytes or an array of contents`);
  }
  return {
    contents: out.map((c, i) => {
      if (c === null || typeof c !== "object" || Array.isArray(c)) throw new Error(`the read's contents[${i}] is ${describe(c)}, not an object`);
      const extra = Object.keys(c).filter((k) => !["uri", "mimeType", "text", "blob"].includes(k));
      if (extra.length > 0) throw new Error(`the read's contents[${i}] has ${extra.join(", ")}; contents hold only uri, mimeType, and text or blob`);
      if (("text" in c) === ("blob" in c)) throw new Error(`the read's contents[${i}] must have exactly one of text and blob`);
      const w = { ...c };
      if ("blob" in c) {
        const b = bytesOf(c.blob);
        if (b === null) throw new Error(`the read's contents[${i}].blob is ${describe(c.blob)}, not a Uint8Array`);
        w.blob = toBase64(b);
      } else if (typeof c.text !== "string") {
        throw new Error(`the read's contents[${i}].text is ${describe(c.text)}, not a string`);
      }
      return w;
    }),
  };
}

// The prompts/get answer for what a handler returned; throws what is wrong.
function messagesOf(out) {
  const answer = {};
  if (out !== null && typeof out === "object" && !Array.isArray(out)) {
    const extra = Object.keys(out).filter((k) => k !== "description" && k !== "messages");
    if (extra.length > 0) throw new Error(`the prompt's answer has ${extra.join(", ")}; it holds only description and messages`);
    if (out.description !== undefined) answer.description = String(out.description);
    out = out.messages;
  }
  if (!Array.isArray(out) || out.length === 0) throw new Error("the prompt has no messages");
  answer.messages = out.map((m, i) => {
    if (m === null || typeof m !== "object" || Object.keys(m).sort().join() !== "content,role") {
      throw new Error(`the prompt's messages[${i}] is not an object of role and content`);
    }
    if (m.role !== "user" && m.role !== "assistant") throw new Error(`the prompt's messages[${i}].role is "${m.role}", not user or assistant`);
    const content = typeof m.content === "string" ? { type: "text", text: m.content } : m.content;
    if (content === null || typeof content !== "object" || typeof content.type !== "string") {
      throw new Error(`the prompt's messages[${i}].content is not a content block`);
    }
    return { role: m.role, content };
  });
  return answer;
}

function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  const t = typeof v;
  return t === "object" ? "an object" : t === "undefined" ? "undefined" : `a ${t}`;
}

/** Sends a log message to the client at one of the MCP levels ("debug" ... "emergency"). */
export function log(level, message) {
  const n = levels.indexOf(level);
  if (n < 0) throw new RangeError(`log level "${level}" is not one of ${levels.join(", ")}`);
  return host.log(n, String(message));
}

/** Reports progress, if the client asked for it; done must grow from one report to the next. */
export function progress(done, total, message) {
  return host.progress(done, total === undefined || total === null ? -1 : total, message === undefined ? "" : String(message));
}

/** An HTTP request the host refused (denied: the operator's policy) or could not complete. */
export class HTTPError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "HTTPError";
    this.code = code;
    this.denied = code === Code.Denied;
  }
}

const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    s += b64[n >> 18] + b64[(n >> 12) & 63] +
      (i + 1 < bytes.length ? b64[(n >> 6) & 63] : "=") + (i + 2 < bytes.length ? b64[n & 63] : "=");
  }
  return s;
}

function fromBase64(s) {
  const clean = s.replace(/=+$/, "");
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let acc = 0, bits = 0, j = 0;
  for (let i = 0; i < clean.length; i++) {
    const v = b64.indexOf(clean[i]);
    if (v < 0) throw new Error("the host's answer has a body_base64 that is not base64");
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >> bits) & 255;
    }
  }
  return out;
}

const codeText = {
  [Code.Fault]: "the request was outside the tool's memory",
  [Code.Invalid]: "the request was malformed",
  [Code.TooLong]: "the request was over a size limit",
  [Code.Limit]: "this call has used up its HTTP requests or their bytes",
  [Code.Denied]: "the server's policy does not allow the request",
  [Code.Network]: "the request failed",
};

/**
 * Has the host make an HTTP request, if the operator's policy allows it.
 * Returns { status, headers, body } (body: a string, or a Uint8Array when the
 * response was not UTF-8); throws HTTPError when there was no response.
 */
export function http(req) {
  if (req === null || typeof req !== "object") throw new TypeError(`http() needs a request object, not ${describe(req)}`);
  const wire = { method: req.method ?? "GET", url: String(req.url) };
  if (req.headers) wire.headers = req.headers;
  if (req.secret) wire.secret = req.secret;
  if (req.body !== undefined && req.body !== null) {
    if (typeof req.body === "string") wire.body = req.body;
    else if (req.body instanceof Uint8Array) wire.body_base64 = toBase64(req.body);
    else if (req.body instanceof ArrayBuffer) wire.body_base64 = toBase64(new Uint8Array(req.body));
    else throw new TypeError(`an HTTP body is a string or a Uint8Array, not ${describe(req.body)}`);
  }
  const [code, answer] = host.http(JSON.stringify(wire));
  let a = null;
  if (answer !== undefined) {
    try { a = JSON.parse(answer); } catch { a = null; }
  }
  if (code !== Code.OK) {
    const msg = a && typeof a.error === "string" && a.error !== "" ? a.error : codeText[code] ?? `the host refused the request (code ${code})`;
    throw new HTTPError(code, msg);
  }
  if (a === null || typeof a !== "object") throw new HTTPError(-1, "the host's answer to an HTTP request was unreadable");
  const body = typeof a.body_base64 === "string" ? fromBase64(a.body_base64) : (a.body ?? "");
  return { status: a.status, headers: a.headers ?? {}, body };
}

/** An ask of the client that brought no answer: code says why (Code.Denied: the tool or the client did not declare the capability). */
export class AskError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "AskError";
    this.code = code;
  }
}

// ask sends one ask by the host's ask_all and returns the client's answer.
// On 2026-07-28 an ask without an answer yet ends the call here; the
// client answers and the call runs again, and this ask then returns.
function ask(method, id, params) {
  const one = { method, params };
  if (id !== undefined && id !== null) one.id = String(id);
  const [code, answer] = host.ask(JSON.stringify([one]));
  let all = null;
  if (answer !== undefined) {
    try { all = JSON.parse(answer); } catch { all = null; }
  }
  // The answer is each ask's by its id (ask-1 when the tool names none),
  // or, for a request the host could not take, {error}.
  const key = one.id;
  const mine = all === null || typeof all !== "object" ? null
    : key !== undefined && key in all ? all[key]
    : typeof all.error === "string" ? all : Object.values(all)[0];
  if (code !== Code.OK) {
    const msg = mine && typeof mine.error === "string" && mine.error !== "" ? mine.error : `the host did not ask the client (code ${code})`;
    throw new AskError(code, msg);
  }
  if (mine === null || typeof mine !== "object") throw new AskError(-1, "the client's answer was unreadable");
  return mine;
}

/**
 * Asks the user, by elicitation, to fill in a form: { id?, message,
 * requestedSchema } (or { id?, message, url, elicitationId } to send them to
 * a URL). Returns { action: "accept" | "decline" | "cancel", content? }.
 * The tool's manifest must declare "client": ["elicitation"].
 */
export function elicit(req) {
  if (req === null || typeof req !== "object") throw new TypeError(`elicit() needs a request object, not ${describe(req)}`);
  const { id, ...params } = req;
  params.mode ??= params.url !== undefined ? "url" : "form";
  return ask("elicitation/create", id, params);
}

/**
 * Asks the client's model for a completion: { id?, messages, maxTokens, systemPrompt? }.
 * Returns { role, content, model, stopReason? }. Needs "client": ["sampling"].
 */
export function createMessage(req) {
  if (req === null || typeof req !== "object") throw new TypeError(`createMessage() needs a request object, not ${describe(req)}`);
  const { id, ...params } = req;
  return ask("sampling/createMessage", id, params);
}

/** Asks the client for its roots; returns [{ uri, name? }]. Needs "client": ["roots"]. */
export function listRoots(id) {
  return ask("roots/list", id, {}).roots ?? [];
}

// One line on stderr: the host shows the model the tail of stderr.
function fail(message) {
  host.write(2, String(message).replace(/[\r\n]+/g, " ") + "\n");
  return 1;
}

function errorText(e) {
  // QuickJS's own words for running out of its stack limit.
  if (e instanceof Error && e.message === "stack overflow") return "stack overflow: the handler recursed too deeply (unbounded recursion?)";
  if (e instanceof Error) return e.message === "" ? e.name : e.message;
  return String(e);
}

async function run(name, input) {
  if (Object.hasOwn(registers, name)) return serveEntry(name, input);
  if (registry === null) return fail("this module registers no tools: its code must call tools({...}) from \"wasmcp\"");
  const names = Object.keys(registry);
  if (name === "" && names.length === 1) name = names[0];
  const t = registry[name];
  if (t === undefined) return fail(`unknown tool "${name}"; this module has ${names.join(", ")}`);

  let args;
  try {
    args = input.trim() === "" ? {} : JSON.parse(input);
  } catch (e) {
    return fail(`invalid arguments: not JSON: ${errorText(e)}`);
  }
  if (args === null) args = {};
  if (typeof args !== "object" || Array.isArray(args)) return fail(`invalid arguments: they must be a JSON object, not ${describe(args)}`);

  let out;
  try {
    out = await t.handler(args);
  } catch (e) {
    return fail(errorText(e));
  }
  if (t.mode === "text") {
    if (typeof out !== "string") return fail(`${name}'s handler returned ${describe(out)}; a text tool returns a string`);
    host.write(1, out);
    return 0;
  }
  if (out === null || typeof out !== "object" || Array.isArray(out)) {
    return fail(`${name}'s handler returned ${describe(out)}; a ${t.mode} tool returns an object`);
  }
  let s;
  try {
    s = JSON.stringify(out);
  } catch (e) {
    return fail(`${name}'s result cannot be written as JSON: ${errorText(e)}`);
  }
  host.write(1, s);
  return 0;
}

async function serveEntry(point, input) {
  const handler = entries[point];
  if (handler === undefined) {
    return fail(`this module serves no ${point}: its code must call ${registers[point]}(handler) from "wasmcp"`);
  }
  let req;
  try {
    req = JSON.parse(input);
  } catch (e) {
    return fail(`invalid ${point} request: not JSON: ${errorText(e)}`);
  }
  if (req === null || typeof req !== "object" || Array.isArray(req)) return fail(`invalid ${point} request: it must be a JSON object, not ${describe(req)}`);
  let answer;
  try {
    if (point === complete) {
      const out = await handler(req.ref ?? {}, req.argument?.name, req.argument?.value ?? "", req.context?.arguments ?? {});
      answer = JSON.stringify(completionOf(out));
    } else {
      const out = await handler(point === readResource ? req.uri : req.name, req.arguments ?? {});
      answer = JSON.stringify(point === readResource ? contentsOf(out) : messagesOf(out));
    }
  } catch (e) {
    return fail(errorText(e));
  }
  host.write(1, answer);
  return 0;
}

host.register(run);
