package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// TestManifest checks that the manifest loads as the server loads it and
// declares exactly the tools main registers.
func TestManifest(t *testing.T) {
	data, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	var declared, registered []string
	for _, tool := range m.Tools {
		declared = append(declared, tool.Name)
	}
	for _, tool := range tools() {
		registered = append(registered, tool.Name())
	}
	if !slices.Equal(declared, registered) {
		t.Errorf("manifest declares %v; main registers %v", declared, registered)
	}
}

// TestResources checks the manifest's binary resource against the image the
// tools return, and the template's read.
func TestResources(t *testing.T) {
	data, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := abi.ParseManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := redPixelPNG()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Resources, func(r abi.Resource) bool { return r.URI == "test://static-binary" })
	if i < 0 || !bytes.Equal(m.Resources[i].Blob, img) {
		t.Errorf("test://static-binary is not the red pixel (%s)", base64.StdEncoding.EncodeToString(img))
	}
	res, err := readResource(guest.ReadRequest{URI: "test://template/123/data", Arguments: map[string]string{"id": "123"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contents[0]; c.URI != "test://template/123/data" || c.MIMEType != "application/json" || c.Text != `{"data":"Data for ID: 123","id":"123","templateTest":true}` {
		t.Errorf("read = %+v", c)
	}
}

// TestPrompts checks the prompts the module gets.
func TestPrompts(t *testing.T) {
	res, err := getPrompt(guest.PromptRequest{Name: "test_prompt_with_embedded_resource", Arguments: map[string]string{"resourceUri": "test://example-resource"}})
	if want := `"resource":{"mimeType":"text/plain","text":"Embedded resource content for testing.","uri":"test://example-resource"}`; err != nil || !strings.Contains(string(res.Messages[0].Content.Raw), want) {
		t.Errorf("test_prompt_with_embedded_resource = %+v, %v; want %s", res, err, want)
	}
	res, err = getPrompt(guest.PromptRequest{Name: "test_prompt_with_image"})
	if err != nil || res.Messages[0].Content.Type != "image" || res.Messages[0].Content.MIMEType != "image/png" || res.Messages[1].Content.Text != "Please analyze the image above." {
		t.Errorf("test_prompt_with_image = %+v, %v", res, err)
	}
	if _, err := getPrompt(guest.PromptRequest{Name: "test_simple_prompt"}); err == nil {
		t.Error("the module got a prompt its manifest serves")
	}
}

func TestMedia(t *testing.T) {
	b, err := redPixelPNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, bl, a := img.At(0, 0).RGBA(); img.Bounds().Dx() != 1 || r != 0xffff || g != 0 || bl != 0 || a != 0xffff {
		t.Errorf("image is %v with pixel %v; want 1x1 red", img.Bounds(), img.At(0, 0))
	}

	wav := toneWAV()
	if len(wav) < 44 || string(wav[:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || string(wav[36:40]) != "data" {
		t.Fatalf("not a canonical WAV header: % x", wav[:min(len(wav), 44)])
	}
	if riff, data := binary.LittleEndian.Uint32(wav[4:]), binary.LittleEndian.Uint32(wav[40:]); int(riff) != len(wav)-8 || int(data) != len(wav)-44 {
		t.Errorf("chunk sizes RIFF %d, data %d; file is %d bytes", riff, data, len(wav))
	}
}
