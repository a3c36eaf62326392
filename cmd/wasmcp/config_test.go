package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// testFlags is a command with one flag of each kind wasmcp uses, and
// --config.
type testFlags struct {
	fs          *flag.FlagSet
	wait        time.Duration
	memory      abi.Size
	concurrency int
	format      string
	watch       bool
	sources     listFlag
}

func newTestFlags() *testFlags {
	f := &testFlags{fs: flag.NewFlagSet("test", flag.ContinueOnError), memory: 64 << 20}
	f.fs.SetOutput(new(strings.Builder))
	f.fs.DurationVar(&f.wait, "queue-timeout", 5*time.Second, "")
	f.fs.Var(&f.memory, "memory", "")
	f.fs.IntVar(&f.concurrency, "concurrency", 1, "")
	f.fs.StringVar(&f.format, "log-format", "text", "")
	f.fs.BoolVar(&f.watch, "watch", true, "")
	f.fs.Var(&f.sources, "source", "")
	addConfigFlag(f.fs)
	return f
}

// env is a fake environment.
type env map[string]string

func (e env) lookup(name string) (string, bool) { v, ok := e[name]; return v, ok }

// apply parses args as the command line, then applies e and the config
// file, as parse does.
func (f *testFlags) apply(args []string, e env) error {
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	return applyConfig(f.fs, e.lookup)
}

func configFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wasmcp.yaml")
	writeFile(t, p, content)
	return p
}

func TestEnvName(t *testing.T) {
	for name, want := range map[string]string{
		"queue-timeout":        "WASMCP_QUEUE_TIMEOUT",
		"session-idle-timeout": "WASMCP_SESSION_IDLE_TIMEOUT",
		"http":                 "WASMCP_HTTP",
		"o":                    "WASMCP_O",
		"config":               "WASMCP_CONFIG",
	} {
		if got := envName(name); got != want {
			t.Errorf("envName(%q) = %q; want %q", name, got, want)
		}
	}
}

// TestPrecedence sets one flag from every combination of the command line,
// the environment and the file: the first present of those, in that order,
// wins, and the default stands when none is.
func TestPrecedence(t *testing.T) {
	for mask := range 8 {
		inArgs, inEnv, inFile := mask&4 != 0, mask&2 != 0, mask&1 != 0
		t.Run(fmt.Sprintf("args=%v,env=%v,file=%v", inArgs, inEnv, inFile), func(t *testing.T) {
			want := 5 * time.Second
			var args []string
			e := env{}
			file := "log-format: json\n"
			if inFile {
				file += "queue-timeout: 3s\n"
				want = 3 * time.Second
			}
			if inEnv {
				e["WASMCP_QUEUE_TIMEOUT"] = "2s"
				want = 2 * time.Second
			}
			if inArgs {
				args = []string{"--queue-timeout", "1s"}
				want = 1 * time.Second
			}
			args = append(args, "--config", configFile(t, file))
			f := newTestFlags()
			if err := f.apply(args, e); err != nil {
				t.Fatal(err)
			}
			if f.wait != want {
				t.Errorf("--queue-timeout = %v; want %v", f.wait, want)
			}
			// Flags no source names keep their defaults; the file's other
			// key applies whatever the other sources set.
			if f.concurrency != 1 || f.memory != 64<<20 || !f.watch || f.format != "json" {
				t.Errorf("other flags changed: %+v", f)
			}
		})
	}
}

// TestPrecedenceThroughCommand checks the same order through a real
// command's flag parsing: `list --json` shows the --timeout in effect.
func TestPrecedenceThroughCommand(t *testing.T) {
	dir := toolDir(t)
	for mask := range 8 {
		inArgs, inEnv, inFile := mask&4 != 0, mask&2 != 0, mask&1 != 0
		t.Run(fmt.Sprintf("args=%v,env=%v,file=%v", inArgs, inEnv, inFile), func(t *testing.T) {
			want := "10s"
			extra := []string{"--compile=false"}
			if inFile {
				extra = append(extra, "--config", configFile(t, "timeout: 3s\n"))
				want = "3s"
			}
			if inEnv {
				t.Setenv("WASMCP_TIMEOUT", "2s")
				want = "2s"
			}
			if inArgs {
				extra = append(extra, "--timeout", "1s")
				want = "1s"
			}
			l, r := listJSON(t, dir, extra...)
			if r.code != exitOK || len(l.Tools) == 0 {
				t.Fatalf("list: %v", r)
			}
			if got := l.Tools[0].Limits.Timeout; got != want {
				t.Errorf("timeout = %s; want %s", got, want)
			}
		})
	}
}

