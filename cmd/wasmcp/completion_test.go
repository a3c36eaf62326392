package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completionScript writes `wasmcp completion SHELL` to a file and returns
// its path, failing if the shell is not installed (scripts/setup installs
// bash, zsh and fish).
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Fatalf("%s not found: run scripts/setup", shell)
	}
	r := wasmcp(t, "", "completion", shell)
	if r.code != exitOK {
		t.Fatalf("wasmcp completion %s: %v", shell, r)
	}
	path := filepath.Join(t.TempDir(), "wasmcp."+shell)
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shellOutput runs shell with args and returns its output.
func shellOutput(t *testing.T, shell string, args ...string) string {
	t.Helper()
	out, err := exec.Command(shell, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", shell, args, err, out)
	}
	return string(out)
}

// shellLines is shellOutput's words.
func shellLines(t *testing.T, shell string, args ...string) []string {
	t.Helper()
	return strings.Fields(shellOutput(t, shell, args...))
}

func TestBashCompletion(t *testing.T) {
	script := completionScript(t, "bash")
	// run completes the last of words, as bash does on TAB.
	run := func(words ...string) []string {
		return shellLines(t, "bash", append([]string{"-c", `source "$0"; shift; COMP_WORDS=(wasmcp "$@"); COMP_CWORD=$#; _wasmcp; printf '%s\n' "${COMPREPLY[@]}"`, script, "_"}, words...)...)
	}
	if got := run("se"); !slices.Equal(got, []string{"serve"}) {
		t.Errorf("wasmcp se<TAB> = %q; want serve", got)
	}
	if got := run("co"); !slices.Equal(got, []string{"completion"}) {
		t.Errorf("wasmcp co<TAB> = %q; want completion", got)
	}
	if got := run("serve", "--to"); !slices.Equal(got, []string{"--tools"}) {
		t.Errorf("wasmcp serve --to<TAB> = %q; want --tools", got)
	}
	if got := run("pack", "-"); !slices.Contains(got, "-o") || !slices.Contains(got, "--manifest") {
		t.Errorf("wasmcp pack -<TAB> = %q; want -o and --manifest among them", got)
	}
	if got := run("policy", "a"); !slices.Equal(got, []string{"approve"}) {
		t.Errorf("wasmcp policy a<TAB> = %q; want approve", got)
	}
}

func TestFishCompletion(t *testing.T) {
	script := completionScript(t, "fish")
	// complete lists the candidates fish offers for line, without their
	// descriptions.
	complete := func(line string) []string {
		var names []string
		for l := range strings.Lines(shellOutput(t, "fish", "-c", "source $argv[1]; complete -C $argv[2]", script, line)) {
			names = append(names, strings.TrimSpace(strings.Split(l, "\t")[0]))
		}
		return names
	}
	if got := complete("wasmcp se"); !slices.Equal(got, []string{"serve"}) {
		t.Errorf("wasmcp se<TAB> = %q; want serve", got)
	}
	if got := complete("wasmcp serve --to"); !slices.Equal(got, []string{"--tools"}) {
		t.Errorf("wasmcp serve --to<TAB> = %q; want --tools", got)
	}
	if got := complete("wasmcp list --js"); !slices.Equal(got, []string{"--json"}) {
		t.Errorf("wasmcp list --js<TAB> = %q; want --json", got)
	}
	if got := complete("wasmcp policy "); !slices.Equal(got, []string{"approve", "show"}) {
		t.Errorf("wasmcp policy <TAB> = %q; want approve and show", got)
	}
}

// zsh's completion cannot run outside an interactive line editor; the
// script is checked to parse and to register _wasmcp for wasmcp once
// sourced after compinit, as the help says to load it.
func TestZshCompletion(t *testing.T) {
	script := completionScript(t, "zsh")
	shellLines(t, "zsh", "-n", script)
	got := shellLines(t, "zsh", "-f", "-c", `autoload -U compinit; compinit -u -d "$2/zcompdump"; source "$1"; print -r -- $_comps[wasmcp]`, "zsh", script, t.TempDir())
	if !slices.Equal(got, []string{"_wasmcp"}) {
		t.Errorf("after sourcing, wasmcp completes with %q; want _wasmcp", got)
	}
}

// Completion offers every command, and each command's own flags, as the
// commands themselves declare them.
func TestCompletionsComeFromTheCommands(t *testing.T) {
	byName := map[string]completedCommand{}
	for _, c := range completions(t.Context()) {
		byName[c.Name] = c
	}
	for _, c := range commands {
		if _, ok := byName[c.name]; !ok {
			t.Errorf("command %s is not completed", c.name)
		}
	}
	has := func(cmd, option string, value bool) {
		t.Helper()
		for _, f := range byName[cmd].Flags {
			if f.Option == option {
				if f.TakesValue != value {
					t.Errorf("%s %s: takes a value %v; want %v", cmd, option, f.TakesValue, value)
				}
				return
			}
		}
		t.Errorf("%s does not complete %s", cmd, option)
	}
	has("serve", "--http", true)
	has("serve", "--watch", false)
	has("pack", "-o", true)
	has("policy", "--policy", true)
	has("sign", "--key", true)
	has("keygen", "-W", false)
}

func TestCompletionNeedsOneKnownShell(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		if r := wasmcp(t, "", args...); r.code != exitUsage || !strings.Contains(r.stderr, "bash, zsh or fish") {
			t.Errorf("wasmcp %q: %v; want exit 2 naming the shells", args, r)
		}
	}
}
