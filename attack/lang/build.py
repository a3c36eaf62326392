"""Builds the Python and JavaScript tools of lang/ into tools/snaplang, on
the runtimes `make tools` uses, as the tools' own build scripts would."""
import os, shutil, subprocess, tempfile
from lib import ROOT, BIN


def build(python=("pyevil",), js=("jsevil",)):
    """Builds the Python and JavaScript modules named (directories of
    lang/) into tools/snaplang; returns that directory."""
    top = os.path.join(ROOT, "..")
    d = os.path.join(ROOT, "tools", "snaplang")
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    wasmcp = BIN["wazero"]
    with tempfile.TemporaryDirectory() as tmp:
        rt = subprocess.check_output([os.path.join(top, "scripts", "python-runtime")], text=True).strip()
        sdk = os.path.join(top, "sdk-guest", "python")
        for name in python:
            subprocess.check_call([os.path.join(rt, "native", "python"), "-I", os.path.join(sdk, "wasmcp_bundle.py"), "--stdlib",
                                   os.path.join(rt, "src", "Lib"), "--path", os.path.join(ROOT, "lang", name), "--path", sdk,
                                   "-o", os.path.join(tmp, name + ".zip"), "main"], stdout=subprocess.DEVNULL)
            subprocess.check_call([wasmcp, "pack", "--init", os.path.join(tmp, name + ".zip"), "--manifest",
                                   os.path.join(ROOT, "lang", name, name + ".manifest.json"), "-o", os.path.join(d, name + ".wasm"),
                                   os.path.join(rt, "wasmcp-python.wasm")], stdout=subprocess.DEVNULL)
        rt = subprocess.check_output([os.path.join(top, "sdk-guest", "js", "build-runtime")], text=True).strip()
        for name in js:
            subprocess.check_call([os.path.join(rt, "qjs-compile"), os.path.join(ROOT, "lang", name, "main.js"), os.path.join(tmp, name + ".qjs")])
            subprocess.check_call([wasmcp, "pack", "--init", os.path.join(tmp, name + ".qjs"), "--manifest",
                                   os.path.join(ROOT, "lang", name, name + ".manifest.json"), "-o", os.path.join(d, name + ".wasm"),
                                   os.path.join(rt, "quickjs.wasm")], stdout=subprocess.DEVNULL)

    return d
