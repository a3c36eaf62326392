package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/internal/atomicfile"
)

// client is a desktop MCP client whose configuration client-config writes.
type client struct {
	title string
	// key is the member of the configuration that holds its servers.
	key string
	// stdioType is the "type" an entry needs, if the client asks for one.
	stdioType string
	// file is where the client reads its configuration.
	file func() (string, error)
}

var clients = map[string]client{
	// Claude Desktop reads one file in its folder of the user's config
	// directory (macOS: ~/Library/Application Support/Claude, Windows:
	// %APPDATA%\Claude).
	"claude": {title: "Claude Desktop", key: "mcpServers", file: func() (string, error) {
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, "Claude", "claude_desktop_config.json"), nil
	}},
	// VS Code and Cursor read a file of the open folder's.
	"vscode": {title: "VS Code", key: "servers", stdioType: "stdio", file: func() (string, error) {
		return filepath.Abs(filepath.Join(".vscode", "mcp.json"))
	}},
	"cursor": {title: "Cursor", key: "mcpServers", file: func() (string, error) {
		return filepath.Abs(filepath.Join(".cursor", "mcp.json"))
	}},
}

// clientNames are the clients, sorted, for messages.
func clientNames() string {
	var names []string
	for n := range clients {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// serverEntry is how a client starts a stdio server.
type serverEntry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func runClientConfig(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("client-config", flag.ContinueOnError)
	var hf hostFlags
	fs.StringVar(&hf.tools, "tools", "", "`directory` of .wasm tool modules the client's server serves (default: ./"+localTools+" if there is one, else "+userToolsHint()+")")
	name := fs.String("name", "wasmcp", "the server's `name` in the client's configuration")
	write := fs.Bool("write", false, "merge the entry into the client's configuration file, keeping every other entry and a backup of the file as it was")
	file := fs.String("file", "", "the configuration `FILE` to write (default: the client's own)")
	// The client may come first, as in `wasmcp client-config claude --write`.
	var named string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		named, args = args[0], args[1:]
	}
	if code, ok := parse(ctx, fs, args, stderr, "[flags] "+strings.ReplaceAll(clientNames(), ", ", "|")+"\n\nPrints the entry that makes the client start `wasmcp serve` over stdio on the tool\ndirectory, or with --write merges it into the client's configuration file:\n  claude  Claude Desktop's claude_desktop_config.json (mcpServers)\n  vscode  .vscode/mcp.json of the current folder (servers, type stdio)\n  cursor  .cursor/mcp.json of the current folder (mcpServers)"); !ok {
		return code
	}
	rest := fs.Args()
	if named != "" {
		rest = append([]string{named}, rest...)
	}
	c, ok := clients[strings.Join(rest, " ")]
	if !ok {
		fmt.Fprintf(stderr, "wasmcp client-config: name one client: %s\n", clientNames())
		return exitUsage
	}
	entry, err := clientEntry(&hf, c)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp client-config:", err)
		return exitFailure
	}
	path := *file
	if path == "" {
		if path, err = c.file(); err != nil {
			fmt.Fprintf(stderr, "wasmcp client-config: finding %s's configuration: %v; name it with --file FILE\n", c.title, err)
			return exitFailure
		}
	}
	if !*write {
		b, _ := json.MarshalIndent(map[string]any{c.key: map[string]serverEntry{*name: entry}}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		fmt.Fprintf(stderr, "Add this to %s's %s, or run again with --write to merge it in.\n", c.title, path)
		return exitOK
	}
	backup, err := mergeClientConfig(path, c.key, *name, entry)
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp client-config:", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "Wrote server %q into %s", *name, path)
	if backup != "" {
		fmt.Fprintf(stdout, " (as it was before: %s)", backup)
	}
	fmt.Fprintf(stdout, ". Restart %s to load it.\n", c.title)
	return exitOK
}

// clientEntry is the entry that starts this binary as a stdio server on
// the tool directory. Both paths are absolute: a client starts servers
// in a directory of its own, with a PATH that may not hold wasmcp.
func clientEntry(hf *hostFlags, c client) (serverEntry, error) {
	if err := hf.resolveTools(); err != nil {
		return serverEntry{}, err
	}
	tools, err := filepath.Abs(hf.tools)
	if err != nil {
		return serverEntry{}, err
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return serverEntry{}, fmt.Errorf("finding this program's path for the client to start: %w", err)
	}
	return serverEntry{Type: c.stdioType, Command: exe, Args: []string{"serve", "--tools", tools}}, nil
}

// mergeClientConfig sets servers[name] of the configuration file at path
// to entry, keeping every other member and server. A file that exists is
// first copied beside itself, and its path returned; the new one replaces
// it in one rename, so a client never reads half a file.
func mergeClientConfig(path, servers, name string, entry serverEntry) (backup string, err error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	config := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(old)) > 0 {
		if err := json.Unmarshal(old, &config); err != nil {
			return "", fmt.Errorf("%s is not a JSON object (%v), so it is left as it is: add the entry that `wasmcp client-config` prints by hand", path, err)
		}
	}
	members := map[string]json.RawMessage{}
	if raw, ok := config[servers]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &members); err != nil {
			return "", fmt.Errorf("%s: %q is not an object (%v), so the file is left as it is: add the entry by hand", path, servers, err)
		}
	}
	members[name], _ = json.Marshal(entry)
	config[servers], _ = json.Marshal(members)
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if old != nil {
		backup = path + "." + time.Now().UTC().Format("20060102T150405Z") + ".bak"
		if err := os.WriteFile(backup, old, 0o600); err != nil {
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return "", err
	}
	return backup, nil
}
