package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// hostFlags are the flags shared by every command that loads a directory.
type hostFlags struct {
	tools        string
	timeout      time.Duration
	memory       abi.Size
	output       abi.Size
	concurrency  int
	queueTimeout time.Duration
	cacheDir     string
	logLevel     string
	logFormat    string
	logArguments bool
	policyFile   string
	prewarm      int
	engine       string
	compile      host.CompileLimits
	compileMem   abi.Size
	snapshotMem  abi.Size
}

func (f *hostFlags) register(fs *flag.FlagSet) {
	f.memory = 64 << 20
	f.output = 1 << 20
	fs.StringVar(&f.tools, "tools", "", "`directory` of .wasm tool modules (default: ./"+localTools+" if there is one, else "+userToolsHint()+", created on first run)")
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "ceiling on one call's run time; a manifest may ask for less")
	fs.Var(&f.memory, "memory", "ceiling on one call's memory: linear memory, tables and globals (e.g. 64MiB); a manifest may ask for less")
	fs.Var(&f.output, "output", "ceiling on one call's stdout, and separately its stderr, and on its answer as sent, JSON-encoded (e.g. 1MiB)")
	fs.IntVar(&f.concurrency, "concurrency", 2*runtime.GOMAXPROCS(0), "calls that may run at once")
	fs.DurationVar(&f.queueTimeout, "queue-timeout", 5*time.Second, "how long a call waits for a free slot before it is answered busy")
	fs.StringVar(&f.engine, "engine", host.Engines()[0], "WebAssembly `engine`: "+strings.Join(host.Engines(), " or ")+" (wasmtime needs a build tagged wasmtime)")
	fs.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "`directory` for compiled code, reused across restarts (empty: memory only)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&f.logArguments, "log-arguments", false, "add each call's arguments to its log line (they may hold private data)")
	fs.IntVar(&f.prewarm, "prewarm", 8, "instances to keep started ahead of their calls: at start for the tools of the largest modules, then one per recently called tool (0: none); each call still gets a fresh one. Together they hold at most --concurrency × --memory (what their guests' start-ups took), each until a call takes it or for a minute at most")
	fs.StringVar(&f.policyFile, "policy", "", "YAML `file` granting tools files, environment, network and secrets (none: tools get none)")
	d := host.DefaultCompileLimits()
	f.compileMem = abi.Size(d.Memory)
	fs.DurationVar(&f.compile.Timeout, "compile-timeout", d.Timeout, "longest one module may take to compile; a module that takes longer is refused, and, with a cache, refused at once after a restart until the module or the limit changes")
	fs.Var(&f.compileMem, "compile-memory", fmt.Sprintf("memory compiling one module may use, plus %d bytes for every byte of the module; a module that needs more is refused, and, with a cache, refused at once after a restart until the module or the limit changes", host.MemoryPerByte))
	fs.IntVar(&f.compile.Concurrency, "compile-concurrency", d.Concurrency, "modules that may compile at once, each within --compile-memory; a module compiled before loads from the cache in one more slot (compiling never takes a call's run slot, and a call's module compiles before the warm-up's)")
	f.snapshotMem = host.DefaultSnapshotMemory
	fs.Var(&f.snapshotMem, "snapshot-memory", "memory the reactors' snapshots may hold in all (their pages that are not all zeroes); a reactor whose snapshot would pass it runs its whole start-up in every call")
	addConfigFlag(fs)
}

// localTools is the tool directory of a checkout, or of any directory
// that has one: what `make run` builds into is named with --tools.
const localTools = "tools"

// userToolsDir is the tool directory of a user, under their config
// directory (~/.config/wasmcp/tools on Linux, ~/Library/Application
// Support/wasmcp/tools on macOS, %AppData%\wasmcp\tools on Windows), so
// that `wasmcp serve` works from any directory, as a desktop client starts
// it.
func userToolsDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "wasmcp", "tools"), nil
}

// userToolsHint is userToolsDir for the help, or how it is found.
func userToolsHint() string {
	if dir, err := userToolsDir(); err == nil {
		return dir
	}
	return "wasmcp/tools in the user's config directory"
}

