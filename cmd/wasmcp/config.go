package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Every flag of every command can also be set from the environment and,
// for the commands that take --config, from a YAML file. The precedence,
// highest first:
//
//	the command line     --queue-timeout 5s
//	the environment      WASMCP_QUEUE_TIMEOUT=5s
//	the --config file    queue-timeout: 5s
//	the flag's default
//
// It works on a parsed flag.FlagSet, so a flag added to any command gets
// it with no code of its own: values go through the flag's own Set, so
// parsing and validation stay the flag's.

const (
	envPrefix  = "WASMCP_"
	configFlag = "config"
)

// envName is the environment variable of a flag: --queue-timeout is
// WASMCP_QUEUE_TIMEOUT.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// addConfigFlag gives a command the --config flag.
func addConfigFlag(fs *flag.FlagSet) {
	fs.String(configFlag, "", "read flags from the YAML `FILE`, one key per flag name (queue-timeout: 5s)")
}

// applyConfig runs after fs has parsed the command line. Each flag the
// command line did not set takes its environment variable, if lookupEnv
// finds it (set but empty counts: WASMCP_CACHE_DIR= turns the cache off);
// each flag set by neither takes its key of the --config file, if fs has
// that flag and it names a file. Every key of the file must be a flag of
// fs, including keys the command line or environment override.
func applyConfig(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || set[f.Name] {
			return
		}
		name := envName(f.Name)
		v, ok := lookupEnv(name)
		if !ok {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("environment variable %s: invalid value %q for --%s: %v", name, v, f.Name, e)
		}
		set[f.Name] = true
	})
	if err != nil {
		return err
	}

	cf := fs.Lookup(configFlag)
	if cf == nil || cf.Value.String() == "" {
		return nil
	}
	path := cf.Value.String()
	settings, err := readConfig(path)
	if err != nil {
		return err
	}
	for _, s := range settings {
		where := fmt.Sprintf("config file %s, line %d", path, s.line)
		if s.key == configFlag {
			return fmt.Errorf("%s: key %q: a config file cannot name another", where, s.key)
		}
		f := fs.Lookup(s.key)
		if f == nil {
			return fmt.Errorf("%s: unknown key %q: not a flag of wasmcp %s%s", where, s.key, fs.Name(), suggest(fs, s.key))
		}
		if _, repeatable := f.Value.(*listFlag); s.list && !repeatable {
			return fmt.Errorf("%s: key %s takes a single value, not a list", where, s.key)
		}
		if set[f.Name] {
			continue
		}
		if e := fs.Set(f.Name, s.value); e != nil {
			return fmt.Errorf("%s: key %s: invalid value %q: %v", where, s.key, s.value, e)
		}
	}
	return nil
}

// setting is one key of a config file.
type setting struct {
	key, value string
	line       int
	list       bool // written as a YAML list
}

// readConfig reads a config file: one YAML document, a mapping from flag
// names to scalars. A scalar's text is kept as written, so `memory: 64MiB`,
// `concurrency: 8` and `watch: false` all reach the flag as they would on
// the command line.
func readConfig(path string) ([]setting, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	fail := func(line int, format string, a ...any) error {
		if line > 0 {
			return fmt.Errorf("config file %s, line %d: %s", path, line, fmt.Sprintf(format, a...))
		}
		return fmt.Errorf("config file %s: %s", path, fmt.Sprintf(format, a...))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil // empty, or comments only
	} else if err != nil {
		return nil, fail(0, "%v", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fail(extra.Line, "the file must hold one YAML document")
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "the file must be a mapping of flag names to values (queue-timeout: 5s)")
	}
	var out []setting
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, fail(k.Line, "a key must be a flag name")
		}
		if first, ok := seen[k.Value]; ok {
			return nil, fail(k.Line, "key %q is already set on line %d", k.Value, first)
		}
		seen[k.Value] = k.Line
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		if v.Kind == yaml.SequenceNode {
			// A list, for a flag that may be given again: its items
			// joined as an environment variable gives them.
			var items []string
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
					return nil, fail(item.Line, "key %s: each item of the list must be a single value", k.Value)
				}
				items = append(items, item.Value)
			}
			out = append(out, setting{key: k.Value, value: strings.Join(items, ","), line: k.Line, list: true})
			continue
		}
		switch {
		case v.Kind != yaml.ScalarNode:
			return nil, fail(v.Line, "key %s: the value must be a single value (or, for a flag that may be repeated, a list), not a mapping", k.Value)
		case v.Tag == "!!null":
			return nil, fail(v.Line, `key %s: no value (write "" for an empty one)`, k.Value)
		}
		out = append(out, setting{key: k.Value, value: v.Value, line: k.Line})
	}
	return out, nil
}

// suggest names the flag of fs closest to a mistyped key, if one is close.
func suggest(fs *flag.FlagSet, key string) string {
	best, bestDist := "", 3 // at most two edits away
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(key, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// configHelp is the end of a command's --help: how its flags can be set
// other than on the command line.
func configHelp(fs *flag.FlagSet) string {
	var example *flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if example == nil || (!strings.Contains(example.Name, "-") && strings.Contains(f.Name, "-")) {
			example = f
		}
	})
	if example == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nEach flag can also be set by environment variable (--%s as %s)",
		example.Name, envName(example.Name))
	if fs.Lookup(configFlag) != nil {
		fmt.Fprintf(&b, "\nor by a key of the --config file (%s: VALUE). The command line wins over\nthe environment, which wins over the file.\n", example.Name)
	} else {
		b.WriteString(";\nthe command line wins over the environment.\n")
	}
	return b.String()
}
