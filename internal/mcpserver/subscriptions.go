package mcpserver

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// MaxSubscriptions is the most resource subscriptions one session may hold.
const MaxSubscriptions = 1000

// subscriptions keeps, for each session, the URIs it subscribed to. The
// SDK keeps its own record, which decides who a resources/updated reaches;
// this one bounds each session's, refuses URIs the server does not serve,
// and says which URIs a reload may have changed. Sessions the SDK no longer
// has are forgotten whenever a session subscribes, so an ended session's
// subscriptions are held no longer than until the next subscription.
type subscriptions struct {
	catalog func() *registry.Catalog
	live    func() iter.Seq[*mcp.ServerSession]
	log     *slog.Logger

	mu        sync.Mutex
	bySession map[*mcp.ServerSession]map[string]struct{}
	// fromTemplates are the URIs of templates ever subscribed to. The SDK
	// keeps an entry for each URI subscribed to by a session that ended
	// without unsubscribing, for as long as the server runs; declared
	// resources bound those, but a template matches URIs without end, so
	// their number is bounded here (MaxTemplateURIs).
	fromTemplates map[string]struct{}
}

// MaxTemplateURIs bounds the distinct URIs of resource templates the
// server takes subscriptions to while it runs: at the longest URI, about
// 20 MiB of the SDK's table.
const MaxTemplateURIs = 10000

func newSubscriptions(catalog func() *registry.Catalog, live func() iter.Seq[*mcp.ServerSession], log *slog.Logger) *subscriptions {
	return &subscriptions{catalog: catalog, live: live, log: log, bySession: map[*mcp.ServerSession]map[string]struct{}{}, fromTemplates: map[string]struct{}{}}
}

// subscribe is the SDK's SubscribeHandler: it refuses a URI that no
// resource or template of the catalog in service serves, one longer than
// any a manifest may declare (a template may match a URI of any length,
// and each is held for as long as the subscription), and a session's
// subscription past MaxSubscriptions.
func (s *subscriptions) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if len(uri) > abi.MaxURI {
		return &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("the URI to subscribe to is %d bytes, over the limit of %d: subscribe to a shorter URI", len(uri), abi.MaxURI),
		}
	}
	read, ok := s.catalog().FindRead(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetEnded()
	uris := s.bySession[req.Session]
	if _, ok := uris[uri]; ok {
		return nil
	}
	_, seen := s.fromTemplates[uri]
	if read.Template != nil && !seen && len(s.fromTemplates) >= MaxTemplateURIs {
		return &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("the server has taken subscriptions to %d distinct URIs of resource templates, the most it keeps: subscribe to a resource a module declares, or to one of those URIs", MaxTemplateURIs),
		}
	}
	if len(uris) >= MaxSubscriptions {
		return &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("this session already holds %d resource subscriptions, the most a session may hold: unsubscribe from one (resources/unsubscribe) before subscribing to %s", MaxSubscriptions, uri),
		}
	}
	if uris == nil {
		uris = map[string]struct{}{}
		s.bySession[req.Session] = uris
	}
	uris[uri] = struct{}{}
	if read.Template != nil {
		s.fromTemplates[uri] = struct{}{}
	}
	s.log.Debug("resource subscribed", "uri", uri, "session_subscriptions", len(uris))
	return nil
}

// unsubscribe is the SDK's UnsubscribeHandler. Unsubscribing from a URI
// the session is not subscribed to succeeds and changes nothing.
func (s *subscriptions) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if uris := s.bySession[req.Session]; uris != nil {
		delete(uris, req.Params.URI)
		if len(uris) == 0 {
			delete(s.bySession, req.Session)
		}
	}
	s.log.Debug("resource unsubscribed", "uri", req.Params.URI)
	return nil
}

// forgetEnded drops the subscriptions of sessions the SDK no longer has.
// s.mu is held.
func (s *subscriptions) forgetEnded() {
	live := map[*mcp.ServerSession]bool{}
	for ss := range s.live() {
		live[ss] = true
	}
	for ss := range s.bySession {
		if !live[ss] {
			delete(s.bySession, ss)
		}
	}
}

// changed returns the subscribed URIs that new serves and whose reads may
// answer differently than in old: the resource or template that serves
// the URI is new or changed (a new module version makes new values), or
// another one now serves it. A URI new no longer serves is left out: its
// resource is gone, which the list_changed notification says.
func (s *subscriptions) changed(old, new *registry.Catalog) []string {
	s.mu.Lock()
	uris := map[string]struct{}{}
	for _, us := range s.bySession {
		for u := range us {
			uris[u] = struct{}{}
		}
	}
	s.mu.Unlock()
	var out []string
	for u := range uris {
		after, ok := new.FindRead(u)
		if !ok {
			continue
		}
		if before, ok := old.FindRead(u); ok && before.Resource == after.Resource && before.Template == after.Template {
			continue
		}
		out = append(out, u)
	}
	// In order, so that a client sees them in the same order every time.
	slices.Sort(out)
	return out
}

// notifyUpdated tells the subscribers of each URI that it was updated.
func (s *Server) notifyUpdated(uris []string) {
	for _, u := range uris {
		if err := s.mcp.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil {
			s.log.Warn("could not tell subscribers a resource was updated", "uri", u, "reason", err)
		}
	}
}
