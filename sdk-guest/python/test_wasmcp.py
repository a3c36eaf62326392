"""Native tests of the SDK (wasmcp.py) and the bundler (wasmcp_bundle.py).

Run with the runtime's build Python: sdk-guest/python_test.go does. Calls
are served as the runtime serves them, through wasmcp._serve, in a child
process, since a call ends the process."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import wasmcp  # noqa: E402 (after the path that finds it)


def serve(source, tool, args):
    """Runs source as the tool's module and serves one call of tool with
    args (a str of JSON); returns (exit status, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "tool.py"), "w") as f:
            f.write(textwrap.dedent(source))
        driver = ("import sys; sys.path[:0] = sys.argv[1:3]; import tool, wasmcp; "
                  "wasmcp._serve(tool, ['stem'] + sys.argv[3:4], sys.stdin.buffer.read())")
        p = subprocess.run([sys.executable, "-I", "-c", driver, d, HERE] + ([tool] if tool else []),
                           input=args.encode(), capture_output=True)
        return p.returncode, p.stdout.decode(), p.stderr.decode()


class Serve(unittest.TestCase):
    def test_str_is_written_as_it_is(self):
        self.assertEqual(serve("""
            import wasmcp
            @wasmcp.tool
            def greet(name):
                return "Hello, " + name + "!"
        """, "greet", '{"name":"Ada"}'), (0, "Hello, Ada!", ""))

    def test_other_values_are_json(self):
        code, out, _ = serve("""
            import wasmcp
            @wasmcp.tool(name="a.b")
            def f(n):
                return {"n": n, "é": [1.5, None, True]}
        """, "a.b", '{"n":2}')
        self.assertEqual((code, out), (0, '{"n":2,"é":[1.5,null,true]}'))

    def test_a_plain_function_named_after_the_tool(self):
        self.assertEqual(serve("def double(x):\n    return str(2 * x)\n", "double", '{"x":21}')[:2], (0, "42"))

    def test_result_builds_a_call_tool_result(self):
        code, out, _ = serve("""
            import wasmcp
            @wasmcp.tool
            def r():
                return wasmcp.result("hi", wasmcp.image(b"\\x89PNG", "image/png"), structured={"k": 1}, is_error=True)
        """, "r", "{}")
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(out), {
            "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}],
            "structuredContent": {"k": 1}, "isError": True})

    def test_tool_error_is_one_line_and_status_1(self):
        self.assertEqual(serve("""
            import wasmcp
            @wasmcp.tool
            def f():
                raise wasmcp.ToolError("no invoice 42:\\n ids run from 1 to 40")
        """, "f", "{}"), (1, "", "no invoice 42: ids run from 1 to 40\n"))

    def test_an_exception_fails_with_its_traceback(self):
        code, out, err = serve("""
            import wasmcp
            @wasmcp.tool
            def f():
                return {}["missing"]
        """, "f", "{}")
        self.assertEqual((code, out), (1, ""))
        self.assertIn('return {}["missing"]', err)
        self.assertTrue(err.rstrip().endswith("KeyError: 'missing'"), err)

    def test_sys_exit_sets_the_status(self):
        self.assertEqual(serve("import sys\ndef f():\n    sys.exit(3)\n", "f", "{}")[0], 3)

    def test_print_goes_to_stderr(self):
        self.assertEqual(serve("def f():\n    print('working')\n    return 'done'\n", "f", "{}"),
                         (0, "done", "working\n"))

    def test_unknown_tool_and_bad_arguments(self):
        src = "import wasmcp\n@wasmcp.tool\ndef f(**kw):\n    return 'ok'\n"
        self.assertEqual(serve(src, "g", "{}"), (1, "", "this module has no tool 'g' (its tools: f)\n"))
        self.assertEqual(serve(src, "f", "[1]"), (1, "", "invalid arguments: expected a JSON object, not list\n"))
        self.assertEqual(serve(src, "f", ""), (0, "ok", ""))
        self.assertEqual(serve(src, None, ""), (0, "ok", ""))  # the only tool

    def test_a_value_that_is_not_json(self):
        code, _, err = serve("def f():\n    return float('nan')\n", "f", "{}")
        self.assertEqual(code, 1)
        self.assertIn("the tool returned a value that is not JSON", err)


ENTRIES = """
    import wasmcp

    @wasmcp.resources
    def read(uri, arguments):
        if uri == "a://bytes":
            return b"\\x00\\x01\\x02"
        if uri == "a://list":
            return [{"uri": uri, "mimeType": "image/png", "blob": b"\\x00\\x01\\x02"}, {"text": ""}]
        if uri == "a://none":
            return []
        if uri == "a://both":
            return [{"text": "a", "blob": b"b"}]
        if uri == "a://extra":
            return [{"text": "a", "size": 1}]
        if uri == "a://missing":
            raise wasmcp.ToolError("there is no item " + arguments["id"])
        return "item " + arguments["id"]

    @wasmcp.prompts
    def get(name, arguments):
        if name == "greet":
            return {"description": "d", "messages": [{"role": "user", "content": "hello " + arguments["who"]}]}
        if name == "plain":
            return [{"role": "assistant", "content": wasmcp.image(b"\\x89PNG", "image/png")}]
        if name == "empty":
            return []
        if name == "role":
            return [{"role": "system", "content": "x"}]
        raise wasmcp.ToolError("no such prompt")

    @wasmcp.completions
    def complete(ref, name, value, context):
        if ref.get("name") == "counted":
            return {"values": [value + "1"], "total": 7, "hasMore": True}
        if ref.get("name") == "bad":
            return [1]
        return [ref["type"] + " " + name + " " + value + " " + context.get("other", "-")]
"""


