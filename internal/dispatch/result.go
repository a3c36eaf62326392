package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/jsonsize"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// Result turns a successful run's stdout into a tool result according to the
// tool's output mode, checking structuredContent against the outputSchema.
// What a tool in result mode wrote but may not set is logged on log.
func Result(t *registry.Tool, stdout []byte, log *slog.Logger) (*mcp.CallToolResult, error) {
	switch t.Spec.Mode() {
	case abi.OutputJSON:
		obj, err := decodeObject(stdout)
		if err != nil {
			return nil, fmt.Errorf(`output mode "json" needs one JSON object on stdout (%v); got %s`, err, preview(stdout))
		}
		if err := checkOutput(t, obj); err != nil {
			return nil, err
		}
		text, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(text)}},
			StructuredContent: obj,
		}, nil
	case abi.OutputResult:
		return decodeResult(t, stdout, log)
	default:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToValidUTF8(string(stdout), "\uFFFD")}}}, nil
	}
}

// decodeResult reads a CallToolResult written by a tool. A tool speaks for
// itself only, so the server builds its result afresh from what a tool may
// set: content, structuredContent, isError, and the _meta keys of its own
// namespaces (ownMeta), at the top and on content blocks. Everything else
// is the server's to say and is dropped, with a warning: a resultType and
// inputRequests would have had the SDK ask the client for input the tool
// wanted (a password, say), whatever the client had declared, and a
// serverInfo in _meta would have stood in for the server's own.
//
// Dropping rather than refusing keeps working a tool that copies a whole
// result from elsewhere, "resultType": "complete" and all, since what is
// dropped was never the tool's to decide.
func decodeResult(t *registry.Tool, stdout []byte, log *slog.Logger) (*mcp.CallToolResult, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(stdout, &members); err != nil || members == nil {
		if err == nil {
			err = errors.New("got null")
		}
		return nil, fmt.Errorf(`output mode "result" needs an MCP CallToolResult object on stdout: %v`, err)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{}}
	// Members first in the log, then what was dropped within those kept.
	var dropped, within []string
	for _, name := range slices.Sorted(maps.Keys(members)) {
		raw := members[name]
		var err error
		switch name {
		case "content":
			res.Content, err = decodeContent(raw, &within)
		case "structuredContent":
			// Decoded apart from the SDK, which reads numbers as float64
			// and would round integers past 2^53.
			if string(raw) != "null" {
				if res.StructuredContent, err = decodeObject(raw); err != nil {
					err = fmt.Errorf("its structuredContent must be a JSON object (%v)", err)
				}
			}
		case "isError":
			if json.Unmarshal(raw, &res.IsError) != nil {
				err = errors.New("its isError must be true or false")
			}
		case "_meta":
			var meta map[string]any
			if string(raw) != "null" {
				if meta, err = decodeObject(raw); err != nil {
					err = fmt.Errorf("its _meta must be a JSON object (%v)", err)
				}
			}
			res.Meta = ownMeta(meta, "_meta", &within)
		default:
			dropped = append(dropped, name)
		}
		if err != nil {
			return nil, err
		}
	}
	if dropped = append(dropped, within...); len(dropped) > 0 {
		log.Warn("dropped what a tool may not set in its result", "tool", t.Spec.Name, "members", names(dropped), "count", len(dropped))
	}
	if res.IsError {
		return res, nil
	}
	if res.StructuredContent != nil {
		if err := checkOutput(t, res.StructuredContent); err != nil {
			return nil, err
		}
	} else if t.Output != nil {
		return nil, errors.New("the tool declares an outputSchema but returned no structuredContent")
	}
	return res, nil
}

