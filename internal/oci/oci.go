// Package oci carries tools through OCI registries: a module and its
// sidecar manifest as one artifact in the Wasm layout the CNCF's TAG
// Runtime describes, with the minisign signatures lying beside them as a
// referrer artifact; a content-addressed store that pulled blobs go into,
// verified and bounded; and sources that keep a directory filled with what
// a reference names, for the registry to serve.
//
// A registry is the attacker's: every read is bounded before it is made,
// every name and media type checked, every request timed out.
package oci

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry"

	"github.com/wasmcp/wasmcp/abi"
)

// Media types of a tool's artifact.
const (
	// MediaTypeWasmConfig is the config of the Wasm OCI artifact layout.
	MediaTypeWasmConfig = "application/vnd.wasm.config.v0+json"
	// MediaTypeWasm is the module's layer.
	MediaTypeWasm = "application/wasm"
	// MediaTypeManifest is the sidecar manifest's layer: its own layer, so
	// that what a tool offers can be read without fetching its code.
	MediaTypeManifest = "application/vnd.wasmcp.manifest.v1+json"
	// ArtifactTypeSignature is the artifact type of the referrer that
	// carries a tool's signatures, one layer per .minisig file.
	ArtifactTypeSignature = "application/vnd.wasmcp.signature.v1"
	// MediaTypeMinisig is a minisign detached signature's layer.
	MediaTypeMinisig = "application/vnd.wasmcp.minisig.v1"
)

// SignatureSuffix names a detached minisign signature: the signed file's
// name and this.
const SignatureSuffix = ".minisig"

// Bounds on what a registry may make this process read. A tool's artifact
// manifest is well under a KiB, and a referrers index is a few hundred
// bytes per referrer; a minisign signature is a few hundred bytes.
const (
	// MaxManifestBytes bounds an OCI manifest, config or referrers page.
	MaxManifestBytes = 64 << 10
	// MaxSignatureBytes bounds one .minisig file.
	MaxSignatureBytes = 16 << 10
	// MaxReferrers bounds the signature artifacts of one tool's manifest
	// that are listed.
	MaxReferrers = 16
	// maxListed bounds the referrers of any type listed for one manifest.
	maxListed = 1024
	// maxLayers: a module, its sidecar.
	maxLayers = 2
	// maxSignatureLayers: a signature for each of the module and sidecar.
	maxSignatureLayers = 2
)

// Scheme prefixes a source reference: oci://REGISTRY/REPOSITORY:TAG or
// oci://REGISTRY/REPOSITORY@sha256:….
const Scheme = "oci://"

// ParseReference parses an oci:// reference. It must name a tag or a
// digest: a source that floats on an implicit "latest" is a surprise.
func ParseReference(s string) (registry.Reference, error) {
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return registry.Reference{}, fmt.Errorf("%q is not an OCI reference: write %sREGISTRY/REPOSITORY:TAG or %sREGISTRY/REPOSITORY@sha256:DIGEST", s, Scheme, Scheme)
	}
	ref, err := registry.ParseReference(rest)
	if err != nil {
		return registry.Reference{}, fmt.Errorf("%q: %w", s, err)
	}
	if ref.Reference == "" {
		return registry.Reference{}, fmt.Errorf("%q names no tag or digest: add :TAG or @sha256:DIGEST", s)
	}
	return ref, nil
}

// IsDigest reports whether ref names a digest rather than a tag.
func IsDigest(ref registry.Reference) bool {
	_, err := ref.Digest()
	return err == nil
}

// stemPattern is what a tool's stem may be: a plain file name, which no
// path separator, leading dot or control character can turn into another.
var stemPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// fileKind says what a file of an artifact is, by its name.
type fileKind int

const (
	kindModule fileKind = iota
	kindManifest
	kindSignature
)

// splitName parses a file name an artifact may carry: STEM.wasm,
// STEM.manifest.json, or either with .minisig. Anything else, a path
// above all, is refused.
func splitName(name string) (stem string, kind fileKind, err error) {
	base, signed := strings.CutSuffix(name, SignatureSuffix)
	kind = kindModule
	stem, ok := strings.CutSuffix(base, ".wasm")
	if !ok {
		kind = kindManifest
		stem, ok = strings.CutSuffix(base, abi.SidecarSuffix)
	}
	if !ok || !stemPattern.MatchString(stem) {
		return "", 0, fmt.Errorf("file name %q is not STEM.wasm or STEM%s (or either with %s), STEM being letters, digits, '.', '_' and '-'", name, abi.SidecarSuffix, SignatureSuffix)
	}
	if signed {
		kind = kindSignature
	}
	return stem, kind, nil
}

// title is a layer's file name.
func title(d ocispec.Descriptor) string { return d.Annotations[ocispec.AnnotationTitle] }

// errTooBig is wrapped by every refusal of content over its bound.
var errTooBig = errors.New("over this server's limit")
