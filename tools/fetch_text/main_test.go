package main

import (
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
)

func TestRender(t *testing.T) {
	if got := render(200, "text/plain", []byte("hello")); got != "HTTP 200\n\nhello" {
		t.Errorf("render = %q", got)
	}
	long := strings.Repeat("é", maxText)
	got := render(200, "text/plain", []byte(long))
	if !strings.Contains(got, "[cut at") || len(got) > maxText+100 {
		t.Errorf("a long body was not cut: %d bytes", len(got))
	}
	if got := render(200, "image/png", []byte{0xff, 0xfe}); !strings.Contains(got, "binary") {
		t.Errorf("binary body = %q", got)
	}
}

func TestFetchRefusesRelativeURLs(t *testing.T) {
	if _, err := fetch(args{URL: "/relative"}); err == nil {
		t.Error("a relative URL was accepted")
	}
}

func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "fetch_text", abi.OutputText)
	if m.Permissions == nil || len(m.Permissions.HTTP) == 0 {
		t.Fatal("the manifest asks for no http host")
	}
}
