"""Writes the runtime's table of frozen modules as C (struct _frozen[]).

    python freeze.py OUT.c LIBDIR BOOT.py

Run it with the build Python, which is the runtime's version: frozen code is
marshalled bytecode, and both must agree. The table holds what the
interpreter needs before the tool's bundle can be read: the boot module and
the codecs start-up looks up (CPython 3.11 freezes its other start-up
modules, such as os and codecs, itself).
"""
import marshal
import os
import sys

out_c, libdir, boot = sys.argv[1:]
modules = [  # (name, source, is a package)
    ("_wasmcp_boot", boot, False),
    ("encodings", os.path.join(libdir, "encodings", "__init__.py"), True),
]
for name in ("aliases", "utf_8", "ascii", "latin_1"):
    modules.append(("encodings." + name, os.path.join(libdir, "encodings", name + ".py"), False))

with open(out_c, "w") as f:
    f.write("/* Made by freeze.py: do not edit. */\n#include <Python.h>\n\n")
    for i, (name, path, _) in enumerate(modules):
        with open(path, "rb") as src:
            code = compile(src.read(), "<frozen %s>" % name, "exec", dont_inherit=True)
        data = marshal.dumps(code)
        f.write("static const unsigned char M%d[] = { /* %s */\n" % (i, name))
        for j in range(0, len(data), 20):
            f.write(",".join(str(b) for b in data[j:j + 20]) + ",\n")
        f.write("};\n")
    f.write("\nconst struct _frozen wasmcp_frozen[] = {\n")
    for i, (name, _, is_pkg) in enumerate(modules):
        f.write('    {"%s", M%d, (int)sizeof(M%d), %d, NULL},\n' % (name, i, i, is_pkg))
    f.write("    {0, 0, 0, 0, 0},\n};\n")
