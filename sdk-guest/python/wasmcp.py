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
exception fails it with its traceback. print() writes to stderr, which the
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
    "tool", "ToolError", "HostError", "log", "progress", "http", "Response",
    "result", "text", "image", "LEVELS", "MAX_MESSAGE",
    "OK", "FAULT", "INVALID", "ENCODING", "TOO_LONG", "LIMIT", "ORDER", "DENIED", "NETWORK",
]

# What the host functions return (docs/abi.md, "Result codes").
OK, FAULT, INVALID, ENCODING, TOO_LONG, LIMIT, ORDER, DENIED, NETWORK = range(9)

# Log levels, in increasing severity.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# The longest log or progress message the host accepts, in UTF-8 bytes.
MAX_MESSAGE = 8192

_tools = {}


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
    """Serves one call (the runtime calls this): argv is [stem, tool name],
    raw the arguments as JSON."""
    name = argv[1] if len(argv) > 1 else None
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
