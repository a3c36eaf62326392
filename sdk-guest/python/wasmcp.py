"""wasmcp: the Python guest SDK for wasmcp tools (ABI 1, see docs/abi.md).

A tool is an ordinary function. Mark it with @tool (or name it after the
tool in the manifest); it gets the call's arguments as keyword arguments
and returns the result:

    import wasmcp

    @wasmcp.tool
    def greet(name: str) -> str:
        wasmcp.log("greeting " + name)
        return "Hello, " + name + "!"

What it returns is written to stdout, which the host reads as the
manifest's output mode says: a str as it is (mode "text"), anything else
as JSON (a dict for mode "json"; wasmcp.result(...) for mode "result").
Raising ToolError("...") fails the call with that message; any other
exception fails it with its traceback. A function marked @resources or
@prompts serves the module's resource reads or prompts the same way. print() writes to stderr, which the
host shows when the call fails: stdout is the result's alone.

The runtime (sdk-guest/python/runtime) imports the tool once, before any
call, and may start every call from a snapshot of that moment: see
docs/languages.md for what a tool may keep from import time. Natively (in
unit tests) the host functions write what they would send to stderr.
"""

import json
import sys

try:
    import _wasmcp
except ImportError:  # not in the wasmcp runtime
    _wasmcp = None

__all__ = [
    "tool", "resources", "prompts", "completions", "READ_RESOURCE", "GET_PROMPT", "COMPLETE",
    "ToolError", "HostError", "log", "progress", "http", "Response", "result",
    "text", "image", "LEVELS", "MAX_MESSAGE",
    "OK", "FAULT", "INVALID", "ENCODING", "TOO_LONG", "LIMIT", "ORDER", "DENIED", "NETWORK",
]

# What the host functions return (docs/abi.md, "Result codes").
OK, FAULT, INVALID, ENCODING, TOO_LONG, LIMIT, ORDER, DENIED, NETWORK = range(9)

# Log levels, in increasing severity.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# The longest log or progress message the host accepts, in UTF-8 bytes.
MAX_MESSAGE = 8192

# The entry points a module may serve besides its tools: the host starts
# the module with one of them as argv[1] (docs/abi.md, "Reading a resource",
# "Getting a prompt" and "Completions"). No tool may have these names.
READ_RESOURCE = "resources/read"
GET_PROMPT = "prompts/get"
COMPLETE = "completion/complete"

_tools = {}
_entries = {}  # entry point -> (handler, the function that checks and encodes its answer)


def tool(fn=None, *, name=None):
    """Registers fn as the tool called name (by default, fn's own name).

    Use as @tool or @tool(name="some.tool"). The function is returned
    unchanged, so it can be tested like any other."""

    def register(f):
        n = name or f.__name__
        if n in _tools:
            raise ValueError("two functions are registered as tool %r" % n)
        _tools[n] = f
        return f

    return register(fn) if fn is not None else register


def _entry(point, check):
    def register(fn):
        if point in _entries:
            raise ValueError("two functions are registered for %s" % point)
        _entries[point] = (fn, check)
        return fn
    return register


def resources(fn):
    """Registers fn(uri, arguments) as the module's resources/read: it
    answers the reads of every resource the manifest declares without
    contents and of every URI its templates match. arguments holds the
    template's variables (a str each, a list for an exploded variable
    with several values), and is empty for a declared resource.

    fn returns the contents: a str (text), bytes (a blob), or a list of
    dicts, each with "text" (a str) or "blob" (bytes), and optionally
    "uri" (the URI read) and "mimeType" (by default the manifest's).
    Raising ToolError fails the read with that message."""
    return _entry(READ_RESOURCE, _contents)(fn)


def prompts(fn):
    """Registers fn(name, arguments) as the module's prompts/get: it gets
    every prompt the manifest declares without messages, dispatching on
    name. The host has checked arguments (a dict of str) against those
    the manifest declares.

    fn returns the messages: a list of dicts {"role": "user" or
    "assistant", "content": a content block, or a str for a text block},
    or a dict {"description": ..., "messages": [...]}. Raising ToolError
    fails the request with that message."""
    return _entry(GET_PROMPT, _messages)(fn)


