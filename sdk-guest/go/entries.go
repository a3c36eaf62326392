package guest

import (
	"errors"
)

// The names of a module's entry points other than its tools: the host
// starts the module with one of them as argv[1] (docs/abi.md, "Reading a
// resource", "Getting a prompt" and "Completions"). No tool may have them.
const (
	EntryReadResource = "resources/read"
	EntryGetPrompt    = "prompts/get"
	EntryComplete     = "completion/complete"
)

// ReadRequest is what the host asks of a module's resources/read.
type ReadRequest struct {
	// URI is the URI read: a resource's the manifest declares without
	// contents, or one of its templates matched.
	URI string `json:"uri"`
	// Arguments are the template's variables, as the URI gave them; empty
	// for a declared resource. (An exploded variable with several values,
	// such as {/path*}, arrives as a JSON list, which this map cannot
	// hold: the read then fails to decode. Declare such variables
	// unexploded.)
	Arguments map[string]string `json:"arguments"`
}

// ReadResult is what a read returns: one or more contents of the URI read.
type ReadResult struct {
	Contents []Contents `json:"contents"`
}

// Contents is one of a read's contents: Text, or Blob when Blob is not
// nil. URI and MIMEType may be left empty: the host fills in the URI read
// and the MIME type the manifest declares.
type Contents struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// MarshalJSON implements json.Marshaler. Exactly one of text and blob is
// written, so that an empty text still encodes as "text": "".
func (c Contents) MarshalJSON() ([]byte, error) {
	if c.Blob != nil {
		return marshal(struct {
			URI      string `json:"uri,omitempty"`
			MIMEType string `json:"mimeType,omitempty"`
			Blob     []byte `json:"blob"`
		}{c.URI, c.MIMEType, c.Blob})
	}
	return marshal(struct {
		URI      string `json:"uri,omitempty"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
	}{c.URI, c.MIMEType, c.Text})
}

// Resources makes the module's resources/read entry point: fn answers the
// reads of every resource the manifest declares without contents and of
// every URI its templates match. A read fn fails (a returned error) is the
// client's error for the read, with the error's text.
func Resources(fn func(ReadRequest) (*ReadResult, error)) Tool {
	return tool(EntryReadResource, fn, func(res *ReadResult) ([]byte, error) {
		if res == nil || len(res.Contents) == 0 {
			return nil, errors.New("the read returned no contents")
		}
		return encode(res)
	})
}

// PromptRequest is what the host asks of a module's prompts/get. The host
// has checked the arguments against those the manifest declares: the
// required ones are there, and no others.
type PromptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

// PromptResult is a prompt's messages, and optionally a description.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt: Role is "user" or "assistant".
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Prompts makes the module's prompts/get entry point: fn gets every prompt
// the manifest declares without messages, dispatching on the request's
// Name.
func Prompts(fn func(PromptRequest) (*PromptResult, error)) Tool {
	return tool(EntryGetPrompt, fn, func(res *PromptResult) ([]byte, error) {
		if res == nil || len(res.Messages) == 0 {
			return nil, errors.New("the prompt has no messages")
		}
		return encode(res)
	})
}

// CompleteRequest is what the host asks of a module's completion/complete:
// values for the argument Argument.Name of the prompt Ref.Name (Ref.Type
// "ref/prompt"), or for a variable of the resource template Ref.URI
// ("ref/resource"), that begin with what the client has typed,
// Argument.Value. Context holds the other arguments the client has filled
// in, if it sent them.
type CompleteRequest struct {
	Ref struct {
		Type string `json:"type"`
		Name string `json:"name,omitempty"`
		URI  string `json:"uri,omitempty"`
	} `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context"`
}

// CompleteResult is a completion's values, at most 100, and optionally how
// many there are in all and whether there are more than Values holds.
type CompleteResult struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// Completions makes the module's completion/complete entry point: fn
// completes the arguments and variables of every prompt and template whose
// manifest entry says "complete": "module" and that declare no values of
// their own.
func Completions(fn func(CompleteRequest) (*CompleteResult, error)) Tool {
	return tool(EntryComplete, fn, func(res *CompleteResult) ([]byte, error) {
		if res == nil {
			return nil, errors.New("the completion returned nothing")
		}
		if res.Values == nil {
			res.Values = []string{}
		}
		return encode(res)
	})
}
