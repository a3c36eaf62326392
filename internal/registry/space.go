package registry

import (
	"fmt"
	"log/slog"
	"strings"
)

// space is the part of the URI space that a resource or template serves:
// all the URIs of its scheme (whole), or those of one authority
// ("notes://work" serves "notes://work/..."), or, for a resource whose
// URI has no authority ("urn:isbn:1"), that URI alone.
//
// Two spaces of different keys in one scheme share no URI: a URI has one
// authority, and a template names its authority only when its literal
// start ends the authority ("/", "?" or "#") before any variable. A
// template whose variables may reach into the scheme part or the authority
// ("notes://{name}", "notes:{+path}") serves the whole scheme.
type space struct {
	scheme string // lower case, as URI schemes compare
	key    string // scheme and authority, or the URI; "" when whole
}

// spaceOf is the space of a resource URI or, when template, of a URI
// template. Both start with a scheme (abi checks them).
func spaceOf(uri string, template bool) space {
	literal := uri
	if template {
		literal, _, _ = strings.Cut(uri, "{")
	}
	scheme, rest, _ := strings.Cut(literal, ":")
	scheme = strings.ToLower(scheme)
	after, hierarchical := strings.CutPrefix(rest, "//")
	switch end := strings.IndexAny(after, "/?#"); {
	case hierarchical && end >= 0:
		return space{scheme: scheme, key: scheme + "://" + after[:end]}
	case template:
		return space{scheme: scheme}
	case hierarchical:
		return space{scheme: scheme, key: scheme + "://" + after}
	default:
		return space{scheme: scheme, key: scheme + ":" + rest}
	}
}

// spaces records which module serves each part of the URI space, so that
// no module serves URIs another module serves: a template of one module
// matching a URI another's resource or template serves would run the one
// module's code for reads meant for the other.
type spaces struct {
	whole map[string]*Module   // by scheme: the module serving all of it
	keys  map[string]*Module   // by space key: the module serving it
	users map[string][]*Module // by scheme: the modules serving any of it, in the order they came
}

// owner returns another module than m that serves part of s, if any.
func (sp *spaces) owner(m *Module, s space) *Module {
	if o := sp.whole[s.scheme]; o != nil && o != m {
		return o
	}
	if s.key != "" {
		if o := sp.keys[s.key]; o != nil && o != m {
			return o
		}
		return nil
	}
	for _, o := range sp.users[s.scheme] {
		if o != m {
			return o
		}
	}
	return nil
}

// claim gives s to m unless another module serves part of it, which is
// recorded as m's load error naming both files. Modules are claimed for
// one after another, so the file whose name sorts first keeps a space.
func (sp *spaces) claim(c *Catalog, m *Module, uri string, template bool, kind string, log *slog.Logger) bool {
	if sp.whole == nil {
		sp.whole, sp.keys, sp.users = map[string]*Module{}, map[string]*Module{}, map[string][]*Module{}
	}
	s := spaceOf(uri, template)
	if o := sp.owner(m, s); o != nil {
		served := s.key
		if served == "" {
			served = s.scheme + ":"
		}
		err := fmt.Errorf("%s %q serves URIs of %s, part of which %s serves; a module may serve only URIs no other module serves, so this one is not served: give it a URI scheme or authority of its own", kind, uri, served, o.Path)
		log.Warn("resource URIs served by another module", "file", m.Path, "uri", uri, "kept", o.Path)
		c.Errors = append(c.Errors, LoadError{Path: m.Path, Err: err})
		return false
	}
	if s.key == "" {
		sp.whole[s.scheme] = m
	} else {
		sp.keys[s.key] = m
	}
	// A module's items come one after another, so m is new to the scheme
	// unless it is the last to use it.
	if users := sp.users[s.scheme]; len(users) == 0 || users[len(users)-1] != m {
		sp.users[s.scheme] = append(users, m)
	}
	return true
}