class FakeHost:
    """Stands in for the runtime's _wasmcp in ask tests: answers each
    ask_all with code and answers, and keeps what it was sent."""

    def __init__(self, code, answers):
        self.code, self.answers, self.sent = code, answers, []

    def ask(self, request):
        self.sent.append(json.loads(request))
        return self.code, None if self.answers is None else json.dumps(self.answers).encode()


class Asks(unittest.TestCase):
    def ask_with(self, host, fn):
        saved, wasmcp._wasmcp = wasmcp._wasmcp, host
        try:
            return fn()
        finally:
            wasmcp._wasmcp = saved

    def test_elicit_sends_a_form_and_returns_its_answer(self):
        host = FakeHost(wasmcp.OK, {"confirm": {"action": "accept", "content": {"ok": True}}})
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        got = self.ask_with(host, lambda: wasmcp.elicit("Sure?", schema, id="confirm"))
        self.assertEqual(got, {"action": "accept", "content": {"ok": True}})
        self.assertEqual(host.sent, [[{"method": "elicitation/create", "id": "confirm",
                                       "params": {"message": "Sure?", "mode": "form", "requestedSchema": schema}}]])

    def test_an_unnamed_ask_takes_the_one_answer(self):
        host = FakeHost(wasmcp.OK, {"ask-1": {"roots": [{"uri": "file:///w"}]}})
        self.assertEqual(self.ask_with(host, wasmcp.list_roots), [{"uri": "file:///w"}])
        self.assertEqual(host.sent[0][0]["method"], "roots/list")

    def test_a_refusal_is_an_ask_error_with_the_hosts_reason(self):
        host = FakeHost(wasmcp.DENIED, {"error": "the tool's manifest does not declare elicitation"})
        with self.assertRaises(wasmcp.AskError) as e:
            self.ask_with(host, lambda: wasmcp.elicit("May I?", {"type": "object"}))
        self.assertEqual(e.exception.code, wasmcp.DENIED)
        self.assertIn("does not declare elicitation", str(e.exception))

    def test_an_unreadable_answer_is_an_ask_error(self):
        with self.assertRaises(wasmcp.AskError):
            self.ask_with(FakeHost(wasmcp.OK, None), lambda: wasmcp.create_message([], 10))

    def test_url_mode(self):
        host = FakeHost(wasmcp.OK, {"ask-1": {"action": "accept"}})
        self.ask_with(host, lambda: wasmcp.elicit("Sign in", url="https://example.test/login", elicitation_id="e1"))
        self.assertEqual(host.sent[0][0]["params"], {"message": "Sign in", "mode": "url", "url": "https://example.test/login", "elicitationId": "e1"})


