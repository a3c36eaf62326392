package abi

import (
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"
)

// MaxResources bounds the resources, and separately the resource
// templates, one module may declare.
const MaxResources = 256

// MaxURI bounds a resource's URI and a template's uriTemplate, in bytes:
// what common HTTP servers and browsers accept in a URL.
const MaxURI = 2048

// MaxText bounds the bytes of a name, title or MIME type.
const MaxText = 256

// MaxIcons bounds the icons of one resource or template.
const MaxIcons = 16

// MaxStatic bounds the static contents of one resource, in bytes of text or
// of decoded blob. A manifest is read whole before anything is served, so
// its static contents are held for as long as it is loaded.
const MaxStatic = 256 << 10

// EntryReadResource is argv[1] of a run that reads one of the module's
// resources (docs/abi.md, "Reading a resource"). No tool may have this
// name.
const EntryReadResource = "resources/read"

// reserved are the argv[1] values of the module's entry points other than
// its tools.
var reserved = []string{EntryReadResource, EntryGetPrompt, EntryComplete}

// Resource is a resource the module serves: MCP's Resource, plus the
// static contents a resource may carry in the manifest.
type Resource struct {
	URI         string               `json:"uri"`
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	MIMEType    string               `json:"mimeType,omitempty"`
	Size        int64                `json:"size,omitempty"`
	Annotations *ResourceAnnotations `json:"annotations,omitempty"`
	Icons       []Icon               `json:"icons,omitempty"`
	Meta        Meta                 `json:"_meta,omitempty"`
	// Text is the resource's contents as text; nil when it has none.
	Text *string `json:"text,omitempty"`
	// Blob is the resource's contents as bytes, base64 in JSON.
	Blob []byte `json:"blob,omitempty"`
}

// Static says whether the resource's contents are in the manifest, so that
// reading it runs no code.
func (r *Resource) Static() bool { return r.Text != nil || r.Blob != nil }

// ResourceTemplate is a family of resources the module serves, their URIs
// given by an RFC 6570 template. Reading one always runs the module.
type ResourceTemplate struct {
	URITemplate string               `json:"uriTemplate"`
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	MIMEType    string               `json:"mimeType,omitempty"`
	Annotations *ResourceAnnotations `json:"annotations,omitempty"`
	Icons       []Icon               `json:"icons,omitempty"`
	Meta        Meta                 `json:"_meta,omitempty"`
	// Completions are the values completion/complete offers, by variable.
	Completions map[string][]string `json:"completions,omitempty"`
	// Complete, when CompleteModule, has the module's completion/complete
	// entry point offer values for the variables Completions lacks.
	Complete string `json:"complete,omitempty"`
}

// ResourceAnnotations are MCP's annotations of a resource: advice to
// clients, never trusted by the server.
type ResourceAnnotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Icon is an image a client may show for a resource.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

func (m *Manifest) checkResources() error {
	if len(m.Resources) > MaxResources {
		return fmt.Errorf("manifest declares %d resources, over the limit of %d", len(m.Resources), MaxResources)
	}
	if len(m.ResourceTemplates) > MaxResources {
		return fmt.Errorf("manifest declares %d resource templates, over the limit of %d", len(m.ResourceTemplates), MaxResources)
	}
	seen := make(map[string]bool, len(m.Resources))
	for i := range m.Resources {
		r := &m.Resources[i]
		if err := r.check(); err != nil {
			return fmt.Errorf("resource %d (%q): %w", i, r.URI, err)
		}
		if seen[r.URI] {
			return fmt.Errorf("resource %q is declared twice", r.URI)
		}
		seen[r.URI] = true
	}
	seen = make(map[string]bool, len(m.ResourceTemplates))
	for i := range m.ResourceTemplates {
		t := &m.ResourceTemplates[i]
		if err := t.check(); err != nil {
			return fmt.Errorf("resource template %d (%q): %w", i, t.URITemplate, err)
		}
		if seen[t.URITemplate] {
			return fmt.Errorf("resource template %q is declared twice", t.URITemplate)
		}
		seen[t.URITemplate] = true
	}
	return nil
}

func (r *Resource) check() error {
	if err := checkURI(r.URI); err != nil {
		return err
	}
	if err := checkDescriptive(r.Name, r.Title, r.MIMEType, r.Annotations, r.Icons); err != nil {
		return err
	}
	if err := r.Meta.check(); err != nil {
		return err
	}
	if err := r.Meta.resourceUI(r.URI); err != nil {
		return err
	}
	if r.Size < 0 {
		return errors.New(`"size" must not be negative`)
	}
	switch {
	case r.Text != nil && r.Blob != nil:
		return errors.New(`a resource has "text" or "blob" contents, not both`)
	case r.Text != nil && len(*r.Text) > MaxStatic:
		return fmt.Errorf(`"text" is %d bytes, over the %d-byte limit of static contents: serve larger contents from the module`, len(*r.Text), MaxStatic)
	case len(r.Blob) > MaxStatic:
		return fmt.Errorf(`"blob" is %d bytes once decoded, over the %d-byte limit of static contents: serve larger contents from the module`, len(r.Blob), MaxStatic)
	}
	return nil
}