def completions(fn):
    """Registers fn(ref, name, value, context) as the module's
    completion/complete: it offers values for the arguments of every
    prompt, and the variables of every template, whose manifest entry
    says "complete": "module" and that declare no values of their own.
    ref is {"type": "ref/prompt", "name": ...} or {"type": "ref/resource",
    "uri": <the uriTemplate>}; name the argument or variable; value what
    the client has typed; context the other arguments it sent (a dict of
    str, maybe empty).

    fn returns the values, a list of str (at most 100), or a dict
    {"values": [...], "total": N, "hasMore": bool}. Raising ToolError
    fails the request with that message."""
    return _entry(COMPLETE, _completion)(fn)


def _completion(value):
    """The completion/complete answer for what fn returned, or ToolError."""
    answer = {}
    if isinstance(value, dict):
        extra = sorted(set(value) - {"values", "total", "hasMore"})
        if extra:
            raise ToolError("the completion has %s; it holds only values, total and hasMore"
                            % ", ".join(map(repr, extra)))
        if "total" in value:
            answer["total"] = value["total"]
        if "hasMore" in value:
            answer["hasMore"] = bool(value["hasMore"])
        value = value.get("values")
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ToolError("the completion's values must be a list of str")
    answer["values"] = list(value)
    return answer


def _contents(value):
    """The resources/read answer for what fn returned, or ToolError."""
    if isinstance(value, str):
        value = [{"text": value}]
    elif isinstance(value, (bytes, bytearray)):
        value = [{"blob": value}]
    if not isinstance(value, (list, tuple)) or not value:
        raise ToolError("the read returned no contents: return a str, bytes or a list of contents")
    contents = []
    for i, c in enumerate(value):
        if not isinstance(c, dict):
            raise ToolError("the read's contents[%d] is a %s, not a dict" % (i, type(c).__name__))
        extra = sorted(set(c) - {"uri", "mimeType", "text", "blob"})
        if extra:
            raise ToolError("the read's contents[%d] has %s; contents hold only uri, mimeType, and text or blob"
                            % (i, ", ".join(map(repr, extra))))
        if ("text" in c) == ("blob" in c):
            raise ToolError("the read's contents[%d] must have exactly one of text and blob" % i)
        c = dict(c)
        if "blob" in c:
            if not isinstance(c["blob"], (bytes, bytearray)):
                raise ToolError("the read's contents[%d].blob is a %s, not bytes" % (i, type(c["blob"]).__name__))
            import base64
            c["blob"] = base64.b64encode(c["blob"]).decode("ascii")
        elif not isinstance(c["text"], str):
            raise ToolError("the read's contents[%d].text is a %s, not a str" % (i, type(c["text"]).__name__))
        contents.append(c)
    return {"contents": contents}


def _messages(value):
    """The prompts/get answer for what fn returned, or ToolError."""
    answer = {}
    if isinstance(value, dict):
        extra = sorted(set(value) - {"description", "messages"})
        if extra:
            raise ToolError("the prompt's answer has %s; it holds only description and messages"
                            % ", ".join(map(repr, extra)))
        if "description" in value:
            answer["description"] = str(value["description"])
        value = value.get("messages")
    if not isinstance(value, (list, tuple)) or not value:
        raise ToolError("the prompt has no messages")
    messages = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or set(m) != {"role", "content"}:
            raise ToolError("the prompt's messages[%d] is not a dict of role and content" % i)
        if m["role"] not in ("user", "assistant"):
            raise ToolError("the prompt's messages[%d].role is \"%s\", not user or assistant" % (i, m["role"]))
        content = text(m["content"]) if isinstance(m["content"], str) else m["content"]
        if not isinstance(content, dict) or "type" not in content:
            raise ToolError("the prompt's messages[%d].content is not a content block" % i)
        messages.append({"role": m["role"], "content": content})
    answer["messages"] = messages
    return answer


class ToolError(Exception):
    """Fails the call with this message, as a tool error a model can act on.

    Say what went wrong and what to do about it: "division by zero",
    "no invoice 42: ids run from 1 to 40"."""


