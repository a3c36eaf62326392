package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/oci"
)

// listFlag is a flag that may be given again, each value added. One value
// may hold several, comma-separated, which is how an environment variable
// sets it; a config file may give a YAML list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// registryFlags are the flags of every command that talks to registries.
type registryFlags struct {
	plainHTTP listFlag
	authFile  string
}

func (f *registryFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.plainHTTP, "plain-http", "reach the registry `HOST` (or HOST:PORT) over plain HTTP instead of HTTPS, for a registry on loopback: anywhere else its credentials and tools would cross the network unprotected; repeat, or separate with commas, for more")
	fs.StringVar(&f.authFile, "registry-auth-file", "", "registry credentials in a Docker config.json `FILE` (a Kubernetes Secret of type dockerconfigjson, mounted), tried before the Docker config file ($DOCKER_CONFIG or ~/.docker/config.json)")
}

// remote is the registries' client.
func (f *registryFlags) remote() (*oci.Remote, error) { return oci.NewRemote(f.plainHTTP, f.authFile) }

// registerStore gives a command that pulls the --store flag.
func registerStore(fs *flag.FlagSet, dir *string) {
	fs.StringVar(dir, "store", defaultStore(), "`directory` that pulled tools are kept in, by digest")
}

func defaultStore() string {
	if dir := defaultCacheDir(); dir != "" {
		return filepath.Join(dir, "oci")
	}
	return ""
}

// openStore opens the --store directory.
func openStore(dir string) (*oci.Store, error) {
	if dir == "" {
		return nil, errors.New("no --store directory for pulled tools, and no user cache directory for the default: name one")
	}
	return oci.OpenStore(dir)
}

func runPush(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	var rf registryFlags
	rf.register(fs)
	if code, ok := parse(ctx, fs, args, stderr, "[flags] MODULE.wasm oci://REGISTRY/REPOSITORY:TAG"); !ok {
		return code
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(stderr, "wasmcp push: want a module and a reference: wasmcp push MODULE.wasm oci://REGISTRY/REPOSITORY:TAG")
		return exitUsage
	}
	ref, err := oci.ParseReference(fs.Arg(1))
	if err == nil && oci.IsDigest(ref) {
		err = errors.New("push names a tag to push to, not a digest")
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp push:", err)
		return exitUsage
	}
	tool, err := oci.ReadTool(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp push:", err)
		return exitFailure
	}
	remote, err := rf.remote()
	var repo oras.Target
	if err == nil {
		repo, err = remote.Repository(ref)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp push:", err)
		return exitFailure
	}
	ctx, cancel := context.WithTimeout(ctx, oci.DefaultPullTimeout)
	defer cancel()
	desc, err := oci.Push(ctx, repo, ref.Reference, tool, time.Now())
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp push:", err)
		return exitFailure
	}
	names := []string{tool.Module.Name}
	if tool.Manifest != nil {
		names = append(names, tool.Manifest.Name)
	}
	for _, s := range tool.Signatures {
		names = append(names, s.Name)
	}
	fmt.Fprintf(stdout, "pushed %s: %s\n%s%s/%s@%s\n", strings.Join(names, ", "), ref.Reference, oci.Scheme, ref.Registry, ref.Repository, desc.Digest)
	return exitOK
}

func runPull(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	var rf registryFlags
	rf.register(fs)
	var storeDir string
	registerStore(fs, &storeDir)
	if code, ok := parse(ctx, fs, args, stderr, "[flags] oci://REGISTRY/REPOSITORY:TAG [DIR]"); !ok {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "wasmcp pull: want a reference, and the directory to write the tool into (default: the current one)")
		return exitUsage
	}
	ref, err := oci.ParseReference(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp pull:", err)
		return exitUsage
	}
	dir := "."
	if fs.NArg() == 2 {
		dir = fs.Arg(1)
	}
	store, err := openStore(storeDir)
	var remote *oci.Remote
	if err == nil {
		remote, err = rf.remote()
	}
	var repo oras.ReadOnlyGraphTarget
	if err == nil {
		repo, err = remote.Repository(ref)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp pull:", err)
		return exitFailure
	}
	ctx, cancel := context.WithTimeout(ctx, oci.DefaultPullTimeout)
	defer cancel()
	desc, files, err := oci.Pull(ctx, repo, ref.Reference, store)
	if err == nil {
		err = oci.WriteFiles(dir, files)
	}
	if err != nil {
		fmt.Fprintln(stderr, "wasmcp pull:", err)
		return exitFailure
	}
	for _, f := range files {
		fmt.Fprintln(stdout, filepath.Join(dir, f.Name))
	}
	fmt.Fprintf(stdout, "%s%s/%s@%s\n", oci.Scheme, ref.Registry, ref.Repository, desc.Digest)
	return exitOK
}

// sourceFlags are serve's flags for tools from registries.
type sourceFlags struct {
	registryFlags
	store    string
	refs     listFlag
	interval time.Duration
}

func (f *sourceFlags) register(fs *flag.FlagSet) {
	f.registryFlags.register(fs)
	registerStore(fs, &f.store)
	fs.Var(&f.refs, "source", "serve the tool that `oci://REGISTRY/REPOSITORY:TAG` (or @sha256:DIGEST) names, besides --tools; repeat, or separate with commas, for more")
	fs.DurationVar(&f.interval, "pull-interval", time.Minute, "how often each --source tag is resolved again, a new digest pulled and served (0: pulled once); a failed pull is retried as often, or each minute with 0")
}

// open makes the sources, if there are any: nil without.
func (f *sourceFlags) open() (*oci.Sources, error) {
	if len(f.refs) == 0 {
		return nil, nil
	}
	if f.interval < 0 {
		return nil, errors.New("--pull-interval must not be negative")
	}
	store, err := openStore(f.store)
	if err != nil {
		return nil, err
	}
	remote, err := f.remote()
	if err != nil {
		return nil, err
	}
	return oci.NewSources(f.refs, oci.SourceOptions{
		Store:    store,
		Open:     func(ref registry.Reference) (oras.ReadOnlyGraphTarget, error) { return remote.Repository(ref) },
		Interval: f.interval,
	})
}

// hostSources is what sources serve, as host.Config.Sources gives it.
func hostSources(s *oci.Sources) func() []host.Source {
	return func() []host.Source {
		var out []host.Source
		for _, st := range s.States() {
			out = append(out, host.Source{Name: st.Ref, Dir: st.Dir, Digest: st.Digest, Err: st.Err})
		}
		return out
	}
}

// waitSources waits until every source has been pulled once and what
// is served then has compiled, which is when a server with sources is
// ready. It reports false if ctx ended first.
func waitSources(ctx context.Context, s *oci.Sources, srv *host.Server) bool {
	select {
	case <-s.Pulled():
	case <-ctx.Done():
		return false
	}
	select {
	case <-srv.Warm():
		return true
	case <-ctx.Done():
		return false
	}
}
