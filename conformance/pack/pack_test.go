package main

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"os"
	"slices"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
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
