package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host/catalog"
)

// Result turns a successful run's stdout into a tool result according to the
// tool's output mode, checking structuredContent against the outputSchema.
func Result(t *catalog.Tool, stdout []byte) (*mcp.CallToolResult, error) {
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
		return decodeResult(t, stdout)
	default:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToValidUTF8(string(stdout), "\uFFFD")}}}, nil
	}
}

// decodeResult reads a complete CallToolResult written by a tool.
func decodeResult(t *catalog.Tool, stdout []byte) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(stdout, &res); err != nil {
		return nil, fmt.Errorf(`output mode "result" needs an MCP CallToolResult object on stdout: %v`, err)
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	for i, c := range res.Content {
		switch c.(type) {
		case *mcp.TextContent, *mcp.ImageContent, *mcp.AudioContent, *mcp.ResourceLink, *mcp.EmbeddedResource:
		default:
			return nil, fmt.Errorf("content[%d] is of a type a tool result may not carry (allowed: text, image, audio, resource_link, resource)", i)
		}
	}
	// The SDK decodes numbers as float64, which rounds integers past 2^53;
	// structuredContent is decoded again to keep the tool's numbers exact.
	var raw struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	_ = json.Unmarshal(stdout, &raw)
	res.StructuredContent = nil
	if len(raw.StructuredContent) > 0 && string(raw.StructuredContent) != "null" {
		obj, err := decodeObject(raw.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("its structuredContent must be a JSON object (%v)", err)
		}
		res.StructuredContent = obj
	}
	if res.IsError {
		return &res, nil
	}
	if res.StructuredContent != nil {
		if err := checkOutput(t, res.StructuredContent); err != nil {
			return nil, err
		}
	} else if t.Output != nil {
		return nil, errors.New("the tool declares an outputSchema but returned no structuredContent")
	}
	return &res, nil
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

func checkOutput(t *catalog.Tool, v any) error {
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
