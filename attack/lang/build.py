"""Builds lang/pyevil and lang/jsevil into tools/snaplang, on the runtimes
`make tools` uses, as the tools' own build scripts would."""
import os, shutil, subprocess, tempfile
from lib import ROOT, BIN


def build():
    """Builds both modules; returns the tool directory."""
    top = os.path.join(ROOT, "..")
    d = os.path.join(ROOT, "tools", "snaplang")
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    wasmcp = BIN["wazero"]
    with tempfile.TemporaryDirectory() as tmp:
        rt = subprocess.check_output([os.path.join(top, "scripts", "python-runtime")], text=True).strip()
        sdk = os.path.join(top, "sdk-guest", "python")
        subprocess.check_call([os.path.join(rt, "native", "python"), "-I", os.path.join(sdk, "wasmcp_bundle.py"), "--stdlib",
                               os.path.join(rt, "src", "Lib"), "--path", os.path.join(ROOT, "lang", "pyevil"), "--path", sdk,
                               "-o", os.path.join(tmp, "init.zip"), "main"], stdout=subprocess.DEVNULL)
        subprocess.check_call([wasmcp, "pack", "--init", os.path.join(tmp, "init.zip"), "--manifest",
                               os.path.join(ROOT, "lang", "pyevil", "pyevil.manifest.json"), "-o", os.path.join(d, "pyevil.wasm"),
                               os.path.join(rt, "wasmcp-python.wasm")], stdout=subprocess.DEVNULL)
        js = subprocess.check_output([os.path.join(top, "sdk-guest", "js", "build-runtime")], text=True).strip()
        subprocess.check_call([os.path.join(js, "qjs-compile"), os.path.join(ROOT, "lang", "jsevil", "main.js"), os.path.join(tmp, "main.qjs")])
        subprocess.check_call([wasmcp, "pack", "--init", os.path.join(tmp, "main.qjs"), "--manifest",
                               os.path.join(ROOT, "lang", "jsevil", "jsevil.manifest.json"), "-o", os.path.join(d, "jsevil.wasm"),
                               os.path.join(js, "quickjs.wasm")], stdout=subprocess.DEVNULL)

    return d
