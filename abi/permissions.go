package abi

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/wasmcp/wasmcp/internal/netrule"
)

// Permissions are what a module asks to be given. Asking grants nothing:
// a tool gets only what the operator's policy grants as well (see
// docs/abi.md, "Permissions").
type Permissions struct {
	// Env names environment variables the tool reads.
	Env []string `json:"env,omitempty"`
	// Dirs are directories the tool expects at guest paths.
	Dirs []DirRequest `json:"dirs,omitempty"`
	// HTTP are hosts the tool sends requests to, through wasmcp.http_request.
	HTTP []HTTPRequest `json:"http,omitempty"`
	// Secrets name secrets the host should attach to the tool's requests.
	Secrets []string `json:"secrets,omitempty"`
}

// DirRequest asks for a directory at a guest path.
type DirRequest struct {
	Guest string `json:"guest"`
	Write bool   `json:"write,omitempty"`
}

// HTTPRequest asks to reach a host ("api.example.com", "*.example.com",
// "10.0.0.5") with some methods (none listed: GET and HEAD), written as
// docs/abi.md ("Hosts") says. internal/netrule checks them, as it checks
// the policy's grants and every request.
type HTTPRequest struct {
	Host    string   `json:"host"`
	Methods []string `json:"methods,omitempty"`
}

var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	secretName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)
)

// Check reports the first malformed request.
func (p *Permissions) Check() error {
	for _, e := range p.Env {
		if !envName.MatchString(e) {
			return fmt.Errorf("permissions.env: %q is not a variable name", e)
		}
	}
	seen := map[string]bool{}
	for _, d := range p.Dirs {
		if err := CheckGuestPath(d.Guest); err != nil {
			return fmt.Errorf("permissions.dirs: %w", err)
		}
		if seen[d.Guest] {
			return fmt.Errorf("permissions.dirs: %q is asked for twice", d.Guest)
		}
		seen[d.Guest] = true
	}
	for _, h := range p.HTTP {
		if _, err := netrule.ParsePattern(h.Host); err != nil {
			return fmt.Errorf("permissions.http: %w", err)
		}
		for _, m := range h.Methods {
			if err := netrule.CheckMethod(m); err != nil {
				return fmt.Errorf("permissions.http %s: %w", h.Host, err)
			}
		}
	}
	for _, s := range p.Secrets {
		if !secretName.MatchString(s) {
			return fmt.Errorf("permissions.secrets: %q must match %s", s, secretName)
		}
	}
	return nil
}

// CheckGuestPath requires an absolute, clean path other than "/".
func CheckGuestPath(p string) error {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "/" {
		return fmt.Errorf("guest path %q must be absolute, clean and not /", p)
	}
	return nil
}
