package e2e

import (
	"testing"
)

// TestPythonAsks is TestJavaScriptAsks for a Python tool, through the
// SDK's wasmcp.elicit: on 2025-11-25 the call waits for the answer on the
// session, on 2026-07-28 it ends in an InputRequiredResult and runs again
// with the answer. The runtime imports ask_all for every tool it carries,
// so a module that declares no "client" loads, and its ask is refused
// with code 7 (AskError).
func TestPythonAsks(t *testing.T) {
	dir := t.TempDir()
	buildPython(t, dir, "ask_py", "testdata/ask_py",
		`{"abi":1,"start":"reactor","tools":[{"name":"py_confirm","description":"Asks the user to confirm the removal of a note.","inputSchema":{"type":"object","properties":{"note":{"type":"string"}},"required":["note"]},"output":"json","client":["elicitation"]}],"limits":{"memory":"64MiB"}}`)
	buildPython(t, dir, "noask_py", "testdata/noask_py",
		`{"abi":1,"start":"reactor","tools":[{"name":"py_undeclared","description":"Asks without declaring it.","inputSchema":{"type":"object"},"output":"json"}],"limits":{"memory":"64MiB"}}`)
	checkAsks(t, startHTTPIn(t, dir), "py_confirm", "py_undeclared")
}
