package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/template"
)

// A completion script is written from the commands themselves: each runs
// under withFlags, which stops it at parse with its flag set, so a flag
// added to a command is completed with no change here.

// completedCommand is one command as a completion script offers it.
type completedCommand struct {
	Name, Summary string
	Flags         []completedFlag
}

// completedFlag is one flag of a command.
type completedFlag struct {
	Name       string
	Option     string // as it is offered: --name, or -o for a one-letter name
	Usage      string
	TakesValue bool
}

// completions lists every command with its flags; policy is offered as
// its two subcommands, whose flags are the same.
func completions(ctx context.Context) []completedCommand {
	var out []completedCommand
	for _, c := range commands {
		cc := completedCommand{Name: c.name, Summary: c.summary}
		args := []string{}
		if c.name == "policy" {
			args = []string{"show"}
		}
		c.run(withFlags(ctx, func(fs *flag.FlagSet) {
			fs.VisitAll(func(f *flag.Flag) {
				_, usage := flag.UnquoteUsage(f)
				bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
				option := "--" + f.Name
				if len(f.Name) == 1 {
					option = "-" + f.Name
				}
				cc.Flags = append(cc.Flags, completedFlag{Name: f.Name, Option: option, Usage: firstSentence(usage), TakesValue: !isBool || !bf.IsBoolFlag()})
			})
		}), args, nil, io.Discard, io.Discard)
		out = append(out, cc)
	}
	return out
}

// firstSentence is a flag's usage up to its first ';', ':', '(' or end of
// sentence, which is what a completion menu has room for.
func firstSentence(s string) string {
	if i := strings.IndexAny(s, ";:("); i > 0 {
		s = s[:i]
	}
	s, _, _ = strings.Cut(s, ". ")
	return strings.TrimSpace(s)
}

// shells are the completion scripts, by shell.
var shells = map[string]*template.Template{
	"bash": template.Must(template.New("bash").Parse(bashCompletion)),
	"zsh":  template.Must(template.New("zsh").Funcs(template.FuncMap{"q": zshQuote, "spec": zshSpec}).Parse(zshCompletion)),
	"fish": template.Must(template.New("fish").Funcs(template.FuncMap{"q": fishQuote}).Parse(fishCompletion)),
}

const bashCompletion = `# bash completion for wasmcp: source <(wasmcp completion bash)
_wasmcp() {
  local cur=${COMP_WORDS[COMP_CWORD]} flags=
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "{{range .}}{{.Name}} {{end}}" -- "$cur"))
    return
  fi
  case ${COMP_WORDS[1]} in
{{- range .}}
  {{.Name}}) flags="{{range .Flags}}{{.Option}} {{end}}"{{if eq .Name "policy"}}
    if ((COMP_CWORD == 2)); then COMPREPLY=($(compgen -W "show approve" -- "$cur")); return; fi{{end}} ;;
{{- end}}
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -F _wasmcp wasmcp
`

const zshCompletion = `#compdef wasmcp
# zsh completion for wasmcp: source <(wasmcp completion zsh), or save it as
# _wasmcp in a directory of $fpath.
_wasmcp() {
  if (( CURRENT == 2 )); then
    local -a cmds
    cmds=({{range .}}{{q (print .Name ":" .Summary)}} {{end}})
    _describe command cmds
    return
  fi
  local -a flags
  case $words[2] in
{{- range .}}
  {{.Name}}){{if eq .Name "policy"}}
    if (( CURRENT == 3 )); then compadd show approve; return; fi{{end}}
    flags=({{range .Flags}}{{q (spec .)}} {{end}}) ;;
{{- end}}
  esac
  _arguments -s $flags '*:file:_files'
}
if [[ $funcstack[1] == _wasmcp ]]; then
  _wasmcp "$@"
else
  compdef _wasmcp wasmcp
fi
`

const fishCompletion = `# fish completion for wasmcp: wasmcp completion fish | source
complete -c wasmcp -f
{{- range .}}
complete -c wasmcp -n __fish_use_subcommand -a {{.Name}} -d {{q .Summary}}
{{- $cmd := .Name}}
{{- range .Flags}}
complete -c wasmcp -n '__fish_seen_subcommand_from {{$cmd}}' {{if eq (len .Name) 1}}-s{{else}}-l{{end}} {{.Name}} -d {{q .Usage}}{{if .TakesValue}} -r -F{{end}}
{{- end}}
{{- end}}
complete -c wasmcp -n '__fish_seen_subcommand_from policy; and not __fish_seen_subcommand_from show approve' -a 'show approve'
complete -c wasmcp -n '__fish_seen_subcommand_from serve list call inspect pack new keygen sign; and not string match -q -- "-*" (commandline -ct)' -F
`

// zshSpec is a flag as _arguments reads it: --name[description], and
// :value:_files for a flag that takes a value. Brackets and colons would
// end the description, and are left out of it.
func zshSpec(f completedFlag) string {
	desc := strings.NewReplacer("[", "", "]", "", ":", "").Replace(f.Usage)
	spec := f.Option + "[" + desc + "]"
	if f.TakesValue {
		spec += ":value:_files"
	}
	return spec
}

// zshQuote quotes s for zsh in single quotes.
func zshQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fishQuote quotes s for fish in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func runCompletion(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	if code, ok := parse(ctx, fs, args, stderr, "bash|zsh|fish\n\nPrints a completion script for the shell. To load it:\n  bash  source <(wasmcp completion bash)    (in ~/.bashrc)\n  zsh   source <(wasmcp completion zsh)     (in ~/.zshrc, after compinit)\n  fish  wasmcp completion fish | source     (in ~/.config/fish/config.fish)"); !ok {
		return code
	}
	if fs.NArg() != 1 || shells[fs.Arg(0)] == nil {
		fmt.Fprintln(stderr, "wasmcp completion: name one shell: bash, zsh or fish")
		return exitUsage
	}
	var b bytes.Buffer
	if err := shells[fs.Arg(0)].Execute(&b, completions(ctx)); err != nil {
		fmt.Fprintln(stderr, "wasmcp completion:", err)
		return exitUnhandled
	}
	stdout.Write(b.Bytes())
	return exitOK
}
