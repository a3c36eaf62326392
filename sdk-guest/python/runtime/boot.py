"""_wasmcp_boot: the Python half of the wasmcp runtime, frozen into it.

init() runs once, in wasmcp_init: it reads the tool's bundle from stdin,
imports the tool from it and leaves the interpreter ready; the host may
snapshot the instance at that point. run() runs once per call, possibly in
a fresh instance made from that snapshot, so it first renews what start-up
froze, then hands the call to the SDK (the module wasmcp in the bundle).

Only builtin and frozen modules may be imported here: nothing else can be
found before the bundle's importer is installed.
"""

import gc
import marshal
import os
import sys

import _frozen_importlib
import _frozen_importlib_external
import _wasmcp

ENTRY = "wasmcp.entry"  # the bundle member naming the tool's module
ORIGIN = "/bundle/"  # the prefix of the bundle's modules' __file__

_sdk = None  # the SDK module, which serves each call
_entry = None  # the tool's module


class BundleError(Exception):
    """The bundle cannot be read: it was not made by the SDK's bundler."""


def _u16(data, at):
    return int.from_bytes(data[at:at + 2], "little")


def _u32(data, at):
    return int.from_bytes(data[at:at + 4], "little")


def _members(data):
    """Maps each member of a zip archive of stored (uncompressed) members to
    its (start, size) in data."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 65557))
    if end < 0 or end + 22 > len(data):
        raise BundleError("the wasmcp.init section is not a zip archive: make it with wasmcp_bundle.py")
    count, pos = _u16(data, end + 10), _u32(data, end + 16)
    members = {}
    for _ in range(count):
        if data[pos:pos + 4] != b"PK\x01\x02":
            raise BundleError("the bundle's zip directory is damaged")
        method, size, nlen = _u16(data, pos + 10), _u32(data, pos + 20), _u16(data, pos + 28)
        local = _u32(data, pos + 42)
        name = bytes(data[pos + 46:pos + 46 + nlen]).decode("utf-8")
        pos += 46 + nlen + _u16(data, pos + 30) + _u16(data, pos + 32)
        if method != 0:
            raise BundleError("bundle member %s is compressed; the runtime has no zlib, so members "
                              "must be stored: make the bundle with wasmcp_bundle.py" % name)
        if data[local:local + 4] != b"PK\x03\x04":
            raise BundleError("the bundle's member %s is damaged" % name)
        start = local + 30 + _u16(data, local + 26) + _u16(data, local + 28)
        if start + size > len(data):
            raise BundleError("the bundle's member %s is cut short" % name)
        members[name] = (start, size)
    return members


class BundleImporter:
    """Imports modules from the bundle: NAME.py (source, compiled at import)
    or NAME.pyc (compiled by the bundler), and packages as NAME/__init__."""

    def __init__(self, data, members):
        self._data = memoryview(data)
        self._members = members
        self._found = {}  # module name -> member

    def _read(self, member):
        start, size = self._members[member]
        return bytes(self._data[start:start + size])

    def find_spec(self, fullname, path=None, target=None):
        rel = fullname.replace(".", "/")
        for base, is_pkg in ((rel + "/__init__", True), (rel, False)):
            for ext in (".pyc", ".py"):
                member = base + ext
                if member in self._members:
                    self._found[fullname] = member
                    spec = _frozen_importlib.ModuleSpec(
                        fullname, self, origin=ORIGIN + base + ".py", is_package=is_pkg)
                    spec.has_location = True
                    if is_pkg:
                        spec.submodule_search_locations = [ORIGIN + rel]
                    return spec
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.get_code(module.__name__), module.__dict__)

    def get_code(self, fullname):
        member = self._found[fullname]
        data = self._read(member)
        if member.endswith(".pyc"):
            if data[:4] != _frozen_importlib_external.MAGIC_NUMBER:
                raise ImportError("bundle member %s was compiled by another Python version; "
                                  "rebuild the tool with this runtime's bundler" % member, name=fullname)
            return marshal.loads(memoryview(data)[16:])
        return compile(data, ORIGIN + member, "exec", dont_inherit=True)

    def get_source(self, fullname):
        member = self._found.get(fullname, "")
        source = member[:-1] if member.endswith(".pyc") else member
        if source in self._members:
            return _frozen_importlib_external.decode_source(self._read(source))
        return None

    def is_package(self, fullname):
        return self._found[fullname].rsplit("/", 1)[-1].startswith("__init__.")


def init():
    """Imports the tool from the bundle on stdin (the wasmcp.init section)."""
    global _sdk, _entry
    data = _wasmcp.read_stdin()
    members = _members(data)
    if ENTRY not in members:
        raise BundleError("the bundle names no module to import (%s): make it with wasmcp_bundle.py" % ENTRY)
    start, size = members[ENTRY]
    entry = bytes(data[start:start + size]).decode("utf-8").strip()
    importer = BundleImporter(data, members)
    path_finder = [i for i, f in enumerate(sys.meta_path) if f is _frozen_importlib_external.PathFinder]
    sys.meta_path.insert(path_finder[0] if path_finder else len(sys.meta_path), importer)
    sys.argv = _wasmcp.argv()
    __import__(entry)
    _entry = sys.modules[entry]
    __import__("wasmcp")
    _sdk = sys.modules["wasmcp"]
    # What start-up made is never garbage again; keeping the collector off
    # it saves work in every call and leaves the snapshot's pages unwritten.
    gc.collect()
    gc.freeze()


def _renew():
    """Renews in this call what start-up fixed: the snapshot's random seeds,
    arguments, environment and directories would otherwise be every call's."""
    random = sys.modules.get("random")
    if random is not None:
        random.seed()  # the module's generator, from WASI random_get
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile._name_sequence = None  # its generator is made again on use
    sys.argv = _wasmcp.argv()
    environ = os.environ
    environ._data.clear()
    for entry in _wasmcp.environ():
        name, _, value = entry.partition(b"=")
        environ._data[name] = value
    _wasmcp.preopens()


def run():
    """Serves one call."""
    _renew()
    _sdk._serve(_entry, sys.argv, _wasmcp.read_stdin())
