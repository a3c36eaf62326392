"""A Python tool that asks the user to confirm by elicitation, through the
SDK's wasmcp.elicit (e2e/python_ask_test.go)."""

import wasmcp


@wasmcp.tool
def py_confirm(note):
    r = wasmcp.elicit("Remove the note %s?" % note,
                      {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]},
                      id="confirm")
    return {"action": r["action"], "confirm": r.get("content", {}).get("confirm")}
