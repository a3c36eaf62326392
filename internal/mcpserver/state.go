package mcpserver

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/schema"
)

// On 2026-07-28 a module's ask ends its request with an
// InputRequiredResult, and the client retries the request with the answer,
// by the ask's id, and the requestState the result carried. The state
// holds what the retry needs of earlier rounds, since no replica keeps
// anything between them: the request it was issued for (its method and
// name, and the digest of its arguments), the answers so far (each with
// the id and the digest of the ask it answers), and an expiry. It is JSON,
// base64url-encoded and signed with HMAC-SHA256, so that no client can
// forge or alter one, and any replica with the key can check it.

// MaxRequestState bounds a requestState, as issued and as accepted. The
// answers it records are bounded by abi.MaxAnswerLen and abi.MaxAsks, and
// together by this.
const MaxRequestState = 256 << 10

// StateLifetime is how long a requestState may be retried with.
const StateLifetime = 10 * time.Minute

// MinStateKey is the shortest key a requestState may be signed with.
const MinStateKey = 32

// stateVersion is the layout of askState; a state of another is refused.
const stateVersion = 2

// MaxSpentStates bounds how many requestStates already retried with a
// server remembers (see spentStates).
const MaxSpentStates = 1 << 16

// askState is what a requestState holds.
type askState struct {
	V       int      `json:"v"`
	For     string   `json:"for"`  // "tools/call NAME", "prompts/get NAME"
	Args    string   `json:"args"` // hex SHA-256 of the canonical arguments
	Expires int64    `json:"exp"`  // Unix seconds
	Nonce   string   `json:"n"`    // what tells this state from every other
	Answers []answer `json:"answers,omitempty"`
}

// answer is the client's answer to one ask: the ask's id and digest.
type answer struct {
	ID     string          `json:"id"`
	Ask    string          `json:"ask"`
	Answer json.RawMessage `json:"answer"`
}

// stateSigner signs and checks requestStates.
type stateSigner struct {
	key   []byte
	now   func() time.Time
	spent spentStates
}

// spentStates are the requestStates retried with, by nonce, until they
// expire: a state is good for one retry, so that an answer (a user's
// "yes, delete it") cannot be replayed to run the tool again. They are
// this process's: a replica refuses a second use of a state only if the
// first reached it too (docs/design.md). Past MaxSpentStates the oldest
// are forgotten first, which leaves them open to a second use for what
// remains of their lifetime; reaching that takes as many runs that ask.
type spentStates struct {
	mu    sync.Mutex
	by    map[string]int64 // nonce → expiry, Unix seconds
	order []spentState     // in the order spent
}

type spentState struct {
	nonce   string
	expires int64
}

// spend records st's use at now, and refuses a second one.
func (sp *spentStates) spend(st *askState, now int64) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.by == nil {
		sp.by = map[string]int64{}
	}
	for len(sp.order) > 0 && (sp.order[0].expires < now || len(sp.order) >= MaxSpentStates) {
		delete(sp.by, sp.order[0].nonce)
		sp.order = sp.order[1:]
	}
	if _, ok := sp.by[st.Nonce]; ok {
		return errors.New("requestState was retried with already: each is good for one retry; retry the call without requestState and inputResponses")
	}
	sp.by[st.Nonce] = st.Expires
	sp.order = append(sp.order, spentState{st.Nonce, st.Expires})
	return nil
}

// unspend forgets the use of the state of nonce, as if it had not been
// retried with.
func (sp *spentStates) unspend(nonce string) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if _, ok := sp.by[nonce]; !ok {
		return
	}
	delete(sp.by, nonce)
	sp.order = slices.DeleteFunc(sp.order, func(s spentState) bool { return s.nonce == nonce })
}

// unspent gives back the state a was opened from if its run made no ask:
// the answers the state holds reached no tool (the server was busy, the
// module failed to compile, or the run ended first), so the retry the
// state is good for is still to come. A run that asked may have acted on
// them, and its state stays spent.
func (s *stateSigner) unspent(a *replayAsker) {
	if a.opened != "" && !a.asked {
		s.spent.unspend(a.opened)
	}
}

// newStateSigner signs with key, of at least MinStateKey bytes, or with a
// random key of this process's own when key is empty: the states it
// issues then hold only for this process.
func newStateSigner(key []byte) *stateSigner {
	if len(key) == 0 {
		key = make([]byte, MinStateKey)
		rand.Read(key)
	}
	return &stateSigner{key: key, now: time.Now}
}

// seal encodes and signs st. A state over MaxRequestState is an error: the
// answers so far are more than one call may carry.
func (s *stateSigner) seal(st *askState) (string, error) {
	st.V = stateVersion
	st.Expires = s.now().Add(StateLifetime).Unix()
	st.Nonce = rand.Text()
	body, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, s.key)
	mac.Write(body)
	out := base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	if len(out) > MaxRequestState {
		return "", fmt.Errorf("the answers to its asks so far would make its requestState %d bytes, over the %d KiB one may have; have the tool ask for less", len(out), MaxRequestState>>10)
	}
	return out, nil
}

