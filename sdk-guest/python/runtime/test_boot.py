"""Native tests of boot.py's bundle reading and importing, with a stand-in
for the runtime's builtin module _wasmcp. Run with the runtime's build
Python: sdk-guest/python_test.go does."""

import io
import marshal
import os
import sys
import types
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


class FakeHost(types.ModuleType):
    """_wasmcp with its stdin, argv and environment given by the test."""

    def __init__(self):
        super().__init__("_wasmcp")
        self.stdin, self.args, self.env = b"", ["stem"], []

    def read_stdin(self):
        data, self.stdin = self.stdin, b""
        return data

    def argv(self):
        return list(self.args)

    def environ(self):
        return list(self.env)

    def preopens(self):
        pass


host = sys.modules["_wasmcp"] = FakeHost()
import boot  # noqa: E402 (after its host)


def zipped(members, compression=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def pyc(source, magic=None):
    code = compile(source, "x.py", "exec")
    return (magic or boot._frozen_importlib_external.MAGIC_NUMBER) + bytes(12) + marshal.dumps(code)


class Importer(unittest.TestCase):
    def importer(self, members):
        data = zipped(members)
        return boot.BundleImporter(data, boot._members(data))

    def load(self, importer, name):
        spec = importer.find_spec(name)
        self.assertIsNotNone(spec, name)
        module = types.ModuleType(name)
        module.__spec__, module.__loader__ = spec, importer
        importer.exec_module(module)
        return module

    def test_modules_packages_and_bytecode(self):
        imp = self.importer({"a.py": "x = 1\n", "pkg/__init__.py": "", "pkg/b.pyc": pyc("y = 2\n")})
        self.assertEqual(self.load(imp, "a").x, 1)
        self.assertTrue(imp.is_package("pkg") if imp.find_spec("pkg") else False)
        self.assertEqual(imp.find_spec("pkg").submodule_search_locations, ["/bundle/pkg"])
        self.assertEqual(self.load(imp, "pkg.b").y, 2)
        self.assertIsNone(imp.find_spec("missing"))

    def test_source_for_tracebacks(self):
        imp = self.importer({"a.py": "def f():\n    return 1 / 0\n", "c.pyc": pyc("z = 3\n")})
        imp.find_spec("a"), imp.find_spec("c")
        self.assertEqual(imp.get_source("a"), "def f():\n    return 1 / 0\n")
        self.assertIsNone(imp.get_source("c"))
        self.assertEqual(imp.get_code("a").co_filename, "/bundle/a.py")

    def test_bytecode_of_another_version(self):
        imp = self.importer({"old.pyc": pyc("", magic=b"\x00\x00\r\n")})
        imp.find_spec("old")
        with self.assertRaisesRegex(ImportError, "compiled by another Python version"):
            imp.get_code("old")

    def test_damaged_bundles(self):
        with self.assertRaisesRegex(boot.BundleError, "compressed"):
            boot._members(zipped({"a.py": "x = 1\n" * 100}, zipfile.ZIP_DEFLATED))
        with self.assertRaisesRegex(boot.BundleError, "not a zip"):
            boot._members(b"PK and nothing else")
        good = zipped({"a.py": "x = 1\n"})
        with self.assertRaises(boot.BundleError):
            boot._members(good[:10] + good[-22:])  # a directory that points at nothing


class Init(unittest.TestCase):
    def setUp(self):
        self.meta_path, self.modules = list(sys.meta_path), dict(sys.modules)

    def tearDown(self):
        sys.meta_path[:] = self.meta_path
        for name in set(sys.modules) - set(self.modules):
            del sys.modules[name]

    def test_a_zip_names_its_entry(self):
        host.stdin = zipped({"wasmcp.entry": "greet\n", "greet.py": "import wasmcp\n", "wasmcp.py": "X = 1\n"})
        boot.init()
        self.assertEqual(boot._entry.__name__, "greet")
        self.assertEqual(boot._sdk.X, 1)

    def test_a_bundle_must_name_its_entry(self):
        host.stdin = zipped({"greet.py": ""})
        with self.assertRaisesRegex(boot.BundleError, "names no module"):
            boot.init()
        host.stdin = b"import wasmcp\n"
        with self.assertRaisesRegex(boot.BundleError, "not a zip archive"):
            boot.init()

    def test_each_call_gets_its_own_argv_and_environment(self):
        host.args, host.env = ["stem", "greet"], [b"A=1", b"B=x=y"]
        boot._renew()
        self.assertEqual(sys.argv, ["stem", "greet"])
        self.assertEqual((os.environ.get("A"), os.environ.get("B")), ("1", "x=y"))
        host.env = []
        boot._renew()
        self.assertNotIn("A", os.environ)


if __name__ == "__main__":
    unittest.main()