// resolveTools settles --tools. A directory that is named must exist. With
// none, it is ./tools if there is one, else the user's tool directory,
// which is created the first time.
func (f *hostFlags) resolveTools() error {
	defaults := "without --tools, wasmcp uses ./" + localTools + " if there is one, else " + userToolsHint()
	if f.tools != "" {
		info, err := os.Stat(f.tools)
		if err == nil && !info.IsDir() {
			err = errors.New("not a directory")
		}
		if err != nil {
			return fmt.Errorf("tool directory %s: %v: create it, or name the directory of your .wasm tools with --tools DIR (%s)", f.tools, unwrapPath(err), defaults)
		}
		return nil
	}
	if info, err := os.Stat(localTools); err == nil && info.IsDir() {
		f.tools = localTools
		return nil
	}
	dir, err := userToolsDir()
	if err != nil {
		return fmt.Errorf("no --tools given, no ./%s here, and no user config directory for the default (%v): name the directory of your .wasm tools with --tools DIR", localTools, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the default tool directory: %w; name another with --tools DIR", err)
	}
	f.tools = dir
	return nil
}

// unwrapPath is a file error without the operation and path, which the
// message around it names already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "wasmcp")
}

func (f *hostFlags) check() error {
	switch {
	case f.timeout <= 0:
		return fmt.Errorf("--timeout must be positive")
	case f.memory < 64<<10:
		return fmt.Errorf("--memory must be at least 64KiB (one Wasm page)")
	case f.output <= 0:
		return fmt.Errorf("--output must be positive")
	case f.prewarm < 0:
		return fmt.Errorf("--prewarm must not be negative")
	case f.concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1")
	case f.queueTimeout < 0:
		return fmt.Errorf("--queue-timeout must not be negative")
	case f.snapshotMem <= 0:
		return fmt.Errorf("--snapshot-memory must be positive")
	case f.compile.Timeout <= 0 || f.compileMem < 1<<20 || f.compile.Concurrency < 1:
		return fmt.Errorf("--compile-timeout must be positive, --compile-memory at least 1MiB and --compile-concurrency at least 1")
	}
	return f.resolveTools()
}

// logger builds the server's logger. Logs always go to stderr: in stdio
// mode, stdout carries protocol messages only.
func (f *hostFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(f.logFormat) {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", f.logFormat)
}

// config is the host.Config the flags ask for. Modules compile in worker
// processes of this binary (the compile-worker command, started from
// self), which is what bounds a compilation's memory; a binary that cannot
// find itself compiles in process, and says so.
func (f *hostFlags) config(log *slog.Logger) host.Config {
	queue := f.queueTimeout
	if queue == 0 {
		queue = -1 // host.Config's zero is its default; --queue-timeout 0 is no wait
	}
	cfg := host.Config{
		Tools:          f.tools,
		Policy:         f.policyFile,
		Limits:         host.Limits{Timeout: f.timeout, Memory: int64(f.memory), Output: int64(f.output)},
		Concurrency:    f.concurrency,
		QueueTimeout:   queue,
		Prewarm:        f.prewarm,
		Engine:         f.engine,
		CacheDir:       f.cacheDir,
		Compile:        host.CompileLimits{Timeout: f.compile.Timeout, Memory: int64(f.compileMem), Concurrency: f.compile.Concurrency},
		SnapshotMemory: int64(f.snapshotMem),
		Logger:         log,
		LogArguments:   f.logArguments,
		Version:        version,
	}
	exe, err := self()
	if err != nil {
		log.Warn("compiling in process: the compile worker cannot be started, so --compile-memory does not hold", "reason", err)
		return cfg
	}
	cfg.Worker = &host.Worker{Path: exe, Args: []string{workerCommand}}
	return cfg
}

// procSelf names, on Linux, the file the running process was started from,
// even once no path leads to it.
const procSelf = "/proc/self/exe"

// self is the path compile workers are started from. procSelf where the
// system has it: an upgrade in place removes or replaces the server's
// binary, after which its path names no file, or another version, whose
// workers might leave code in the cache this server cannot use; procSelf
// still starts this server's own code. Elsewhere, the path it was started
// from.
func self() (string, error) {
	if _, err := os.Stat(procSelf); err == nil {
		return procSelf, nil
	}
	return os.Executable()
}

// open checks the flags and opens the server they describe; adjust, if
// not nil, completes the configuration for one command.
func (f *hostFlags) open(ctx context.Context, stderr io.Writer, adjust func(*host.Config)) (*host.Server, *slog.Logger, error) {
	if err := f.check(); err != nil {
		return nil, nil, err
	}
	log, err := f.logger(stderr)
	if err != nil {
		return nil, nil, err
	}
	cfg := f.config(log)
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := host.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return srv, log, nil
}

// closeServer closes srv as a command exits: compilations are stopped
// first (their workers killed), and what an engine cannot stop is not
// waited for long.
func closeServer(srv *host.Server, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		log.Warn("exiting with a compilation still running", "error", err)
	}
}
