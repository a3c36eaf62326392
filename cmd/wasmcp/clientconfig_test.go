package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readClientConfig reads a client's configuration file into its members.
func readClientConfig(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &config); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return config
}

// serversOf reads the servers member of a configuration.
func serversOf(t *testing.T, raw json.RawMessage) map[string]serverEntry {
	t.Helper()
	servers := map[string]serverEntry{}
	if err := json.Unmarshal(raw, &servers); err != nil {
		t.Fatalf("servers %s: %v", raw, err)
	}
	return servers
}

// Each client's entry is in its own shape, and starts this program with
// absolute paths, as a client starts it in a directory of its own.
func TestClientConfigPrintsEachClientsShape(t *testing.T) {
	dir := toolDir(t)
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ client, key, typ, file string }{
		{"claude", "mcpServers", "", "claude_desktop_config.json"},
		{"vscode", "servers", "stdio", filepath.Join(".vscode", "mcp.json")},
		{"cursor", "mcpServers", "", filepath.Join(".cursor", "mcp.json")},
	} {
		r := wasmcp(t, "", "client-config", tc.client, "--tools", dir)
		if r.code != exitOK || !strings.Contains(r.stderr, tc.file) || !strings.Contains(r.stderr, "--write") {
			t.Fatalf("client-config %s: %v\nwant the entry, and the file to put it in", tc.client, r)
		}
		var config map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.stdout), &config); err != nil || len(config) != 1 {
			t.Fatalf("client-config %s printed %q: %v", tc.client, r.stdout, err)
		}
		got := serversOf(t, config[tc.key])["wasmcp"]
		want := serverEntry{Type: tc.typ, Command: exe, Args: []string{"serve", "--tools", dir}}
		if got.Type != want.Type || got.Command != want.Command || strings.Join(got.Args, " ") != strings.Join(want.Args, " ") {
			t.Errorf("client-config %s: entry %+v; want %+v", tc.client, got, want)
		}
	}
	if r := wasmcp(t, "", "client-config", "zed"); r.code != exitUsage || !strings.Contains(r.stderr, "claude, cursor, vscode") {
		t.Errorf("client-config zed: %v; want exit 2 naming the clients", r)
	}
}

// --write merges the entry into the file: every other server and member
// stays, and the file as it was is kept beside it.
func TestClientConfigWriteMergesAndKeepsABackup(t *testing.T) {
	dir := toolDir(t)
	t.Chdir(t.TempDir())
	path := filepath.Join(".cursor", "mcp.json")
	if err := os.Mkdir(".cursor", 0o755); err != nil {
		t.Fatal(err)
	}
	const before = `{"mcpServers":{"other":{"command":"other-server","args":["--x"]},"wasmcp":{"command":"old"}},"theme":"dark"}`
	writeFile(t, path, before)
	r := wasmcp(t, "", "client-config", "cursor", "--write", "--tools", dir)
	if r.code != exitOK || !strings.Contains(r.stdout, "Restart Cursor") {
		t.Fatalf("client-config cursor --write: %v", r)
	}
	config := readClientConfig(t, path)
	if string(config["theme"]) != `"dark"` {
		t.Errorf("another member was lost: %v", config)
	}
	servers := serversOf(t, config["mcpServers"])
	if servers["other"].Command != "other-server" || servers["wasmcp"].Command == "old" || servers["wasmcp"].Args[2] != dir {
		t.Errorf("servers after the merge: %+v", servers)
	}
	backups, _ := filepath.Glob(path + ".*.bak")
	if len(backups) != 1 {
		t.Fatalf("backups: %v; want one", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != before {
		t.Errorf("the backup holds %q; want the file as it was", b)
	}

	// A file that does not exist yet is created, with no backup.
	r = wasmcp(t, "", "client-config", "vscode", "--write", "--tools", dir)
	if r.code != exitOK || strings.Contains(r.stdout, "as it was") {
		t.Fatalf("client-config vscode --write: %v", r)
	}
	if s := serversOf(t, readClientConfig(t, filepath.Join(".vscode", "mcp.json"))["servers"]); s["wasmcp"].Type != "stdio" {
		t.Errorf("VS Code entry: %+v", s)
	}
}

// A file that is not plain JSON (VS Code's allows comments) is left alone,
// and the message says to add the entry by hand.
func TestClientConfigLeavesAnUnreadableFileAlone(t *testing.T) {
	dir := toolDir(t)
	path := filepath.Join(t.TempDir(), "mcp.json")
	const before = "{\n  // my servers\n  \"servers\": {}\n}\n"
	writeFile(t, path, before)
	r := wasmcp(t, "", "client-config", "vscode", "--write", "--file", path, "--tools", dir)
	if r.code != exitFailure || !strings.Contains(r.stderr, "is not a JSON object") || !strings.Contains(r.stderr, "by hand") {
		t.Errorf("client-config on a file with comments: %v", r)
	}
	if b, _ := os.ReadFile(path); string(b) != before {
		t.Errorf("the file was changed to %q", b)
	}
	if backups, _ := filepath.Glob(path + ".*.bak"); len(backups) != 0 {
		t.Errorf("a backup was written of a file left alone: %v", backups)
	}
}
