"""A Python tool, in a module that declares no "client", that asks all the
same (e2e/python_ask_test.go)."""

import wasmcp


@wasmcp.tool
def py_undeclared():
    try:
        wasmcp.elicit("May I?", {"type": "object", "properties": {}})
        return {"asked": True}
    except wasmcp.AskError as e:
        return {"code": e.code, "error": str(e)}
