package egress

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// acceptEncoding is what the host asks for, as Go's client does, when the
// tool set no Accept-Encoding (and no Range). The host decodes the answer
// itself rather than leaving it to net/http (the transport has
// DisableCompression), so that one bounded path decodes whatever arrives:
// what the host asked for, and what a server sends unasked in reply to a
// request that carried a secret, which must be decoded before it can be
// checked for the secret. Bounded on both sides: net/http's decoder would
// read any number of compressed bytes that decode to nothing.
const acceptEncoding = "gzip"

// maxCodings is how many content codings, one over the other, are undone.
const maxCodings = 2

// errOverLimit is returned when decoding would pass the response's limit.
var errOverLimit = errors.New("decoded body over the limit")

// unknownCodingError is returned for a coding the host cannot undo.
type unknownCodingError struct{ msg string }

func (e *unknownCodingError) Error() string { return e.msg }

// contentCodings lists a response's content codings, in the order the
// server applied them, lower-cased and without identity.
func contentCodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// decodeBody undoes codings on body. The output of each step, the last
// included, is capped at limit bytes, so that no gzip bomb, and no stream
// of empty gzip members, makes the host hold or work through more than the
// response may have.
func decodeBody(body []byte, codings []string, limit int64) ([]byte, error) {
	if len(codings) > maxCodings {
		return nil, &unknownCodingError{fmt.Sprintf("the response has %d content codings (%s); the host undoes at most %d", len(codings), strings.Join(codings, ", "), maxCodings)}
	}
	var r io.Reader = bytes.NewReader(body)
	for i := len(codings) - 1; i >= 0; i-- {
		var err error
		switch codings[i] {
		case "gzip", "x-gzip":
			r, err = gzip.NewReader(r)
		case "deflate":
			r, err = inflate(r)
		default:
			return nil, &unknownCodingError{fmt.Sprintf("the response's content coding %q is not one the host can decode (gzip, deflate)", codings[i])}
		}
		if err != nil {
			return nil, fmt.Errorf("decoding the response's %s coding: %w", codings[i], err)
		}
		r = &capReader{r: r, left: limit}
	}
	out, err := io.ReadAll(r)
	switch {
	case errors.Is(err, errOverLimit):
		return nil, errOverLimit
	case err != nil:
		return nil, fmt.Errorf("decoding the response's %s coding: %w", strings.Join(codings, ", "), err)
	}
	return out, nil
}

// inflate reads "deflate", which RFC 9110 defines as zlib's format; some
// servers send a bare deflate stream instead, so that is taken too.
func inflate(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(2)
	if err != nil {
		return nil, err
	}
	// A zlib header: method 8 (deflate), and a check making the first two
	// bytes a multiple of 31.
	if head[0]&0x0f == 8 && (uint(head[0])<<8|uint(head[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// capReader fails with errOverLimit once more than left bytes are read.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errOverLimit
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, errOverLimit
	}
	return n, err
}
