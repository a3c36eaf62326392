// Command pack is the conformance tool pack: one wasmcp module with every
// tool the official MCP conformance suite calls on a server
// (@modelcontextprotocol/conformance, server scenarios). It exists to prove
// that each kind of content and notification the suite checks works from
// inside the sandbox, through the ordinary ABI: nothing in the server knows
// these names. conformance/run builds it into conformance.wasm with
// manifest.json embedded.
//
// Texts, URIs and MIME types are those of the suite's scenario descriptions,
// so a result here reads like the reference server's.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"time"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// none is the arguments of a tool that takes none.
type none struct{}

func main() {
	guest.Main(append(tools(), guest.Resources(readResource), guest.Prompts(getPrompt))...)
}

// getPrompt answers prompts/get of the suite's prompts with an embedded
// resource and with an image; the other two are templates in the manifest.
func getPrompt(req guest.PromptRequest) (*guest.PromptResult, error) {
	var first guest.Content
	var then string
	switch req.Name {
	case "test_prompt_with_embedded_resource":
		raw, err := json.Marshal(map[string]any{"type": "resource", "resource": map[string]any{
			"uri": req.Arguments["resourceUri"], "mimeType": "text/plain", "text": "Embedded resource content for testing."}})
		if err != nil {
			return nil, err
		}
		first = guest.Content{Raw: raw}
		then = "Please process the embedded resource above."
	case "test_input_required_result_prompt":
		return inputPrompt()
	case "test_prompt_with_image":
		img, err := redPixelPNG()
		if err != nil {
			return nil, err
		}
		first = guest.ImageContent(img, "image/png")
		then = "Please analyze the image above."
	default:
		return nil, fmt.Errorf("this module gets no prompt %q", req.Name)
	}
	return &guest.PromptResult{Messages: []guest.PromptMessage{{Role: "user", Content: first}, {Role: "user", Content: guest.TextContent(then)}}}, nil
}

// readResource answers resources/read of the suite's resource template,
// test://template/{id}/data; the static resources are served from the
// manifest.
func readResource(req guest.ReadRequest) (*guest.ReadResult, error) {
	id := req.Arguments["id"]
	data, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &guest.ReadResult{Contents: []guest.Contents{{URI: req.URI, MIMEType: "application/json", Text: string(data)}}}, nil
}

// tools lists every tool the module implements; the manifest declares the
// same names with the same output modes (pack_test.go checks).
func tools() []guest.Tool {
	return append([]guest.Tool{
		guest.Text("test_simple_text", simpleText),
		guest.Result("test_image_content", imageContent),
		guest.Result("test_audio_content", audioContent),
		guest.Result("test_embedded_resource", embeddedResource),
		guest.Result("test_multiple_content_types", multipleContentTypes),
		guest.Text("test_tool_with_logging", toolWithLogging),
		guest.Text("test_error_handling", errorHandling),
		guest.Text("test_tool_with_progress", toolWithProgress),
		guest.Text("test_logging_tool", loggingTool),
		guest.Text("test_streaming_elicitation", streamingElicitation),
		guest.JSON("json_schema_2020_12_tool", jsonSchemaTool),
		guest.Text("test_x_mcp_header", xMCPHeader),
		guest.Text("test_reconnection", reconnection),
		guest.Text("about", about),
		guest.Text("greet", greet),
		guest.Text("slow_compute", slowCompute),
		guest.Text("failing_job", failingJob),
	}, askTools()...)
}

// about says what the pack is. It is first in tools/list (the SDK lists
// by name), where http-header-validation takes the tool it calls with no
// arguments: without it, that would be failing_job, which runs only as a
// task.
func about(none) (string, error) {
	return "The wasmcp conformance tool pack: the tools the MCP conformance suite calls, as one WebAssembly module.", nil
}

// The fixtures of the tasks extension's scenarios (SEP-2663): greet runs
// as a plain call, slow_compute may run as a task (execution.taskSupport
// "optional"), and failing_job runs only as one ("required").

type greetArgs struct {
	Name string `json:"name"`
}

func greet(a greetArgs) (string, error) { return "Hello, " + a.Name + "!", nil }

type slowArgs struct {
	Seconds float64 `json:"seconds"`
	Label   string  `json:"label"`
}

// slowCompute waits the seconds asked for, within the module's time
// limit; the scenarios cancel the long ones.
func slowCompute(a slowArgs) (string, error) {
	time.Sleep(time.Duration(a.Seconds * float64(time.Second)))
	return fmt.Sprintf("Computed %s after %gs", a.Label, a.Seconds), nil
}

func failingJob(none) (string, error) {
	return "", errors.New("This job intentionally fails for testing")
}

// reconnection outlasts the --poll-interval that conformance/run gives the
// server, which then ends the call's stream before the answer; the suite
// resumes it with Last-Event-ID (SEP-1699). The tool itself only waits.
func reconnection(none) (string, error) {
	time.Sleep(1500 * time.Millisecond)
	return "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", nil
}

func simpleText(none) (string, error) {
	return "This is a simple text response for testing.", nil
}

func imageContent(none) (*guest.CallResult, error) {
	img, err := redPixelPNG()
	if err != nil {
		return nil, err
	}
	return &guest.CallResult{Content: []guest.Content{guest.ImageContent(img, "image/png")}}, nil
}

func audioContent(none) (*guest.CallResult, error) {
	return &guest.CallResult{Content: []guest.Content{guest.AudioContent(toneWAV(), "audio/wav")}}, nil
}

func embeddedResource(none) (*guest.CallResult, error) {
	block, err := resourceBlock("test://embedded-resource", "text/plain", "This is an embedded resource content.")
	if err != nil {
		return nil, err
	}
	return &guest.CallResult{Content: []guest.Content{block}}, nil
}

