package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/wasmcp/wasmcp/host"
)

// version is the release's version: scripts/release sets it with
// -ldflags "-X main.version=v0.2.0". Unset, it is the module's version
// from the build information (a `go install ...@v0.2.0` sets that), or
// devVersion.
var version string

// devVersion is the version of a build from a checkout.
const devVersion = "0.1.0-dev"

func init() {
	if version == "" {
		bi, _ := debug.ReadBuildInfo()
		version = moduleVersion(bi)
	}
}

// moduleVersion is the main module's version in bi, or devVersion for a
// build from a checkout, which Go calls "(devel)".
func moduleVersion(bi *debug.BuildInfo) string {
	if bi == nil || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return devVersion
	}
	return bi.Main.Version
}

// describeBuild is what `wasmcp version` prints: the version, then the
// revision the binary was built from (when Go recorded it: `go build` in
// a checkout does), then the Go version, platform and engines.
func describeBuild(v string, bi *debug.BuildInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "wasmcp %s\n", v)
	if bi == nil {
		return b.String()
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		var notes []string
		if t := settings["vcs.time"]; t != "" {
			notes = append(notes, "committed "+t)
		}
		if settings["vcs.modified"] == "true" {
			notes = append(notes, "with uncommitted changes")
		}
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "built with %s for %s/%s; engines: %s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH, strings.Join(host.Engines(), ", "))
	return b.String()
}

func runVersion(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if code, ok := parse(ctx, fs, args, stderr, ""); !ok {
		return code
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprint(stdout, describeBuild(version, bi))
	return exitOK
}
