package guest

import (
	"encoding/json"
	"fmt"
)

// CallResult is an MCP CallToolResult, what a Result tool returns. It
// encodes to the shape the host expects on stdout in output mode "result".
type CallResult struct {
	// Content is what the model reads. It encodes as [] when empty, since
	// MCP requires the field.
	Content []Content
	// StructuredContent, if not nil, must encode to a JSON object; the
	// host checks it against the tool's outputSchema.
	StructuredContent any
	// IsError marks the result as a tool error the model should see and
	// may recover from, as opposed to a failed run.
	IsError bool
}

// MarshalJSON implements json.Marshaler.
func (r CallResult) MarshalJSON() ([]byte, error) {
	content := r.Content
	if content == nil {
		content = []Content{}
	}
	return marshal(struct {
		Content           []Content `json:"content"`
		StructuredContent any       `json:"structuredContent,omitempty"`
		IsError           bool      `json:"isError,omitempty"`
	}{content, r.StructuredContent, r.IsError})
}

// Content is one MCP content block. Make it with TextContent, ImageContent
// or AudioContent, or set Raw for a block type this package does not model.
type Content struct {
	// Type is "text", "image" or "audio".
	Type string
	// Text is the text of a "text" block.
	Text string
	// Data is the bytes of an "image" or "audio" block; they are base64
	// encoded on the wire.
	Data []byte
	// MIMEType is the media type of Data, such as "image/png".
	MIMEType string
	// Raw, if set, is written verbatim and the other fields are ignored. It
	// is the way to send blocks such as "resource_link" or "resource"
	// without this package growing a field for each.
	Raw json.RawMessage
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent returns an image block; mimeType is e.g. "image/png".
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: data, MIMEType: mimeType}
}

// AudioContent returns an audio block; mimeType is e.g. "audio/wav".
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: data, MIMEType: mimeType}
}

// MarshalJSON implements json.Marshaler. Each block type gets exactly its
// own fields, so that an empty text still encodes as "text": "" rather than
// being dropped, which MCP would reject.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Raw != nil {
		return c.Raw, nil
	}
	switch c.Type {
	case "text":
		return marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text})
	case "image", "audio":
		if c.MIMEType == "" {
			return nil, fmt.Errorf("%s content needs a MIME type", c.Type)
		}
		data := c.Data
		if data == nil {
			data = []byte{}
		}
		return marshal(struct {
			Type     string `json:"type"`
			Data     []byte `json:"data"`
			MIMEType string `json:"mimeType"`
		}{c.Type, data, c.MIMEType})
	}
	return nil, fmt.Errorf("content type %q is not modelled; use Raw for it", c.Type)
}