// decodeContent reads content blocks with the SDK's own decoder, reached
// only through a result, and copies what a tool may set of each into a
// fresh block.
func decodeContent(raw json.RawMessage, dropped *[]string) ([]mcp.Content, error) {
	wrapped, err := json.Marshal(struct {
		Content json.RawMessage `json:"content"`
	}{raw})
	var decoded mcp.CallToolResult
	if err == nil {
		err = json.Unmarshal(wrapped, &decoded)
	}
	if err != nil {
		return nil, fmt.Errorf("its content must be an array of content blocks (%v)", err)
	}
	out := make([]mcp.Content, 0, len(decoded.Content))
	for i, c := range decoded.Content {
		at := fmt.Sprintf("content[%d]._meta", i)
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, &mcp.TextContent{Text: c.Text, Annotations: c.Annotations, Meta: ownMeta(c.Meta, at, dropped)})
		case *mcp.ImageContent:
			out = append(out, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: ownMeta(c.Meta, at, dropped)})
		case *mcp.AudioContent:
			out = append(out, &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: ownMeta(c.Meta, at, dropped)})
		case *mcp.ResourceLink:
			out = append(out, &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType,
				Size: c.Size, Icons: c.Icons, Annotations: c.Annotations, Meta: ownMeta(c.Meta, at, dropped)})
		case *mcp.EmbeddedResource:
			if c.Resource == nil {
				return nil, fmt.Errorf("content[%d] is a resource block without its resource", i)
			}
			r := c.Resource
			out = append(out, &mcp.EmbeddedResource{
				Resource: &mcp.ResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob,
					Meta: ownMeta(r.Meta, fmt.Sprintf("content[%d].resource._meta", i), dropped)},
				Annotations: c.Annotations,
				Meta:        ownMeta(c.Meta, at, dropped),
			})
		default:
			return nil, fmt.Errorf("content[%d] is of a type a tool result may not carry (allowed: text, image, audio, resource_link, resource)", i)
		}
	}
	return out, nil
}

// ownMeta keeps the _meta keys a tool may set: those in a namespace of its
// own (ownKey). The others are added to dropped, named after where they
// were.
func ownMeta(meta map[string]any, at string, dropped *[]string) mcp.Meta {
	var own mcp.Meta
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if !ownKey(k) {
			*dropped = append(*dropped, fmt.Sprintf("%s[%q]", at, k))
			continue
		}
		if own == nil {
			own = mcp.Meta{}
		}
		own[k] = meta[k]
	}
	return own
}

var (
	metaLabel = regexp.MustCompile(`^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?$`)
	metaName  = regexp.MustCompile(`^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$`)
)

// ownKey reports whether a tool may set a _meta key: one whose prefix (dot-
// separated labels, then a slash) and name are well formed as MCP defines
// them, and whose prefix has no label that MCP reserves (mcp,
// modelcontextprotocol; MCP reserves them as the second label, and any
// label, in any case, is refused here, so that nothing can read as MCP's)
// or that names this server (wasmcp). A key without a prefix is MCP's
// (progressToken), OpenTelemetry's (traceparent) or anyone's, so none is
// the tool's.
func ownKey(k string) bool {
	prefix, name, ok := strings.Cut(k, "/")
	if !ok || !metaName.MatchString(name) {
		return false
	}
	for label := range strings.SplitSeq(prefix, ".") {
		if !metaLabel.MatchString(label) {
			return false
		}
		switch strings.ToLower(label) {
		case "mcp", "modelcontextprotocol", "wasmcp":
			return false
		}
	}
	return true
}

// names lists the first few dropped names, each cut short, for a log line
// of bounded size: a tool chooses them, and as many as its output holds.
func names(dropped []string) []string {
	const first, length = 8, 80
	out := slices.Clone(dropped[:min(len(dropped), first)])
	for i, n := range out {
		if len(n) > length {
			out[i] = strings.ToValidUTF8(n[:length], "") + "…"
		}
	}
	return out
}

// encodedSize is how many bytes a result's content, structuredContent
// and _meta take as the SDK encodes them: each text measured without
// being encoded (it is the part a tool makes largest, and the one JSON
// multiplies most, six times for control characters), the rest encoded.
func encodedSize(res *mcp.CallToolResult) (int, error) {
	n := 0
	add := func(v any) error {
		b, err := json.Marshal(v)
		n += len(b)
		return err
	}
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			if err := add(c); err != nil {
				return 0, err
			}
			continue
		}
		n += jsonsize.String(tc.Text)
		if tc.Annotations != nil {
			if err := add(tc.Annotations); err != nil {
				return 0, err
			}
		}
		if len(tc.Meta) > 0 {
			if err := add(tc.Meta); err != nil {
				return 0, err
			}
		}
	}
	if res.StructuredContent != nil {
		if err := add(res.StructuredContent); err != nil {
			return 0, err
		}
	}
	if len(res.Meta) > 0 {
		if err := add(res.Meta); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// decodeObject decodes exactly one JSON object, keeping numbers exact.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("null is not an object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the object")
	}
	return obj, nil
}

func checkOutput(t *registry.Tool, v any) error {
	if t.Output == nil {
		return nil
	}
	// Round-trip through JSON so numbers have the types the validator takes.
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	violations, err := t.Output.Validate(raw)
	if err != nil {
		return err
	}
	if len(violations) > 0 {
		return errors.New(violationText("its structuredContent does not match its outputSchema", violations))
	}
	return nil
}

func preview(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	const n = 200
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return fmt.Sprintf("%q", s)
}
