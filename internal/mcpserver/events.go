package mcpserver

import (
	"container/list"
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultEventStoreSize is the default bound of HTTPOptions.EventStoreSize.
const DefaultEventStoreSize = 16 << 20

// Each event and each stream is charged this much on top of its data, for
// the bookkeeping that holds it: without it, a session could open streams
// whose events hold nothing (every stream's priming event is empty) and
// grow the store for ever while its size stayed zero.
const (
	eventOverhead  = 64
	streamOverhead = 256
)

// eventStore keeps the events of 2025-11-25 sessions' SSE streams, so that
// a client that lost a stream may resume it with Last-Event-ID, within a
// bound on the bytes it holds in all. Past the bound, the streams that
// last had an event longest ago are dropped whole, and a resumption of
// one of them is refused (the SDK answers 400): what a bounded store must
// give up, it gives up from the streams least likely to be resumed. A
// stream larger than the bound on its own keeps only its latest events.
//
// The SDK's MemoryEventStore bounds the bytes of events' data only, and
// never forgets a stream: each POST opens one, and its priming event holds
// no data, so a long session's requests would grow it without limit. It
// has no way to drop a stream, so it cannot be wrapped; this implements the
// SDK's EventStore interface instead.
//
// stored rewrites each event's data before it is kept (see
// idSwaps.restoreStored): a replayed answer carries the client's own id.
type eventStore struct {
	max    int64
	stored func(sessionID string, data []byte) []byte
	closed func(sessionID string)

	mu      sync.Mutex
	size    int64
	streams map[streamKey]*list.Element // of *storedStream
	order   *list.List                  // of *storedStream, least recent first
	// bySession counts each session's streams, so that SessionClosed finds
	// them without a scan of every stream.
	bySession map[string]map[string]*list.Element
}

type streamKey struct{ session, stream string }

// storedStream holds the events of one stream kept: data[i] is the event
// of index first+i.
type storedStream struct {
	key   streamKey
	first int
	data  [][]byte
	size  int64 // charged for it, overheads included
}

var _ mcp.EventStore = (*eventStore)(nil)

func newEventStore(max int64, stored func(string, []byte) []byte, closed func(string)) *eventStore {
	return &eventStore{
		max:       max,
		stored:    stored,
		closed:    closed,
		streams:   map[streamKey]*list.Element{},
		order:     list.New(),
		bySession: map[string]map[string]*list.Element{},
	}
}

// Open implements mcp.EventStore.
func (s *eventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stream(streamKey{sessionID, streamID})
	s.trim()
	return nil
}

// stream returns the stream of k, made if there is none, as the most
// recent; s.mu is held.
func (s *eventStore) stream(k streamKey) *storedStream {
	if e, ok := s.streams[k]; ok {
		s.order.MoveToBack(e)
		return e.Value.(*storedStream)
	}
	st := &storedStream{key: k, size: streamOverhead}
	e := s.order.PushBack(st)
	s.streams[k] = e
	if s.bySession[k.session] == nil {
		s.bySession[k.session] = map[string]*list.Element{}
	}
	s.bySession[k.session][k.stream] = e
	s.size += st.size
	return st
}

// Append implements mcp.EventStore. The stream need not be open: one that
// was dropped starts again, and its earlier events stay gone.
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	if len(data) > 0 && s.stored != nil {
		data = s.stored(sessionID, data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stream(streamKey{sessionID, streamID})
	st.data = append(st.data, data)
	charge := int64(len(data)) + eventOverhead
	st.size += charge
	s.size += charge
	s.trim()
	return nil
}

// trim drops the least recent streams, and then the oldest events of the
// most recent one, until the store is within its bound; s.mu is held.
func (s *eventStore) trim() {
	for s.size > s.max && s.order.Len() > 1 {
		s.remove(s.order.Front())
	}
	if s.order.Len() == 0 {
		return
	}
	st := s.order.Front().Value.(*storedStream)
	for s.size > s.max && len(st.data) > 1 {
		charge := int64(len(st.data[0])) + eventOverhead
		st.data[0] = nil
		st.data = st.data[1:]
		st.first++
		st.size -= charge
		s.size -= charge
	}
}

// remove drops the stream of e; s.mu is held.
func (s *eventStore) remove(e *list.Element) {
	st := s.order.Remove(e).(*storedStream)
	delete(s.streams, st.key)
	if byStream := s.bySession[st.key.session]; byStream != nil {
		delete(byStream, st.key.stream)
		if len(byStream) == 0 {
			delete(s.bySession, st.key.session)
		}
	}
	s.size -= st.size
}

// After implements mcp.EventStore. A stream that was dropped, or whose
// events after index were, is an error: the SDK must not replay part of
// a stream.
func (s *eventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var (
		events [][]byte
		err    error
	)
	e, ok := s.streams[streamKey{sessionID, streamID}]
	switch {
	case !ok:
		err = fmt.Errorf("stream %q of this session is not kept (the server keeps %d bytes of events in all): %w", streamID, s.max, mcp.ErrEventsPurged)
	default:
		st := e.Value.(*storedStream)
		start := index + 1 - st.first
		switch {
		case start < 0:
			err = fmt.Errorf("the events of stream %q after %d are no longer kept: %w", streamID, index, mcp.ErrEventsPurged)
		case start < len(st.data):
			// A copy: trim clears the slots of events it drops.
			events = append([][]byte(nil), st.data[start:]...)
		}
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range events {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements mcp.EventStore.
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	for _, e := range s.bySession[sessionID] {
		s.remove(e)
	}
	s.mu.Unlock()
	if s.closed != nil {
		s.closed(sessionID)
	}
	return nil
}
