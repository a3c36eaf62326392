"""A Python module serving a resource template and prompts through the
SDK's @wasmcp.resources, @wasmcp.prompts and @wasmcp.completions
(e2e/guest_entries_test.go;
its manifest is testdata/notes.manifest.json). notes://none and the
prompt broken_note answer what the SDK refuses to write."""

import wasmcp

NOTES = {"a": "note A", "b": "note B"}


@wasmcp.resources
def read(uri, arguments):
    note = arguments.get("id", "")
    if note == "none":
        return []
    if note not in NOTES:
        raise wasmcp.ToolError("there is no note %s: the notes are %s" % (note, ", ".join(NOTES)))
    return NOTES[note]


@wasmcp.prompts
def get(name, arguments):
    if name == "broken_note":
        return [{"role": "system", "content": "You are a note."}]
    return {"description": "Summary of note " + arguments["id"],
            "messages": [{"role": "user", "content": "Summarise note %s: %s" % (arguments["id"], NOTES.get(arguments["id"], "?"))}]}


@wasmcp.completions
def complete(ref, name, value, context):
    ids = [note for note in NOTES if note.startswith(value)]
    return {"values": ids, "total": len(ids)} if ref["type"] == "ref/prompt" else ids
