package dispatch

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// MaxContents bounds the contents a module's read may return.
const MaxContents = 100

// Read reads the resource at uri (mcpserver.Caller). A resource whose
// contents are in its manifest is served from there; any other, and a URI
// a template matches, is read by running its module's resources/read entry
// point exactly as a tool call runs, under the module's limits and the
// policy's grants to the module. Every failure is a JSON-RPC error whose
// message says what went wrong and what to do.
func (d *Dispatcher) Read(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	cat, rd, ok := d.reg.AcquireRead(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if rd.Entry == nil {
		return static(uri, rd.Resource.Spec), nil
	}
	defer rd.Entry.Module.Release()
	stdin, err := json.Marshal(map[string]any{"uri": uri, "arguments": rd.Arguments})
	if err != nil {
		return nil, fmt.Errorf("encoding the read of %s: %w", uri, err)
	}
	name := rd.Entry.Module.Stem + " " + abi.EntryReadResource
	start := time.Now()
	res, outcome := d.call(ctx, cat, rd.Entry, stdin, &serverLog{log: d.log, tool: name}, nil)
	d.logCall(name, outcome, time.Since(start), stdin)
	if res.IsError {
		return nil, readError(uri, rd.Entry.Module, resultText(res))
	}
	contents, err := readContents(uri, rd.MIMEType(), res.StructuredContent)
	if err != nil {
		return nil, readError(uri, rd.Entry.Module, fmt.Sprintf("what %s wrote is not a read's answer: %v", abi.EntryReadResource, err))
	}
	return &mcp.ReadResourceResult{Contents: contents}, nil
}

// static serves a resource's contents from its manifest.
func static(uri string, r abi.Resource) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: r.MIMEType, Blob: r.Blob}
	if r.Text != nil {
		c.Text = *r.Text
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

// readError is the JSON-RPC error of a read whose module failed or wrote
// what is not a read's answer.
func readError(uri string, m *registry.Module, why string) error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("reading %s failed: module %s: %s", uri, m.Stem, why),
	}
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// content is one of the contents a module's read writes.
type content struct {
	URI      string  `json:"uri"`
	MIMEType string  `json:"mimeType"`
	Text     *string `json:"text"`
	Blob     *string `json:"blob"`
}

// readContents checks what a module's read wrote: {"contents": [...]},
// each of the contents for the URI read (a module speaks for its own
// resources only) with text or base64 blob. A content without a URI or a
// MIME type gets the read's and the declared one.
func readContents(uri, mimeType string, out any) ([]*mcp.ResourceContents, error) {
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var answer struct {
		Contents []content `json:"contents"`
	}
	if err := dec.Decode(&answer); err != nil {
		return nil, fmt.Errorf(`it must be {"contents": [{"uri", "mimeType", "text" or "blob"}]}: %v`, err)
	}
	switch n := len(answer.Contents); {
	case n == 0:
		return nil, errors.New(`"contents" is empty or missing: a read returns at least one`)
	case n > MaxContents:
		return nil, fmt.Errorf(`"contents" holds %d items, over the limit of %d`, n, MaxContents)
	}
	var contents []*mcp.ResourceContents
	for i, c := range answer.Contents {
		rc := &mcp.ResourceContents{URI: cmp.Or(c.URI, uri), MIMEType: cmp.Or(c.MIMEType, mimeType)}
		switch {
		case rc.URI != uri:
			return nil, fmt.Errorf("contents %d are for %q, not the URI read: a module answers for the URI it is asked for only", i, c.URI)
		case (c.Text == nil) == (c.Blob == nil):
			return nil, fmt.Errorf(`contents %d must have one of "text" and "blob"`, i)
		case c.Text != nil:
			rc.Text = *c.Text
		default:
			if rc.Blob, err = base64.StdEncoding.DecodeString(*c.Blob); err != nil {
				return nil, fmt.Errorf(`contents %d: "blob" is not base64 (RFC 4648, with padding): %v`, i, err)
			}
			if rc.Blob == nil {
				rc.Blob = []byte{}
			}
		}
		if err := abi.CheckMIME(rc.MIMEType); err != nil {
			return nil, fmt.Errorf("contents %d: %w", i, err)
		}
		contents = append(contents, rc)
	}
	return contents, nil
}
