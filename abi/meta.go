package abi

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MaxMeta bounds the encoded size of one _meta object in a manifest.
const MaxMeta = 16 << 10

// Meta is the _meta of a tool, resource, resource template or prompt: what
// the server passes on to clients as the module wrote it. Each key is
// namespaced ("example.com/key"), so that a module's keys cannot be taken
// for MCP's own; a prefix MCP reserves ("io.modelcontextprotocol/",
// "mcp.dev/" and the like) is refused, and so is any key without a prefix,
// but UIKey.
type Meta map[string]json.RawMessage

// UIKey is the one _meta key without a prefix a manifest may use: MCP
// Apps' (the io.modelcontextprotocol/ui extension), which links a tool to
// the ui:// resource that is its interface, and says how a client shows a
// ui:// resource.
const UIKey = "ui"

// UIMIMEType is the MIME type of an MCP Apps interface: HTML that a client
// renders in a sandboxed frame.
const UIMIMEType = "text/html;profile=mcp-app"

// metaKey is _meta's key format: an optional prefix of dot-separated
// labels ending in a slash, then a name that begins and ends with a letter
// or digit.
var (
	metaPrefix = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)
	metaName   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
)

func (m Meta) check() error {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf(`"_meta": %w`, err)
	}
	if len(b) > MaxMeta {
		return fmt.Errorf(`"_meta" is %s, over the limit of %s`, Size(len(b)), Size(MaxMeta))
	}
	for key := range m {
		if key == UIKey {
			continue
		}
		prefix, name, ok := strings.Cut(key, "/")
		if !ok {
			return fmt.Errorf(`"_meta" key %q has no prefix: name it as yours, such as "example.com/%s"`, key, key)
		}
		if !metaPrefix.MatchString(prefix) || !metaName.MatchString(name) {
			return fmt.Errorf(`"_meta" key %q is not a prefix of dot-separated labels, a slash and a name of letters, digits and "._-"`, key)
		}
		if reservedPrefix(prefix) {
			return fmt.Errorf(`"_meta" key %q: the prefix %q is reserved for MCP itself`, key, prefix+"/")
		}
		if prefix == UIKey {
			// MCP Apps' earlier, flat keys ("ui/resourceUri"), which clients
			// still read: only _meta.ui, which is checked, may link to an
			// interface.
			return fmt.Errorf(`"_meta" key %q: the prefix "ui/" is MCP Apps'; link a tool to its interface with "_meta": {"ui": {"resourceUri": ...}}`, key)
		}
	}
	return nil
}

// reservedPrefix reports whether prefix is MCP's: one with a label
// "modelcontextprotocol" or "mcp". The specification reserves those with a
// label after it ("mcp.dev/"), and uses "io.modelcontextprotocol/" for its
// own keys (the 2026-07-28 request _meta among them), so both are refused.
func reservedPrefix(prefix string) bool {
	for l := range strings.SplitSeq(strings.ToLower(prefix), ".") {
		if l == "modelcontextprotocol" || l == "mcp" {
			return true
		}
	}
	return false
}

// ToolUI is what a tool's _meta.ui holds: the interface that goes with it.
type ToolUI struct {
	// ResourceURI names a ui:// resource the same module declares.
	ResourceURI string `json:"resourceUri"`
	// Visibility says who may call the tool: "model", "app", or both (the
	// default).
	Visibility []string `json:"visibility,omitempty"`
}

// checkToolUI checks a tool's _meta.ui, if it has one, and any other key
// whose value is a ui:// URI (as other app kits name a tool's interface,
// "openai/outputTemplate"): each must be an interface of the module's own.
// resources are the URIs the module declares, with their MIME types.
func (m Meta) checkToolUI(resources map[string]string) error {
	for key, raw := range m {
		var uri string
		if key == UIKey || json.Unmarshal(raw, &uri) != nil || !strings.HasPrefix(uri, "ui://") {
			continue
		}
		if err := ownInterface(fmt.Sprintf("_meta.%s", key), uri, resources); err != nil {
			return err
		}
	}
	raw, ok := m[UIKey]
	if !ok {
		return nil
	}
	if _, err := members("tool ui", raw); err != nil {
		return fmt.Errorf(`"_meta.ui": %w`, err)
	}
	var ui ToolUI
	if err := json.Unmarshal(raw, &ui); err != nil {
		return fmt.Errorf(`"_meta.ui" must be an object with "resourceUri" and "visibility": %w`, err)
	}
	if !strings.HasPrefix(ui.ResourceURI, "ui://") {
		return fmt.Errorf(`"_meta.ui.resourceUri" must be a ui:// URI, not %q`, ui.ResourceURI)
	}
	if err := ownInterface("_meta.ui.resourceUri", ui.ResourceURI, resources); err != nil {
		return err
	}
	for _, v := range ui.Visibility {
		if v != "model" && v != "app" {
			return fmt.Errorf(`"_meta.ui.visibility" may hold "model" and "app", not %q`, v)
		}
	}
	if len(ui.Visibility) > 2 || len(ui.Visibility) == 2 && ui.Visibility[0] == ui.Visibility[1] {
		return errors.New(`"_meta.ui.visibility" lists each of "model" and "app" at most once`)
	}
	return nil
}

// resourceUI checks a ui:// resource's _meta.ui, which only such a
// resource may have: an object, which the client reads (its content
// security policy, permissions, border).
func (m Meta) resourceUI(uri string) error {
	raw, ok := m[UIKey]
	if !ok {
		return nil
	}
	if !strings.HasPrefix(uri, "ui://") {
		return errors.New(`"_meta.ui" belongs to ui:// resources only`)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return errors.New(`"_meta.ui" must be an object`)
	}
	return nil
}

// ownInterface requires uri, the value of field, to be an interface the
// module declares among resources.
func ownInterface(field, uri string, resources map[string]string) error {
	mime, declared := resources[uri]
	if !declared {
		return fmt.Errorf(`%q %q is not a resource this module declares: a tool's interface is its own module's`, field, uri)
	}
	if mime != UIMIMEType {
		return fmt.Errorf(`%q %q has MIME type %q; an interface's is %q`, field, uri, mime, UIMIMEType)
	}
	return nil
}

// checkUIKey refuses _meta.ui where MCP Apps gives it no meaning.
func (m Meta) checkUIKey(kind string) error {
	if _, ok := m[UIKey]; ok {
		return fmt.Errorf(`"_meta.ui" has no meaning on a %s: only tools and ui:// resources have one`, kind)
	}
	return nil
}
