// Command fetch_text is a wasmcp tool that fetches a web page or API
// response as text, through the host: it can reach only the hosts the
// operator's policy grants it.
package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// maxText bounds what is returned, so a large page does not flood the
// model's context.
const maxText = 16 << 10

type args struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

func fetch(in args) (string, error) {
	u, err := url.Parse(in.URL)
	if err != nil || u.Host == "" {
		return "", errors.New("url must be an absolute http or https URL")
	}
	resp, err := guest.Fetch(guest.Request{URL: in.URL, Secret: in.Secret})
	if err != nil {
		return "", err
	}
	guest.Logf(guest.Info, "GET %s: %d, %d bytes", u.Host, resp.Status, len(resp.Body))
	return render(resp.Status, resp.Headers["Content-Type"], resp.Body), nil
}

// render shows the status and the start of the body, cut at a character
// boundary.
func render(status int, contentType string, body []byte) string {
	if !utf8.Valid(body) {
		return fmt.Sprintf("HTTP %d, %d bytes of binary %s (not shown)", status, len(body), contentType)
	}
	text := string(body)
	cut := ""
	if len(text) > maxText {
		text = strings.ToValidUTF8(text[:maxText], "")
		cut = fmt.Sprintf("\n[cut at %d of %d bytes]", maxText, len(body))
	}
	return fmt.Sprintf("HTTP %d\n\n%s%s", status, text, cut)
}

func main() {
	guest.Main(guest.Text("fetch_text", fetch))
}
