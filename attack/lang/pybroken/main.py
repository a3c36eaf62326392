"""A Python tool whose import fails, for attack/snapwhy.py: what do the
operator and the model learn of why?"""
import sys

import wasmcp

if sys.platform == "wasi":  # not while the bundler imports it natively
    raise RuntimeError("boom at import: the tool's config is missing")


@wasmcp.tool
def pybroken() -> str:
    return "unreachable"