func (t *ResourceTemplate) check() error {
	if err := checkLength("uriTemplate", t.URITemplate, MaxURI); err != nil {
		return err
	}
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf(`"uriTemplate" is not an RFC 6570 URI template: %v`, err)
	}
	if len(tmpl.Varnames()) == 0 {
		return errors.New(`"uriTemplate" has no variables: declare a fixed URI under "resources"`)
	}
	// The scheme is the template's literal start, before any expression.
	literal, _, _ := strings.Cut(t.URITemplate, "{")
	if scheme, _, ok := strings.Cut(literal, ":"); !ok || !validScheme(scheme) {
		return errors.New(`"uriTemplate" must start with a URI scheme ("invoices://{id}"), before any variable`)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Completions)) {
		if !slices.Contains(tmpl.Varnames(), name) {
			return fmt.Errorf(`"completions" names %q, which is not a variable of the template`, name)
		}
		if err := checkCompletions(t.Completions[name]); err != nil {
			return fmt.Errorf("variable %q: %w", name, err)
		}
	}
	if err := checkComplete(t.Complete); err != nil {
		return err
	}
	if err := t.Meta.check(); err != nil {
		return err
	}
	if err := t.Meta.checkUIKey("resource template"); err != nil {
		return err
	}
	return checkDescriptive(t.Name, t.Title, t.MIMEType, t.Annotations, t.Icons)
}

// checkURI requires an absolute URI, as MCP does of a resource's.
func checkURI(uri string) error {
	if err := checkLength("uri", uri, MaxURI); err != nil {
		return err
	}
	u, err := url.Parse(uri)
	if err != nil {
		return fmt.Errorf(`"uri" is not a URI: %v`, err)
	}
	if u.Scheme == "" {
		return errors.New(`"uri" must be absolute, with a scheme ("invoices://all")`)
	}
	return nil
}

func validScheme(s string) bool {
	u, err := url.Parse(s + ":x")
	return err == nil && u.Scheme != "" && strings.EqualFold(u.Scheme, s)
}

func checkDescriptive(name, title, mimeType string, a *ResourceAnnotations, icons []Icon) error {
	if strings.TrimSpace(name) == "" {
		return errors.New(`"name" is required`)
	}
	for _, f := range [...]struct{ field, v string }{{"name", name}, {"title", title}, {"mimeType", mimeType}} {
		if err := checkLength(f.field, f.v, MaxText); err != nil {
			return err
		}
	}
	if err := CheckMIME(mimeType); err != nil {
		return err
	}
	if a != nil {
		if err := a.check(); err != nil {
			return err
		}
	}
	return checkIcons(icons)
}

// checkIcons checks the icons of a tool, resource, template or prompt.
func checkIcons(icons []Icon) error {
	if len(icons) > MaxIcons {
		return fmt.Errorf("%d icons, over the limit of %d", len(icons), MaxIcons)
	}
	for i := range icons {
		if err := icons[i].check(); err != nil {
			return fmt.Errorf("icon %d: %w", i, err)
		}
	}
	return nil
}

func (a *ResourceAnnotations) check() error {
	if len(a.Audience) > 2 {
		return errors.New(`"annotations.audience" lists each of "user" and "assistant" at most once`)
	}
	for _, r := range a.Audience {
		if r != "user" && r != "assistant" {
			return fmt.Errorf(`"annotations.audience" may hold "user" and "assistant", not %q`, r)
		}
	}
	if p := a.Priority; p != nil && (*p < 0 || *p > 1) {
		return fmt.Errorf(`"annotations.priority" must be from 0 to 1, not %v`, *p)
	}
	if a.LastModified != "" {
		if _, err := time.Parse(time.RFC3339, a.LastModified); err != nil {
			return fmt.Errorf(`"annotations.lastModified" must be an ISO 8601 time such as "2026-01-12T15:00:58Z", not %q`, a.LastModified)
		}
	}
	return nil
}

func (i *Icon) check() error {
	if err := checkLength("src", i.Src, MaxURI); err != nil {
		return err
	}
	u, err := url.Parse(i.Src)
	if err != nil || (u.Scheme != "https" && u.Scheme != "data") {
		return errors.New(`"src" must be an https: or data: URI`)
	}
	if err := CheckMIME(i.MIMEType); err != nil {
		return err
	}
	if len(i.Sizes) > MaxIcons {
		return fmt.Errorf(`%d "sizes", over the limit of %d`, len(i.Sizes), MaxIcons)
	}
	for _, s := range i.Sizes {
		if err := checkLength("sizes", s, 32); err != nil {
			return err
		}
	}
	switch i.Theme {
	case "", "light", "dark":
	default:
		return fmt.Errorf(`"theme" must be "light" or "dark", not %q`, i.Theme)
	}
	return nil
}

// CheckMIME requires a MIME type, type/subtype and parameters, or none.
func CheckMIME(v string) error {
	if v == "" {
		return nil
	}
	if t, _, err := mime.ParseMediaType(v); err != nil || !strings.Contains(t, "/") {
		return fmt.Errorf(`"mimeType" %q is not a MIME type such as "text/plain"`, v)
	}
	return nil
}

// checkLength bounds a string field, and requires it to be text: no
// control characters, which a client would show or log as they are.
func checkLength(field, v string, limit int) error {
	if len(v) > limit {
		return fmt.Errorf("%q is %d bytes, over the limit of %d", field, len(v), limit)
	}
	if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%q must be text without control characters", field)
	}
	return nil
}
