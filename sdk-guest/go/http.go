package guest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Request is an HTTP request for the host to make on the tool's behalf.
// The tool has no network of its own: the host checks every request
// against the operator's grants.
type Request struct {
	Method  string // GET when empty
	URL     string
	Headers map[string]string
	Body    []byte
	// Secret names a secret the operator bound to the URL's host; the host
	// adds it (typically as an Authorization header) and the tool never
	// sees its value.
	Secret string
}

// Response is what the host got back.
type Response struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// HTTPError is a request the host refused (Denied) or could not complete.
type HTTPError struct {
	Denied  bool
	Message string
}

func (e *HTTPError) Error() string { return e.Message }

// wireRequest and wireAnswer are the JSON of docs/abi.md's http_request.
// internal/sandbox has its own copy on purpose: this package must build with
// nothing but the standard library, since `wasmcp new` copies it into
// folders outside this module.
type wireRequest struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
	Body       *string           `json:"body,omitempty"`
	BodyBase64 *string           `json:"body_base64,omitempty"`
	Secret     string            `json:"secret,omitempty"`
}

type wireAnswer struct {
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers"`
	Body       *string           `json:"body"`
	BodyBase64 *string           `json:"body_base64"`
	Error      string            `json:"error"`
}

// Fetch has the host make an HTTP request. A refusal or failure comes back
// as an *HTTPError whose message says what was missing or what went wrong.
func Fetch(req Request) (*Response, error) {
	if req.Method == "" {
		req.Method = "GET"
	}
	w := wireRequest{Method: req.Method, URL: req.URL, Headers: req.Headers, Secret: req.Secret}
	if req.Body != nil {
		if utf8.Valid(req.Body) {
			s := string(req.Body)
			w.Body = &s
		} else {
			s := base64.StdEncoding.EncodeToString(req.Body)
			w.BodyBase64 = &s
		}
	}
	data, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	code, answer := hostHTTP(data)
	var a wireAnswer
	if err := json.Unmarshal(answer, &a); err != nil && code == Ok {
		return nil, fmt.Errorf("wasmcp host: unreadable http answer: %v", err)
	}
	if code != Ok {
		msg := a.Error
		if msg == "" {
			msg = (&HostError{Code: code}).Error()
		}
		return nil, &HTTPError{Denied: code == ErrDenied, Message: msg}
	}
	resp := &Response{Status: a.Status, Headers: a.Headers}
	switch {
	case a.Body != nil:
		resp.Body = []byte(*a.Body)
	case a.BodyBase64 != nil:
		if resp.Body, err = base64.StdEncoding.DecodeString(*a.BodyBase64); err != nil {
			return nil, fmt.Errorf("wasmcp host: bad body_base64: %v", err)
		}
	}
	return resp, nil
}