func TestConfigFlagFromEnvironment(t *testing.T) {
	fromEnv := configFile(t, "concurrency: 2\n")
	fromArgs := configFile(t, "concurrency: 3\n")

	f := newTestFlags()
	if err := f.apply(nil, env{"WASMCP_CONFIG": fromEnv}); err != nil || f.concurrency != 2 {
		t.Errorf("WASMCP_CONFIG: concurrency %d, error %v; want 2 from its file", f.concurrency, err)
	}
	f = newTestFlags()
	if err := f.apply([]string{"--config", fromArgs}, env{"WASMCP_CONFIG": fromEnv}); err != nil || f.concurrency != 3 {
		t.Errorf("--config and WASMCP_CONFIG: concurrency %d, error %v; want 3 from --config's file", f.concurrency, err)
	}
	f = newTestFlags()
	if err := f.apply([]string{"--config", ""}, env{"WASMCP_CONFIG": fromEnv}); err != nil || f.concurrency != 1 {
		t.Errorf(`--config "" and WASMCP_CONFIG: concurrency %d, error %v; want no file read`, f.concurrency, err)
	}
}

func TestEmptyEnvironmentVariableSetsEmpty(t *testing.T) {
	f := newTestFlags()
	if err := f.apply(nil, env{"WASMCP_LOG_FORMAT": ""}); err != nil || f.format != "" {
		t.Errorf("WASMCP_LOG_FORMAT=: format %q, error %v; want the empty string", f.format, err)
	}
}

func TestConfigFileEveryKindOfFlag(t *testing.T) {
	f := newTestFlags()
	file := configFile(t, `# every kind of flag
queue-timeout: 1m30s   # duration
memory: 2MiB           # size
concurrency: 7         # int
log-format: "json"     # string
watch: false           # bool
`)
	if err := f.apply([]string{"--config", file}, env{}); err != nil {
		t.Fatal(err)
	}
	if f.wait != 90*time.Second || f.memory != 2<<20 || f.concurrency != 7 || f.format != "json" || f.watch {
		t.Errorf("got %+v", f)
	}

	// Anchors and aliases are YAML; a size may be a plain byte count.
	f = newTestFlags()
	file = configFile(t, "queue-timeout: &t 4s\nmemory: 1048576\nlog-format: *t\n")
	if err := f.apply([]string{"--config", file}, env{}); err != nil {
		t.Fatal(err)
	}
	if f.wait != 4*time.Second || f.memory != 1<<20 || f.format != "4s" {
		t.Errorf("got %+v", f)
	}

	// An empty file, or one of comments, sets nothing.
	for _, content := range []string{"", "# nothing yet\n", "---\n", "~\n"} {
		f = newTestFlags()
		if err := f.apply([]string{"--config", configFile(t, content)}, env{}); err != nil || f.wait != 5*time.Second {
			t.Errorf("file %q: %+v, %v", content, f, err)
		}
	}
}

// TestConfigFileThroughCommand gives every kind of flag of `list` from a
// file: the duration, size, int, string and bool flags all take effect.
func TestConfigFileThroughCommand(t *testing.T) {
	dir := toolDir(t)
	file := configFile(t, fmt.Sprintf(`tools: %q
cache-dir: ""
timeout: 3s
memory: 2MiB
concurrency: 3
log-level: error
json: true
compile: false
`, dir))
	r := wasmcp(t, "", "list", "--config", file)
	var l listed
	if err := json.Unmarshal([]byte(r.stdout), &l); r.code != exitOK || err != nil {
		t.Fatalf("list: %v (%v)", r, err)
	}
	if len(l.Tools) != 2 || l.Tools[0].Limits.Timeout != "3s" || l.Tools[0].Limits.Memory != "2MiB" || l.Tools[0].Compiled != nil {
		t.Errorf("list --config: %+v", l)
	}
}