class HostError(Exception):
    """A host function refused: code is one of the result codes (DENIED,
    NETWORK, LIMIT, ...) and the message says why."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _cut(message):
    """message as UTF-8, cut at a character boundary to MAX_MESSAGE bytes."""
    data = message.encode("utf-8", "replace")
    if len(data) <= MAX_MESSAGE:
        return data.decode("utf-8")
    return data[:MAX_MESSAGE].decode("utf-8", "ignore")


def log(message, level="info"):
    """Sends a log message to the client (notifications/message, with the
    tool's name as logger). level is one of LEVELS. Returns OK or the
    host's code; a message is never worth failing the call over."""
    if level not in LEVELS:
        raise ValueError("log level %r is not one of %s" % (level, ", ".join(LEVELS)))
    message = _cut(str(message))
    if _wasmcp is None:
        print("[%s] %s" % (level, message), file=sys.stderr)
        return OK
    return _wasmcp.log(LEVELS.index(level), message)


def progress(done, total=None, message=""):
    """Reports progress, when the client asked for it: done must grow from
    one report to the next; total is the expected final value, or None
    when unknown. Returns OK or the host's code (ORDER if done did not
    grow)."""
    message = _cut(str(message))
    if _wasmcp is None:
        print("[progress %g/%s] %s" % (done, "?" if total is None else "%g" % total, message), file=sys.stderr)
        return OK
    return _wasmcp.progress(float(done), -1.0 if total is None else float(total), message)


class Response:
    """An HTTP response: status, headers (a dict, as the host sent them)
    and body (bytes)."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name):
        """The value of the header called name, in any case, or None."""
        name = name.lower()
        for k, v in self.headers.items():
            if k.lower() == name:
                return v
        return None

    @property
    def text(self):
        """The body decoded as UTF-8 (invalid bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    def json(self):
        """The body parsed as JSON."""
        return json.loads(self.body)


def http(url, method="GET", headers=None, body=None, secret=None):
    """Has the host make an HTTP request, if the operator's policy allows
    it (docs/abi.md, "Permissions"), and returns its Response, whatever
    its status. body is str or bytes; secret names a secret the operator
    bound to the URL's host, which the host adds to the request (the tool
    never sees its value). Raises HostError when the host made no request
    or got no answer: DENIED names what the policy lacks, NETWORK what
    failed, LIMIT that the call used up its requests."""
    req = {"method": method, "url": url}
    if headers:
        req["headers"] = dict(headers)
    if body is not None:
        if isinstance(body, str):
            req["body"] = body
        else:
            body = bytes(body)
            try:
                req["body"] = body.decode("utf-8")
            except UnicodeDecodeError:
                import base64
                req["body_base64"] = base64.b64encode(body).decode("ascii")
    if secret is not None:
        req["secret"] = secret
    if _wasmcp is None:
        raise HostError(DENIED, "no host: HTTP works only inside wasmcp")
    code, answer = _wasmcp.http(json.dumps(req).encode("utf-8"))
    if answer is None:
        raise HostError(code, "the host could not read the request (code %d)" % code)
    answer = json.loads(answer)
    if code != OK:
        raise HostError(code, answer.get("error", "the request failed (code %d)" % code))
    if "body_base64" in answer:
        import base64
        data = base64.b64decode(answer["body_base64"])
    else:
        data = answer.get("body", "").encode("utf-8")
    return Response(answer.get("status", 0), answer.get("headers", {}), data)


class AskError(Exception):
    """An ask of the client that brought no answer: code is DENIED when the
    tool's manifest or the client did not declare the capability, and the
    message says why."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _ask(method, id, params):
    """Sends one ask by the host's ask_all and returns the client's answer.
    On 2026-07-28 an ask without an answer yet ends the call here; the
    client answers and the call runs again, and this ask then returns."""
    one = {"method": method, "params": params}
    if id is not None:
        one["id"] = str(id)
    if _wasmcp is None:
        raise AskError(DENIED, "no host: asking the client works only inside wasmcp")
    code, answer = _wasmcp.ask(json.dumps([one]).encode("utf-8"))
    try:
        answers = json.loads(answer) if answer is not None else None
    except ValueError:
        answers = None
    # The answer is each ask's by its id (ask-1 when the tool names none),
    # or, for a request the host could not take, {"error": ...}.
    mine = None
    if isinstance(answers, dict):
        if one.get("id") in answers:
            mine = answers[one["id"]]
        elif isinstance(answers.get("error"), str):
            mine = answers
        elif answers:
            mine = next(iter(answers.values()))
    if code != OK:
        message = mine.get("error") if isinstance(mine, dict) else None
        raise AskError(code, message or "the host did not ask the client (code %d)" % code)
    if not isinstance(mine, dict):
        raise AskError(-1, "the client's answer was unreadable")
    return mine


def elicit(message, requested_schema=None, url=None, elicitation_id=None, id=None):
    """Asks the user, by elicitation, to fill in a form whose JSON Schema is
    requested_schema (or, with url and elicitation_id, sends them to a
    URL). Returns {"action": "accept" | "decline" | "cancel", "content": ...}.
    The tool's manifest must declare "client": ["elicitation"]."""
    params = {"message": message}
    if url is not None:
        params.update(mode="url", url=url, elicitationId=elicitation_id)
    else:
        params["mode"] = "form"
        if requested_schema is not None:
            params["requestedSchema"] = requested_schema
    return _ask("elicitation/create", id, params)


def create_message(messages, max_tokens, system_prompt=None, id=None):
    """Asks the client's model for a completion of messages (a list of
    {"role", "content"}). Returns {"role", "content", "model",
    "stopReason"?}. The manifest must declare "client": ["sampling"]."""
    params = {"messages": messages, "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    return _ask("sampling/createMessage", id, params)


def list_roots(id=None):
    """Asks the client for its roots: a list of {"uri", "name"?}. The
    manifest must declare "client": ["roots"]."""
    return _ask("roots/list", id, {}).get("roots", [])


def text(s):
    """A text content block, for result()."""
    return {"type": "text", "text": str(s)}


def image(data, mime_type):
    """An image content block (data is the image's bytes), for result()."""
    import base64
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def result(*content, structured=None, is_error=False):
    """An MCP CallToolResult, for tools whose output mode is "result":
    content blocks (str becomes a text block), optional structuredContent,
    and isError."""
    r = {"content": [text(c) if isinstance(c, str) else c for c in content]}
    if structured is not None:
        r["structuredContent"] = structured
    if is_error:
        r["isError"] = True
    return r


def _encode(value):
    """The bytes the host reads as the result."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise ToolError("the tool returned a value that is not JSON: %s" % e) from None


def _fail(message):
    """Ends the call as a tool error: one line on stderr, exit status 1."""
    line = " ".join(str(message).split()) or "the tool failed"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()
    _exit(1)


def _exit(status):
    if _wasmcp is None:
        raise SystemExit(status)
    _wasmcp.exit(status)


def _find(entry, name):
    if name in _tools:
        return _tools[name]
    fn = getattr(entry, name, None) if name and name.isidentifier() else None
    return fn if callable(fn) else None


def _serve(entry, argv, raw):
    """Serves one call (the runtime calls this): argv is [stem, tool name]
    or [stem, entry point], raw the arguments or the request as JSON."""
    name = argv[1] if len(argv) > 1 else None
    if name in (READ_RESOURCE, GET_PROMPT, COMPLETE):
        if name not in _entries:
            how = {READ_RESOURCE: "@wasmcp.resources", GET_PROMPT: "@wasmcp.prompts", COMPLETE: "@wasmcp.completions"}[name]
            _fail("this module serves no %s: register a function with %s" % (name, how))
        handler, check = _entries[name]

        def fn(**req):
            if name == COMPLETE:
                argument = req.get("argument") or {}
                context = (req.get("context") or {}).get("arguments") or {}
                return check(handler(req.get("ref") or {}, argument.get("name"), argument.get("value", ""), context))
            key = "uri" if name == READ_RESOURCE else "name"
            return check(handler(req.get(key), req.get("arguments") or {}))
    else:
        if name is None and len(_tools) == 1:
            name = next(iter(_tools))
        fn = _find(entry, name)
        if fn is None:
            known = ", ".join(sorted(_tools)) or "none registered with @wasmcp.tool"
            _fail("this module has no tool %r (its tools: %s)" % (name, known))
    try:
        args = json.loads(raw) if raw.strip() else {}
    except ValueError as e:
        _fail("invalid arguments: not JSON: %s" % e)
    if args is None:
        args = {}
    if not isinstance(args, dict):
        _fail("invalid arguments: expected a JSON object, not %s" % type(args).__name__)
    stdout = sys.stdout
    sys.stdout = sys.stderr  # print() is diagnostics; stdout is the result's
    try:
        out = _encode(fn(**args))
    except ToolError as e:
        _fail(e)
    except SystemExit as e:
        code = e.code
        if code is None or isinstance(code, int):
            _exit(code or 0)
        _fail(code)
    except BaseException:
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        _exit(1)
    finally:
        sys.stdout = stdout
    if _wasmcp is None:
        sys.stdout.buffer.write(out)
    else:
        _wasmcp.write(1, out)