// open checks a requestState the client sent back for the request for
// ("tools/call NAME") with arguments of digest args, and decodes it. A
// state opened is spent: it does not open again.
func (s *stateSigner) open(state, what, args string) (*askState, error) {
	if len(state) > MaxRequestState {
		return nil, fmt.Errorf("requestState is %d bytes, over the %d KiB this server issues; retry the call without requestState and inputResponses", len(state), MaxRequestState>>10)
	}
	body64, sig64, ok := strings.Cut(state, ".")
	body, err1 := base64.RawURLEncoding.DecodeString(body64)
	sig, err2 := base64.RawURLEncoding.DecodeString(sig64)
	mac := hmac.New(sha256.New, s.key)
	mac.Write(body)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, errors.New("requestState was not issued by this server, or was altered; retry the call without requestState and inputResponses")
	}
	var st askState
	if err := json.Unmarshal(body, &st); err != nil || st.V != stateVersion {
		return nil, errors.New("requestState has a layout this server does not read; retry the call without requestState and inputResponses")
	}
	switch {
	case st.For != what:
		return nil, fmt.Errorf("requestState was issued for %s, not %s; retry the call without requestState and inputResponses", st.For, what)
	case st.Args != args:
		return nil, errors.New("requestState was issued for a call with other arguments; retry the call without requestState and inputResponses, or with the arguments it was issued for")
	case s.now().Unix() > st.Expires:
		return nil, fmt.Errorf("requestState expired at %s (it holds for %s); retry the call without requestState and inputResponses", time.Unix(st.Expires, 0).UTC().Format(time.RFC3339), StateLifetime)
	}
	if err := s.spent.spend(&st, s.now().Unix()); err != nil {
		return nil, err
	}
	return &st, nil
}

// digest is the hex SHA-256 of parts, each in canonical JSON (keys sorted,
// numbers as written) and separated, so that a retry that re-encodes the
// same values has the same digest.
func digest(parts ...json.RawMessage) (string, error) {
	h := sha256.New()
	for _, p := range parts {
		c, err := canonical(p)
		if err != nil {
			return "", err
		}
		h.Write(c)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// canonical re-encodes JSON with its object keys sorted and its numbers as
// written.
func canonical(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// replayAsker answers the asks of a 2026-07-28 request's run by their
// ids: from the answers its requestState recorded, for the same ask, or
// else from the retry's inputResponses. Asks without an answer end the run
// (sandbox.ErrInputRequired), and are the InputRequiredResult's.
type replayAsker struct {
	need     []string
	caps     *mcp.ClientCapabilities
	recorded map[string]answer
	given    mcp.InputResponseMap
	// opened is the nonce of the requestState the answers recorded came
	// in, if one did, and asked whether the run has asked.
	opened string
	asked  bool
	// used are the answers the run took, for the next requestState;
	// pending are the asks that ended it; fromGiven counts the answers
	// taken from given.
	used      []answer
	pending   mcp.InputRequestMap
	fromGiven int
}

// Ask implements sandbox.Asker.
func (a *replayAsker) Ask(_ context.Context, asks []sandbox.Ask) ([]sandbox.Answer, error) {
	a.asked = true
	answers := make([]sandbox.Answer, len(asks))
	for i, ask := range asks {
		req, err := askable(a.need, a.caps, ask)
		if err != nil {
			answers[i].Err = err
			continue
		}
		d, err := digest(json.RawMessage(strconv.Quote(ask.Method)), ask.Params)
		if err != nil {
			answers[i].Err = &sandbox.AskError{Code: abi.ErrInvalid, Text: "the request is not JSON"}
			continue
		}
		// A recorded answer is for the ask it answered: a tool that asks
		// otherwise under the same id is asked afresh.
		if r, ok := a.recorded[ask.ID]; ok && r.Ask == d {
			a.used = append(a.used, r)
			answers[i].JSON = r.Answer
			continue
		}
		// An answer of another kind is no answer, and the ask is made again.
		if resp, ok := a.given[ask.ID]; ok && answersTo(ask.Method, resp) {
			a.fromGiven++
			if err := conforms(req, resp); err != nil {
				answers[i].Err = err
				continue
			}
			b, err := json.Marshal(resp)
			if err != nil {
				return nil, err
			}
			a.used = append(a.used, answer{ID: ask.ID, Ask: d, Answer: b})
			answers[i].JSON = b
			continue
		}
		if a.pending == nil {
			a.pending = mcp.InputRequestMap{}
		}
		a.pending[ask.ID] = req
	}
	if a.pending != nil {
		return nil, sandbox.ErrInputRequired
	}
	return answers, nil
}

// conforms checks an accepted form's content against the schema the ask
// requested, as the SDK checks a session's answer, so that a tool gets
// the same on both revisions; with the server's own bounded validator,
// since both schema and content come from outside.
func conforms(req mcp.InputRequest, resp mcp.InputResponse) error {
	p, ok := req.(*mcp.ElicitParams)
	r, _ := resp.(*mcp.ElicitResult)
	if !ok || r == nil || r.Action != "accept" || r.Content == nil || p.RequestedSchema == nil {
		return nil
	}
	raw, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return err
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return &sandbox.AskError{Code: abi.ErrInvalid, Text: fmt.Sprintf("the request's requestedSchema: %v", err)}
	}
	content, err := json.Marshal(r.Content)
	if err != nil {
		return err
	}
	violations, err := s.Validate(content)
	if err != nil || len(violations) > 0 {
		text := make([]string, len(violations))
		for i, v := range violations {
			text[i] = v.String()
		}
		return &sandbox.AskError{Code: abi.ErrNetwork, Text: "the client's answer does not match the requested schema: " + strings.Join(text, "; ")}
	}
	return nil
}

// answersTo says whether resp is an answer to an ask of method.
func answersTo(method string, resp mcp.InputResponse) bool {
	switch resp.(type) {
	case *mcp.ElicitResult:
		return method == "elicitation/create"
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return method == "sampling/createMessage"
	case *mcp.ListRootsResult:
		return method == "roots/list"
	}
	return false
}