// TestRepeatableFlag sets a flag that may be given again from each place:
// the command line repeats it, the environment separates values with
// commas, and the config file gives a list or a scalar.
func TestRepeatableFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  env
		file string
		want string
	}{
		{"command line", []string{"--source", "oci://a/b:1", "--source", "oci://c/d:2"}, env{}, "", "oci://a/b:1,oci://c/d:2"},
		{"environment", nil, env{"WASMCP_SOURCE": "oci://a/b:1, oci://c/d:2"}, "", "oci://a/b:1,oci://c/d:2"},
		{"config list", nil, env{}, "source:\n  - oci://a/b:1\n  - oci://c/d:2\n", "oci://a/b:1,oci://c/d:2"},
		{"config scalar", nil, env{}, "source: oci://a/b:1\n", "oci://a/b:1"},
		{"command line over file", []string{"--source", "oci://x/y:1"}, env{}, "source:\n  - oci://a/b:1\n", "oci://x/y:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFlags()
			args := tc.args
			if tc.file != "" {
				args = append(args, "--config", configFile(t, tc.file))
			}
			if err := f.apply(args, tc.env); err != nil {
				t.Fatal(err)
			}
			if got := f.sources.String(); got != tc.want {
				t.Errorf("sources %q; want %q", got, tc.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"unknown key", "log-format: json\nqueue-timout: 5s\n",
			[]string{"line 2", `unknown key "queue-timout"`, "not a flag of wasmcp test", "did you mean queue-timeout?"}},
		{"unknown key, nothing close", "colour: red\n", []string{`unknown key "colour"`}},
		{"bad duration", "queue-timeout: 10\n", []string{"line 1", "key queue-timeout", `invalid value "10"`}},
		{"bad size", "\nmemory: 64MB\n", []string{"line 2", "key memory", `invalid value "64MB"`}},
		{"bad int", "concurrency: many\n", []string{"key concurrency", `invalid value "many"`}},
		{"bad bool", "watch: yes\n", []string{"key watch", `invalid value "yes"`}},
		{"list value", "log-format:\n  - json\n", []string{"line 1", "key log-format takes a single value, not a list"}},
		{"mapping value", "memory: {max: 1}\n", []string{"key memory", "not a mapping"}},
		{"list of lists", "source:\n  - [a]\n", []string{"line 2", "key source", "each item of the list must be a single value"}},
		{"no value", "log-format:\n", []string{"key log-format", `no value (write "" for an empty one)`}},
		{"duplicate key", "concurrency: 1\nconcurrency: 2\n", []string{"line 2", `key "concurrency" is already set on line 1`}},
		{"two documents", "concurrency: 1\n---\nconcurrency: 2\n", []string{"one YAML document"}},
		{"not a mapping", "- concurrency: 1\n", []string{"must be a mapping"}},
		{"a scalar", "concurrency\n", []string{"must be a mapping"}},
		{"config in config", "config: other.yaml\n", []string{`key "config": a config file cannot name another`}},
		{"not YAML", "concurrency: [1\n", []string{"config file", "yaml"}},
		{"tabs", "concurrency:\t1\n\twatch: true\n", []string{"config file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := configFile(t, tc.file)
			err := newTestFlags().apply([]string{"--config", file}, env{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range append(tc.want, file) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}

	t.Run("missing file", func(t *testing.T) {
		err := newTestFlags().apply([]string{"--config", filepath.Join(t.TempDir(), "absent.yaml")}, env{})
		if err == nil || !strings.Contains(err.Error(), "absent.yaml") {
			t.Errorf("error %v; want one naming the file", err)
		}
	})

	// A key the command line overrides must still be a flag: the typo is
	// there for the next run without the override.
	t.Run("unknown key under an override", func(t *testing.T) {
		err := newTestFlags().apply([]string{"--queue-timeout", "1s", "--config", configFile(t, "queue-timeout: 2s\nqueue-timout: 3s\n")}, env{})
		if err == nil || !strings.Contains(err.Error(), `unknown key "queue-timout"`) {
			t.Errorf("error %v", err)
		}
	})

	t.Run("bad environment variable", func(t *testing.T) {
		for name, value := range map[string]string{"WASMCP_QUEUE_TIMEOUT": "soon", "WASMCP_MEMORY": "lots", "WASMCP_WATCH": "maybe", "WASMCP_CONCURRENCY": "1.5"} {
			err := newTestFlags().apply(nil, env{name: value})
			if err == nil || !strings.Contains(err.Error(), "environment variable "+name) || !strings.Contains(err.Error(), fmt.Sprintf("invalid value %q", value)) {
				t.Errorf("%s=%s: error %v; want one naming the variable and the value", name, value, err)
			}
		}
	})

	// A bad value given where it is overridden is never parsed.
	t.Run("bad environment variable under an override", func(t *testing.T) {
		f := newTestFlags()
		if err := f.apply([]string{"--queue-timeout", "1s"}, env{"WASMCP_QUEUE_TIMEOUT": "soon"}); err != nil || f.wait != time.Second {
			t.Errorf("got %v, %v", f.wait, err)
		}
	})
}

// TestConfigErrorsThroughCommand checks how a command reports them: exit 2,
// the source on stderr, nothing on stdout, nothing run.
func TestConfigErrorsThroughCommand(t *testing.T) {
	dir := toolDir(t)
	file := configFile(t, "timeout: 1s\nqueue-timout: 5s\n")
	for _, cmd := range []string{"list", "call", "serve"} {
		r := wasmcp(t, "", cmd, "--tools", dir, "--cache-dir", "", "--config", file)
		if r.code != exitUsage || r.stdout != "" || !strings.Contains(r.stderr, "wasmcp "+cmd+": config file "+file+", line 2: unknown key \"queue-timout\"") {
			t.Errorf("%s: %v", cmd, r)
		}
	}

	// A file is for one command: `list` has no --http.
	r := wasmcp(t, "", "list", "--tools", dir, "--cache-dir", "", "--config", configFile(t, "http: 127.0.0.1:8080\n"))
	if r.code != exitUsage || !strings.Contains(r.stderr, `unknown key "http": not a flag of wasmcp list`) {
		t.Errorf("list with a serve key: %v", r)
	}

	t.Setenv("WASMCP_MEMORY", "10MB")
	r = wasmcp(t, "", "list", "--tools", dir, "--cache-dir", "")
	if r.code != exitUsage || !strings.Contains(r.stderr, `wasmcp list: environment variable WASMCP_MEMORY: invalid value "10MB" for --memory`) {
		t.Errorf("list with a bad WASMCP_MEMORY: %v", r)
	}
}

// Commands without --config still read the environment.
func TestEnvironmentWithoutConfigFlag(t *testing.T) {
	dir := t.TempDir()
	module := wattest.Write(t, dir, "echo", "echo")
	t.Setenv("WASMCP_JSON", "true")
	r := wasmcp(t, "", "inspect", module)
	if !json.Valid([]byte(r.stdout)) { // exit 1: the module has no manifest
		t.Errorf("inspect with WASMCP_JSON=true did not print JSON: %v", r)
	}
	if r := wasmcp(t, "", "inspect", "--config", "x.yaml", module); r.code != exitUsage {
		t.Errorf("inspect has no --config: %v", r)
	}
}

func TestHelpMentionsEnvironmentAndConfig(t *testing.T) {
	for cmd, want := range map[string][]string{
		"serve":   {"-config FILE", "environment variable (--auth-token-file as WASMCP_AUTH_TOKEN_FILE)", "key of the --config file", "The command line wins"},
		"list":    {"-config FILE", "--cache-dir as WASMCP_CACHE_DIR", "key of the --config file"},
		"inspect": {"--json as WASMCP_JSON", "the command line wins over the environment"},
	} {
		r := wasmcp(t, "", cmd, "--help")
		if r.code != exitOK {
			t.Errorf("%s --help: %v", cmd, r)
		}
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s --help does not mention %q:\n%s", cmd, w, r.stderr)
			}
		}
		if strings.Count(r.stderr, "WASMCP_") != 1 {
			t.Errorf("%s --help names the environment form more than once:\n%s", cmd, r.stderr)
		}
	}
	if r := wasmcp(t, "", "inspect", "--help"); strings.Contains(r.stderr, "config") {
		t.Errorf("inspect --help mentions a config file it does not take:\n%s", r.stderr)
	}
	if r := wasmcp(t, "", "version", "--help"); strings.Contains(r.stderr, "WASMCP_") {
		t.Errorf("version --help mentions the environment for no flags:\n%s", r.stderr)
	}
}

// TestDeployManifestsServe runs `wasmcp serve` as deploy/kubernetes runs it:
// the Deployment's arguments and the ConfigMap's config file. Only what
// names the pod's paths and port is overridden, on the command line after
// them, which wins; every key of the file reaches its flag.
func TestDeployManifestsServe(t *testing.T) {
	deploy := filepath.Join("..", "..", "deploy", "kubernetes")
	var deployment struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	var configMap struct {
		Data map[string]string `yaml:"data"`
	}
	for file, v := range map[string]any{"deployment.yaml": &deployment, "configmap.yaml": &configMap} {
		b, err := os.ReadFile(filepath.Join(deploy, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if len(deployment.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment.yaml: want one container")
	}
	args := deployment.Spec.Template.Spec.Containers[0].Args
	config, ok := configMap.Data["config.yaml"]
	if !ok || len(args) == 0 || args[0] != "serve" {
		t.Fatalf("deployment.yaml args %q, configmap.yaml config.yaml %t", args, ok)
	}
	file := configFile(t, config)
	// An empty tool directory: the pod's tools are not here, and with
	// none, no background compilation outlives the run to log into stderr.
	local := append(args[1:], "--config", file, "--tools", t.TempDir(), "--cache-dir", "", "--store", t.TempDir(), "--http", "")
	r := wasmcp(t, "", append([]string{"serve"}, local...)...)
	if r.code != exitOK {
		t.Fatalf("wasmcp serve %q: %v", local, r)
	}
	// The file's log-format: json is in effect.
	if !strings.Contains(r.stderr, `"msg":"tools loaded"`) {
		t.Errorf("serve did not log JSON as the config file asks:\n%s", r.stderr)
	}
}
