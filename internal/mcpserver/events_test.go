package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replay returns what the store gives after index, or its error.
func replay(s *eventStore, session, stream string, index int) ([]string, error) {
	var out []string
	for data, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(data))
	}
	return out, nil
}

func TestEventStoreReplaysAfterAnIndex(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(1<<20, nil, nil)
	s.Open(ctx, "a", "1")
	for _, d := range []string{"", "one", "two", "three"} {
		s.Append(ctx, "a", "1", []byte(d))
	}
	got, err := replay(s, "a", "1", 1)
	if err != nil || !slices.Equal(got, []string{"two", "three"}) {
		t.Errorf("after 1: %q, %v; want [two three]", got, err)
	}
	if got, err := replay(s, "a", "1", 3); err != nil || len(got) != 0 {
		t.Errorf("after the last: %q, %v; want nothing", got, err)
	}
	if _, err := replay(s, "b", "1", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("another session's stream: %v; want ErrEventsPurged", err)
	}
}

// A session that opens stream after stream, each with only an empty
// priming event, must not grow the store past its bound.
func TestEventStoreBoundsStreamsWithoutData(t *testing.T) {
	ctx := context.Background()
	const max = 64 << 10
	s := newEventStore(max, nil, nil)
	for i := range 100_000 {
		id := fmt.Sprint(i)
		s.Open(ctx, "a", id)
		s.Append(ctx, "a", id, nil)
	}
	if s.size > max || len(s.streams) > max/streamOverhead {
		t.Errorf("%d bytes charged, %d streams kept; want at most %d bytes", s.size, len(s.streams), max)
	}
	if _, err := replay(s, "a", "0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("the first stream, long dropped: %v; want ErrEventsPurged", err)
	}
	if _, err := replay(s, "a", "99999", 0); err != nil {
		t.Errorf("the latest stream: %v", err)
	}
}

// The stream with an event most recently keeps its events; the ones
// quiet longest go first.
func TestEventStoreDropsTheStreamsQuietLongest(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(3*(streamOverhead+eventOverhead+100), nil, nil)
	big := make([]byte, 100)
	for _, id := range []string{"old", "mid", "new"} {
		s.Append(ctx, "a", id, big)
	}
	s.Append(ctx, "a", "old", nil) // old is now the most recent
	s.Append(ctx, "a", "extra", big)
	if _, err := replay(s, "a", "mid", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("mid, quiet longest: %v; want it dropped", err)
	}
	if got, err := replay(s, "a", "old", -1); err != nil || len(got) != 2 {
		t.Errorf("old, which had an event since: %d events, %v; want both", len(got), err)
	}
}

// A stream larger than the bound keeps its latest events, and refuses a
// replay from before them rather than give part of it.
func TestEventStoreTrimsAStreamLargerThanItsBound(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(streamOverhead+3*(eventOverhead+10), nil, nil)
	for i := range 10 {
		s.Append(ctx, "a", "1", fmt.Appendf(nil, "event %04d", i))
	}
	if got, err := replay(s, "a", "1", 7); err != nil || !slices.Equal(got, []string{"event 0008", "event 0009"}) {
		t.Errorf("after 7: %q, %v", got, err)
	}
	if _, err := replay(s, "a", "1", 2); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("after 2, since dropped: %v; want ErrEventsPurged", err)
	}
}

func TestEventStoreForgetsAClosedSession(t *testing.T) {
	ctx := context.Background()
	var closed []string
	s := newEventStore(1<<20, nil, func(id string) { closed = append(closed, id) })
	s.Append(ctx, "a", "1", []byte("x"))
	s.Append(ctx, "a", "2", []byte("y"))
	s.Append(ctx, "b", "1", []byte("z"))
	s.SessionClosed(ctx, "a")
	if _, err := replay(s, "a", "1", -1); err == nil {
		t.Error("a closed session's stream is still replayed")
	}
	if got, err := replay(s, "b", "1", -1); err != nil || len(got) != 1 {
		t.Errorf("another session's stream: %q, %v", got, err)
	}
	if want := streamOverhead + eventOverhead + 1; s.size != int64(want) {
		t.Errorf("%d bytes charged; want %d, session b's alone", s.size, want)
	}
	if !slices.Equal(closed, []string{"a"}) {
		t.Errorf("told of closed sessions %q; want [a]", closed)
	}
}

// An answer to a request whose id was swapped is kept with the client's
// id, so that a replay gives it back as written, and its swap ends.
func TestStoredAnswersCarryTheClientsID(t *testing.T) {
	ctx := context.Background()
	ids := newIDSwaps()
	s := newEventStore(1<<20, ids.restoreStored, ids.forgetScope)
	const big = "9007199254740993"
	sub := ids.substitute("a", []byte(big))
	other := ids.substitute("b", []byte(`"é"`))
	s.Append(ctx, "a", "1", fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":%s}}`, sub))
	s.Append(ctx, "a", "1", fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, sub))
	// An answer naming another session's substitute is left alone.
	s.Append(ctx, "a", "1", fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, other))
	got, _ := replay(s, "a", "1", -1)
	want := []string{
		fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":%s}}`, sub),
		`{"jsonrpc":"2.0","id":` + big + `,"result":{}}`,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, other),
	}
	if !slices.Equal(got, want) {
		t.Errorf("kept %q;\nwant %q", got, want)
	}
	if p := ids.pending("a"); len(p) != 0 {
		t.Errorf("swaps of a still pending after its answer: %q", p)
	}
	s.SessionClosed(ctx, "b")
	if p := ids.pending("b"); len(p) != 0 {
		t.Errorf("swaps of b still pending after it closed: %q", p)
	}
}