class Entries(unittest.TestCase):
    def test_resources(self):
        for req, want in [
            ('{"uri":"a://items/7","arguments":{"id":"7"}}', '{"contents":[{"text":"item 7"}]}'),
            ('{"uri":"a://bytes","arguments":{}}', '{"contents":[{"blob":"AAEC"}]}'),
            ('{"uri":"a://list","arguments":{}}',
             '{"contents":[{"uri":"a://list","mimeType":"image/png","blob":"AAEC"},{"text":""}]}'),
        ]:
            self.assertEqual(serve(ENTRIES, "resources/read", req), (0, want, ""), req)

    def test_a_bad_read_fails(self):
        for uri, want in [
            ("a://none", "the read returned no contents: return a str, bytes or a list of contents\n"),
            ("a://both", "the read's contents[0] must have exactly one of text and blob\n"),
            ("a://extra", "the read's contents[0] has 'size'; contents hold only uri, mimeType, and text or blob\n"),
            ("a://missing", "there is no item 9\n"),
        ]:
            self.assertEqual(serve(ENTRIES, "resources/read", '{"uri":"%s","arguments":{"id":"9"}}' % uri),
                             (1, "", want), uri)

    def test_prompts(self):
        self.assertEqual(serve(ENTRIES, "prompts/get", '{"name":"greet","arguments":{"who":"Ada"}}'), (0, (
            '{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hello Ada"}}]}'), ""))
        self.assertEqual(serve(ENTRIES, "prompts/get", '{"name":"plain"}'), (0, (
            '{"messages":[{"role":"assistant","content":{"type":"image","data":"iVBORw==","mimeType":"image/png"}}]}'),
            ""))

    def test_a_bad_prompt_fails(self):
        for name, want in [
            ("empty", "the prompt has no messages\n"),
            ("role", "the prompt's messages[0].role is \"system\", not user or assistant\n"),
            ("other", "no such prompt\n"),
        ]:
            self.assertEqual(serve(ENTRIES, "prompts/get", '{"name":"%s"}' % name), (1, "", want), name)

    def test_one_function_per_entry_point(self):
        code, _, err = serve("""
            import wasmcp
            @wasmcp.prompts
            def a(name, arguments):
                return []
            @wasmcp.prompts
            def b(name, arguments):
                return []
        """, "prompts/get", '{"name":"p"}')
        self.assertEqual(code, 1)
        self.assertIn("ValueError: two functions are registered for prompts/get", err)

    def test_completions(self):
        self.assertEqual(serve(ENTRIES, "completion/complete",
                               '{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"city","value":"pa"},"context":{"arguments":{"other":"x"}}}'),
                         (0, '{"values":["ref/prompt city pa x"]}', ""))
        self.assertEqual(serve(ENTRIES, "completion/complete", '{"ref":{"type":"ref/prompt","name":"counted"},"argument":{"name":"a","value":"v"}}'),
                         (0, '{"total":7,"hasMore":true,"values":["v1"]}', ""))
        code, _, err = serve(ENTRIES, "completion/complete", '{"ref":{"type":"ref/prompt","name":"bad"},"argument":{"name":"a","value":""}}')
        self.assertEqual((code, err), (1, "the completion's values must be a list of str\n"))

    def test_an_entry_point_the_module_lacks(self):
        src = "def f():\n    return 'ok'\n"
        self.assertEqual(serve(src, "resources/read", '{"uri":"a://x"}'),
                         (1, "", "this module serves no resources/read: register a function with @wasmcp.resources\n"))
        self.assertEqual(serve(src, "prompts/get", '{"name":"p"}'),
                         (1, "", "this module serves no prompts/get: register a function with @wasmcp.prompts\n"))
        self.assertEqual(serve(src, "completion/complete", '{"ref":{},"argument":{}}'),
                         (1, "", "this module serves no completion/complete: register a function with @wasmcp.completions\n"))


class Messages(unittest.TestCase):
    def test_messages_are_cut_at_a_character_boundary(self):
        cut = wasmcp._cut("é" * 5000)
        self.assertEqual(len(cut.encode()), wasmcp.MAX_MESSAGE)
        self.assertEqual(wasmcp._cut("a" * 8191 + "é"), "a" * 8191)

    def test_log_refuses_an_unknown_level(self):
        with self.assertRaises(ValueError):
            wasmcp.log("x", level="loud")


class Bundle(unittest.TestCase):
    def bundle(self, files):
        d = tempfile.mkdtemp()
        for name, source in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
            with open(os.path.join(d, name), "w") as f:
                f.write(textwrap.dedent(source))
        out = os.path.join(d, "init.zip")
        stdlib = os.path.dirname(os.__file__)
        p = subprocess.run([sys.executable, "-I", os.path.join(HERE, "wasmcp_bundle.py"), "--stdlib", stdlib,
                            "--path", d, "--path", HERE, "-o", out, "main"], capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr
        with zipfile.ZipFile(out) as z:
            return {i.filename: i for i in z.infolist()}, p.stderr

    def test_what_the_tool_imports_even_inside_functions(self):
        members, err = self.bundle({
            "main.py": "import helpers.text\ndef f():\n    import fractions\n    return helpers.text.x\n",
            "helpers/__init__.py": "",
            "helpers/text.py": "import textwrap\nx = 1\n",
        })
        self.assertIsNotNone(members, err)
        for name in ("main.py", "helpers/__init__.py", "helpers/text.py", "wasmcp.py",
                     "textwrap.pyc", "fractions.pyc", "json/__init__.pyc", "traceback.pyc"):
            self.assertIn(name, members)
        self.assertEqual(members["wasmcp.entry"].file_size, len("main"))
        self.assertTrue(all(i.compress_type == zipfile.ZIP_STORED for i in members.values()))
        # CPython's own frozen modules are the runtime's, and nothing the
        # tool does not import is in.
        self.assertNotIn("os.pyc", members)
        self.assertNotIn("unittest/__init__.pyc", members)

    def test_what_cpythons_c_code_imports_when_called(self):
        members, err = self.bundle({"main.py": "import datetime\n"})
        self.assertIsNotNone(members, err)
        for name in ("_strptime.pyc", "encodings/utf_16.pyc", "encodings/idna.pyc"):
            self.assertIn(name, members)

    def test_a_module_not_found_fails_the_build(self):
        members, err = self.bundle({"main.py": "def f():\n    import requests\n"})
        self.assertIsNone(members)
        self.assertIn("modules not found: requests (imported by main)", err)

    def test_an_import_error_at_import_fails_the_build(self):
        members, err = self.bundle({"main.py": "import no_such_thing\n"})
        self.assertIsNone(members)
        self.assertIn("No module named 'no_such_thing'", err)


if __name__ == "__main__":
    unittest.main()
