package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host/egress"
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

// hostHTTPRequest makes a request for the guest. The answer waits in the
// run's state for http_response; its length goes to *resp_len_ptr, so the
// guest can size a buffer before taking it.
func hostHTTPRequest(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n, lenPtr := api.DecodeU32(stack[0]), api.DecodeU32(stack[1]), api.DecodeU32(stack[2])
	stack[0] = api.EncodeI32(httpRequestCode(ctx, m, ptr, n, lenPtr))
}

func httpRequestCode(ctx context.Context, m api.Module, ptr, n, lenPtr uint32) int32 {
	st, _ := ctx.Value(runStateKey{}).(*runState)
	mem := m.Memory()
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
		msg := "http requests to " + req.URL + ": this tool has no http grant in the server's policy"
		st.denials = append(st.denials, msg)
		return st.answer(mem, lenPtr, abi.ErrDenied, httpAnswer{Error: msg})
	}
	resp, err := st.http.Do(ctx, egress.Request{Method: req.Method, URL: req.URL, Header: req.Headers, Body: body, Secret: req.Secret})
	var denied *egress.Denied
	var limit *egress.LimitError
	switch {
	case errors.As(err, &denied):
		st.denials = append(st.denials, denied.Permission)
		return st.answer(mem, lenPtr, abi.ErrDenied, httpAnswer{Error: err.Error()})
	case errors.As(err, &limit):
		return st.answer(mem, lenPtr, abi.ErrLimit, httpAnswer{Error: err.Error()})
	case errors.Is(err, egress.ErrInvalid):
		return st.answer(mem, lenPtr, abi.ErrInvalid, httpAnswer{Error: err.Error()})
	case err != nil:
		return st.answer(mem, lenPtr, abi.ErrNetwork, httpAnswer{Error: err.Error()})
	}
	a := httpAnswer{Status: resp.Status, Headers: resp.Header}
	if utf8.Valid(resp.Body) {
		s := string(resp.Body)
		a.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(resp.Body)
		a.BodyBase64 = &s
	}
	return st.answer(mem, lenPtr, abi.Ok, a)
}

// answer stores the answer for http_response and writes its length.
func (st *runState) answer(mem api.Memory, lenPtr uint32, code int32, a httpAnswer) int32 {
	b, err := json.Marshal(a)
	if err != nil {
		return abi.ErrInvalid
	}
	st.pending = b
	if !mem.WriteUint32Le(lenPtr, uint32(len(b))) {
		return abi.ErrFault
	}
	return code
}

// hostHTTPResponse copies the waiting answer into the guest's buffer, and
// forgets it.
func hostHTTPResponse(ctx context.Context, m api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	st, _ := ctx.Value(runStateKey{}).(*runState)
	switch {
	case st == nil || st.pending == nil:
		stack[0] = api.EncodeI32(abi.ErrInvalid)
	case uint32(len(st.pending)) > n:
		stack[0] = api.EncodeI32(abi.ErrTooLong)
	case m.Memory() == nil || !m.Memory().Write(ptr, st.pending):
		stack[0] = api.EncodeI32(abi.ErrFault)
	default:
		st.pending = nil
		stack[0] = api.EncodeI32(abi.Ok)
	}
}
