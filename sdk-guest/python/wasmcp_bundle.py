"""Makes a Python tool's bundle: the zip the runtime imports the tool from.

    python wasmcp_bundle.py --stdlib LIB [--path DIR]... -o OUT.zip MODULE

Run it with the runtime's own build Python (scripts/python-runtime prints
where it is): the bytecode it writes is for that exact version.

The bundle holds the tool's module MODULE, found in the --path directories
(default: the current one), and every module it needs: what importing it
imports, what any import statement in the tool's own modules names (so that
an import inside a function is there when the function runs), and what the
SDK needs to report an error. The closure is found by importing them in this
Python, in a child process that imports nothing else (a static search, as
modulefinder's, follows every import of every standard module reached and
brings in most of the library), again until the tool's own modules name
nothing new. The tool's own modules and the SDK go in as source, so that
tracebacks show their lines; the standard library's compiled. Modules
CPython freezes into itself are left out, as the runtime has them. Members
are stored uncompressed (the runtime has no zlib), in name order with fixed
dates, so the same sources make the same bundle.

A module the tool's own code imports that is neither in the --path
directories nor in the standard library (a package from PyPI, say) is an
error here, rather than at the first call: copy pure-Python packages into
the tool's folder.
"""
import _imp
import argparse
import ast
import importlib.util
import marshal
import os
import subprocess
import sys
import zipfile

ORIGIN = "/bundle/"  # as in runtime/boot.py: where the bundle's modules say they are

# Runs in the child, with only builtin and frozen modules loaded: imports
# the required modules (failing with their traceback), then tries the others,
# and prints each module that came from a source file, each other module
# loaded (builtin or frozen), and each it could not find.
PROBE = r"""
import os
import sys
sys.path[:0] = sys.argv[1].split(os.pathsep)  # before its own, which has its C modules
required, wanted = sys.argv[2].split(","), sys.argv[3:]
for name in required:
    __import__(name)
for name in wanted:
    try:
        __import__(name)
    except ImportError:
        print("missing", name, sep="\t")
for name, m in sorted(sys.modules.items()):
    f = getattr(m, "__file__", None)
    if f and f.endswith(".py") and name != "__main__":
        print("module", name, int(hasattr(m, "__path__")), f, sep="\t")
    else:
        print("loaded", name, sep="\t")
"""

# What the SDK imports only to report an error or encode a body.
SDK_NEEDS = ("traceback", "base64")

# Modules CPython's C code imports when a function is called, which no
# import statement names: with the module on the left in the bundle, those
# on the right go in too. (datetime.strptime and time.strptime import
# _strptime; str.encode and bytes.decode import the codec's module.)
LAZY = {
    "datetime": ("_strptime",),
    "time": ("_strptime",),
    "encodings": ("encodings.utf_16", "encodings.utf_32", "encodings.utf_8_sig", "encodings.cp1252",
               "encodings.iso8859_15", "encodings.idna", "encodings.punycode"),
}


def imported_names(name, path, is_pkg):
    """The modules the import statements of a module's source name."""
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    pkg = name if is_pkg else name.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = importlib.util.resolve_name("." * node.level + base, pkg)
            names.add(base)
    names.discard("_wasmcp")  # the runtime's builtin module
    return names


def closure(paths, stdlib, module):
    """Returns [(name, path, is_pkg, own)] for every module the tool needs."""
    wanted = set()
    while True:
        probe = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE, os.pathsep.join(paths + [stdlib]),
                                ",".join((module, "wasmcp") + SDK_NEEDS)] + sorted(wanted),
                               stdout=subprocess.PIPE, text=True)
        if probe.returncode != 0:
            sys.exit("wasmcp_bundle: importing %s failed (its traceback is above)" % module)
        found, missing, more = [], [], set()
        for line in probe.stdout.splitlines():
            kind, *rest = line.split("\t")
            if kind == "missing":
                missing.append(rest[0])
            elif kind == "loaded":
                more.update(LAZY.get(rest[0], ()))
            else:
                name, is_pkg, path = rest
                own = any(path.startswith(p + os.sep) for p in paths)
                found.append((name, path, is_pkg == "1", own))
        for name, path, is_pkg, own in found:
            if own:
                more |= imported_names(name, path, is_pkg)
            more.update(LAZY.get(name, ()))
        if missing:
            users = {m: sorted(n for n, p, k, o in found if o and m in imported_names(n, p, k)) for m in missing}
            sys.exit("wasmcp_bundle: modules not found: %s; the runtime has the standard library only, so "
                     "copy pure-Python packages into the tool's folder" %
                     "; ".join("%s (imported by %s)" % (m, ", ".join(u)) for m, u in sorted(users.items())))
        if more <= wanted:
            return found
        wanted |= more


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stdlib", required=True, help="the runtime's standard library (src/Lib)")
    ap.add_argument("--path", action="append", default=[], help="a directory of the tool's modules")
    ap.add_argument("-o", "--out", required=True, help="the bundle to write")
    ap.add_argument("module", help="the tool's module")
    a = ap.parse_args()
    paths = [os.path.abspath(p) for p in a.path or ["."]]
    stdlib = os.path.abspath(a.stdlib)

    members = {"wasmcp.entry": a.module.encode("utf-8")}
    for name, path, is_pkg, own in closure(paths, stdlib, a.module):
        if _imp.is_frozen(name):
            continue
        base = name.replace(".", "/") + ("/__init__" if is_pkg else "")
        with open(path, "rb") as f:
            source = f.read()
        if own:
            members[base + ".py"] = source
        else:
            code = compile(source, ORIGIN + base + ".py", "exec", dont_inherit=True)
            members[base + ".pyc"] = importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code)

    tmp = a.out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as z:
        for name in sorted(members):
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), members[name])
    os.replace(tmp, a.out)
    n = sum(1 for k in members if k.endswith((".py", ".pyc")))
    print("wasmcp_bundle: %s: %d modules, %d bytes" % (a.out, n, os.path.getsize(a.out)), file=sys.stderr)


if __name__ == "__main__":
    main()
