package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/egress"
	"github.com/wasmcp/wasmcp/internal/jsonsize"
)

// HTTPDoer makes a guest's HTTP requests; egress.Client is the one used.
type HTTPDoer interface {
	Do(ctx context.Context, req egress.Request) (*egress.Response, error)
}

// httpRequest is the JSON a guest passes to http_request.
type httpRequest struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       *string           `json:"body,omitempty"`
	BodyBase64 *string           `json:"body_base64,omitempty"`
	Secret     string            `json:"secret,omitempty"`
}

// httpAnswer is the JSON http_response hands back: a response, or why
// there is none.
type httpAnswer struct {
	Status     int               `json:"status,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       *string           `json:"body,omitempty"`
	BodyBase64 *string           `json:"body_base64,omitempty"`
	Error      string            `json:"error,omitempty"`
}

// httpRequest is wasmcp.http_request: it makes a request for the guest.
// The answer waits in the run's state for http_response; its length goes
// to *lenPtr, so the guest can size a buffer before taking it.
func (st *runState) httpRequest(ctx context.Context, mem guestMemory, ptr, n, lenPtr uint32) int32 {
	if st == nil || mem == nil {
		return abi.ErrDenied
	}
	if n > abi.MaxHTTPRequestLen {
		return abi.ErrTooLong
	}
	view, ok := mem.Read(ptr, n)
	if !ok {
		return abi.ErrFault
	}
	if _, ok := mem.Read(lenPtr, 4); !ok {
		return abi.ErrFault
	}
	var req httpRequest
	if err := json.Unmarshal(view, &req); err != nil {
		return st.answer(mem, lenPtr, abi.ErrInvalid, httpAnswer{Error: "the request is not valid JSON: " + err.Error()})
	}
	body := []byte(nil)
	switch {
	case req.Body != nil && req.BodyBase64 != nil:
		return st.answer(mem, lenPtr, abi.ErrInvalid, httpAnswer{Error: "give body or body_base64, not both"})
	case req.Body != nil:
		body = []byte(*req.Body)
	case req.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*req.BodyBase64)
		if err != nil {
			return st.answer(mem, lenPtr, abi.ErrInvalid, httpAnswer{Error: "body_base64 is not base64"})
		}
		body = b
	}
	if st.http == nil {
		// The guest chose the URL, and its length: what it is told and
		// what is kept of it are cut alike.
		msg := clip("http requests to "+req.URL+": this tool has no http grant in the server's policy", MaxDenialLen)
		st.denials.Add(msg)
		return st.answer(mem, lenPtr, abi.ErrDenied, httpAnswer{Error: msg})
	}
	resp, err := st.http.Do(ctx, egress.Request{Method: req.Method, URL: req.URL, Header: req.Headers, Body: body, Secret: req.Secret})
	if err != nil {
		var denied *egress.Denied
		if errors.As(err, &denied) {
			st.denials.Add(denied.Permission)
		}
		return st.answer(mem, lenPtr, httpCode(err), httpAnswer{Error: err.Error()})
	}
	// The answer waits in the host until the guest takes it, and a body
	// of control characters takes six times its size as a JSON string:
	// one the guest's memory could never hold is refused before it is
	// made.
	text := utf8.Valid(resp.Body)
	field, size := "body_base64", base64.StdEncoding.EncodedLen(len(resp.Body))+2
	if text {
		field, size = "body", jsonsize.String(resp.Body)
	}
	if int64(size) > st.maxAnswer {
		return st.answer(mem, lenPtr, abi.ErrNetwork, httpAnswer{Error: fmt.Sprintf(
			"the response's body of %s would take %s as the answer's %s, more than this tool's memory limit of %s could ever hold; ask for less (a smaller page or range), or have the server's operator raise the tool's memory limit",
			bytesText(uint64(len(resp.Body))), bytesText(uint64(size)), field, bytesText(uint64(st.maxAnswer)))})
	}
	a := httpAnswer{Status: resp.Status, Headers: resp.Header}
	if text {
		s := string(resp.Body)
		a.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(resp.Body)
		a.BodyBase64 = &s
	}
	return st.answer(mem, lenPtr, abi.Ok, a)
}

// httpCode is the result code of a request egress did not complete: each
// kind of its errors is one code of docs/abi.md. An allowance of the call
// used up is ErrLimit; a limit on one request's size is ErrTooLong; a
// response the host will not hand over, too large or redirected too often,
// is ErrNetwork, like one that never came.
func httpCode(err error) int32 {
	var denied *egress.Denied
	var limit *egress.LimitError
	switch {
	case errors.As(err, &denied):
		return abi.ErrDenied
	case errors.As(err, &limit):
		return abi.ErrLimit
	case errors.Is(err, egress.ErrInvalid):
		return abi.ErrInvalid
	case errors.Is(err, egress.ErrTooLong):
		return abi.ErrTooLong
	}
	return abi.ErrNetwork
}

// answer stores the answer for http_response and writes its length.
func (st *runState) answer(mem guestMemory, lenPtr uint32, code int32, a httpAnswer) int32 {
	b, err := json.Marshal(a)
	if err != nil {
		return abi.ErrInvalid
	}
	return st.hold(&st.pending, mem, lenPtr, code, b)
}

// hold keeps b in *slot, where http_response or ask_response takes it,
// and writes its length at lenPtr; code is what the guest gets.
func (st *runState) hold(slot *[]byte, mem guestMemory, lenPtr uint32, code int32, b []byte) int32 {
	*slot = b
	if !mem.WriteUint32Le(lenPtr, uint32(len(b))) {
		return abi.ErrFault
	}
	return code
}

// httpResponse is wasmcp.http_response: it copies the waiting answer into
// the guest's buffer, and forgets it.
func (st *runState) httpResponse(mem guestMemory, ptr, n uint32) int32 {
	if st == nil {
		return abi.ErrInvalid
	}
	return take(&st.pending, mem, ptr, n)
}

// take copies the answer waiting in *slot into the guest's buffer, if it
// fits, and forgets it.
func take(slot *[]byte, mem guestMemory, ptr, n uint32) int32 {
	switch {
	case *slot == nil:
		return abi.ErrInvalid
	case uint32(len(*slot)) > n:
		return abi.ErrTooLong
	case mem == nil || !mem.Write(ptr, *slot):
		return abi.ErrFault
	}
	*slot = nil
	return abi.Ok
}