func multipleContentTypes(none) (*guest.CallResult, error) {
	img, err := redPixelPNG()
	if err != nil {
		return nil, err
	}
	res, err := resourceBlock("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)
	if err != nil {
		return nil, err
	}
	return &guest.CallResult{Content: []guest.Content{
		guest.TextContent("Multiple content types test:"),
		guest.ImageContent(img, "image/png"),
		res,
	}}, nil
}

// toolWithLogging sends three log messages with pauses between them, so
// that the client sees notifications arrive while the call is running.
func toolWithLogging(none) (string, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		if err := guest.Log(guest.Info, msg); err != nil {
			return "", fmt.Errorf("sending log message %q: %w", msg, err)
		}
	}
	return "Tool with logging executed successfully", nil
}

// errorHandling fails the way a Go tool fails: by returning an error. The
// SDK exits with status 1 and the host makes it a result with isError.
func errorHandling(none) (string, error) {
	return "", errors.New("This tool intentionally returns an error for testing")
}

// toolWithProgress reports 0, 50 and 100 of 100 with pauses between, as the
// suite's reference server does. The host sends the reports only when the
// request carried a progressToken. A refused report fails the call, so that
// a host that drops one is seen rather than hidden.
func toolWithProgress(none) (string, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		if err := guest.Progress(p, 100, fmt.Sprintf("step %d of 3", i+1)); err != nil {
			return "", fmt.Errorf("reporting progress %v/100: %w", p, err)
		}
	}
	return "Tool with progress executed successfully", nil
}

// loggingTool is the 2026-07-28 diagnostic: it logs at every level, and a
// request that set no log level must see none of it.
func loggingTool(none) (string, error) {
	for l := guest.Debug; l <= guest.Emergency; l++ {
		if err := guest.Logf(l, "test_logging_tool message at level %d", l); err != nil {
			return "", fmt.Errorf("sending log message at level %d: %w", l, err)
		}
	}
	return "Logged one message at each of the 8 levels", nil
}

// streamingElicitation is the 2026-07-28 diagnostic for response streams:
// whatever a tool does while it runs, the stream carries notifications and
// the result, never a request to the client. A wasmcp tool cannot ask the
// client anything, so this one does what it can: it reports progress and
// logs, then answers. The suite's Go SDK reference tool only answers.
func streamingElicitation(none) (string, error) {
	for i := 1; i <= 3; i++ {
		if err := guest.Progress(float64(i), 3, "working"); err != nil {
			return "", fmt.Errorf("reporting progress %d/3: %w", i, err)
		}
		if err := guest.Logf(guest.Info, "step %d of 3", i); err != nil {
			return "", fmt.Errorf("sending log message: %w", err)
		}
	}
	return "The response stream carried notifications and this result, and no request", nil
}

// contact is the arguments of json_schema_2020_12_tool. The schema is the
// point of the tool: the suite checks that tools/list carries it as written.
type contact struct {
	Name          string   `json:"name"`
	Address       *address `json:"address"`
	ContactMethod string   `json:"contactMethod"`
	Phone         string   `json:"phone"`
	Email         string   `json:"email"`
}

type address struct {
	Street string `json:"street"`
	City   string `json:"city"`
}

// jsonSchemaTool says how it would reach the contact, which the schema's
// if/then/else guarantees it can.
func jsonSchemaTool(in contact) (map[string]string, error) {
	if in.ContactMethod == "phone" || in.Email == "" {
		return map[string]string{"via": "phone", "to": in.Phone}, nil
	}
	return map[string]string{"via": "email", "to": in.Email}, nil
}

// headerArgs is the arguments of test_x_mcp_header. The manifest marks
// region with x-mcp-header, so a 2026-07-28 client also sends it as the
// Mcp-Param-Region header and the server checks that the two agree
// (SEP-2243); the tool itself only sees the arguments.
type headerArgs struct {
	Region string `json:"region"`
	Level  *int   `json:"level"`
}

func xMCPHeader(in headerArgs) (string, error) {
	return "region=" + in.Region, nil
}

// resourceBlock returns an embedded resource content block, which the SDK
// does not model, as a raw block.
func resourceBlock(uri, mimeType, text string) (guest.Content, error) {
	type resource struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	raw, err := json.Marshal(struct {
		Type     string   `json:"type"`
		Resource resource `json:"resource"`
	}{"resource", resource{uri, mimeType, text}})
	return guest.Content{Raw: raw}, err
}

// redPixelPNG encodes a 1x1 red image, the suite's suggested test image.
func redPixelPNG() ([]byte, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// toneWAV returns a 0.1 s, 440 Hz sine as a WAV file: 8 kHz, mono, 16-bit
// PCM, a 44-byte RIFF header and the samples.
func toneWAV() []byte {
	const rate, samples = 8000, 800
	var pcm bytes.Buffer
	for i := range samples {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/rate))
		binary.Write(&pcm, binary.LittleEndian, v)
	}
	var wav bytes.Buffer
	w := func(v any) { binary.Write(&wav, binary.LittleEndian, v) }
	wav.WriteString("RIFF")
	w(uint32(36 + pcm.Len()))
	wav.WriteString("WAVEfmt ")
	w(uint32(16))       // fmt chunk size
	w(uint16(1))        // PCM
	w(uint16(1))        // channels
	w(uint32(rate))     // sample rate
	w(uint32(rate * 2)) // byte rate
	w(uint16(2))        // block align
	w(uint16(16))       // bits per sample
	wav.WriteString("data")
	w(uint32(pcm.Len()))
	wav.Write(pcm.Bytes())
	return wav.Bytes()
}
