package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/atomicfile"
	"github.com/wasmcp/wasmcp/internal/registry"
)

// wasmConfig is the config blob of the Wasm OCI artifact layout, with the
// fields a core module has.
type wasmConfig struct {
	Created      string          `json:"created"`
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	LayerDigests []digest.Digest `json:"layerDigests"`
}

// Tool is what push sends: a module, its sidecar manifest if it has one,
// and the signatures lying beside them.
type Tool struct {
	Module     File
	Manifest   *File
	Signatures []File
}

// ReadTool reads the module at path, its sidecar STEM.manifest.json, and
// the .minisig files beside either, each within its bound.
func ReadTool(path string) (Tool, error) {
	var t Tool
	name := filepath.Base(path)
	if _, kind, err := splitName(name); err != nil || kind != kindModule {
		return t, fmt.Errorf("%s: a tool to push is a STEM.wasm file", path)
	}
	data, err := registry.ReadModule(path)
	if err != nil {
		return t, err
	}
	t.Module = File{Name: name, Data: data}
	sidecar := strings.TrimSuffix(path, ".wasm") + abi.SidecarSuffix
	data, err = registry.ReadBounded(sidecar, abi.MaxManifestSize)
	switch {
	case err == nil:
		t.Manifest = &File{Name: filepath.Base(sidecar), Data: data}
	case !errors.Is(err, fs.ErrNotExist):
		return t, err
	}
	for _, signed := range []string{path, sidecar} {
		data, err := registry.ReadBounded(signed+SignatureSuffix, MaxSignatureBytes)
		switch {
		case err == nil:
			t.Signatures = append(t.Signatures, File{Name: filepath.Base(signed) + SignatureSuffix, Data: data})
		case !errors.Is(err, fs.ErrNotExist):
			return t, err
		}
	}
	return t, nil
}

// Push sends a tool to dst and tags it, and its signatures, if it has
// any, as a referrer of its manifest. It returns the manifest's
// descriptor.
func Push(ctx context.Context, dst oras.Target, tag string, t Tool, created time.Time) (ocispec.Descriptor, error) {
	stamp := created.UTC().Format(time.RFC3339)
	module, err := pushFile(ctx, dst, MediaTypeWasm, t.Module)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	layers := []ocispec.Descriptor{module}
	if t.Manifest != nil {
		m, err := pushFile(ctx, dst, MediaTypeManifest, *t.Manifest)
		if err != nil {
			return ocispec.Descriptor{}, err
		}
		layers = append(layers, m)
	}
	cfg := wasmConfig{Created: stamp, Architecture: "wasm", OS: "wasip1"}
	for _, l := range layers {
		cfg.LayerDigests = append(cfg.LayerDigests, l.Digest)
	}
	cfgData, err := json.Marshal(cfg)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	cfgDesc, err := pushBlob(ctx, dst, content.NewDescriptorFromBytes(MediaTypeWasmConfig, cfgData), cfgData)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{
		Layers:              layers,
		ConfigDescriptor:    &cfgDesc,
		ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: stamp},
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("pushing the manifest: %w", err)
	}
	// The signatures go first, the tag last: a server that sees the tag
	// move finds the new version's signatures already there, rather than
	// serving it, or refusing it, without them until its next pull.
	if len(t.Signatures) > 0 {
		var sigs []ocispec.Descriptor
		for _, f := range t.Signatures {
			d, err := pushFile(ctx, dst, MediaTypeMinisig, f)
			if err != nil {
				return ocispec.Descriptor{}, err
			}
			sigs = append(sigs, d)
		}
		if _, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, ArtifactTypeSignature, oras.PackManifestOptions{
			Subject:             &desc,
			Layers:              sigs,
			ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: stamp},
		}); err != nil {
			return ocispec.Descriptor{}, fmt.Errorf("pushing the signatures: %w", err)
		}
	}
	if err := dst.Tag(ctx, desc, tag); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("tagging %s as %q: %w", desc.Digest, tag, err)
	}
	return desc, nil
}

// pushFile pushes one file as a layer titled with its name.
func pushFile(ctx context.Context, dst oras.Target, mediaType string, f File) (ocispec.Descriptor, error) {
	d := content.NewDescriptorFromBytes(mediaType, f.Data)
	d.Annotations = map[string]string{ocispec.AnnotationTitle: f.Name}
	return pushBlob(ctx, dst, d, f.Data)
}

// pushBlob pushes a blob unless dst has it.
func pushBlob(ctx context.Context, dst oras.Target, d ocispec.Descriptor, data []byte) (ocispec.Descriptor, error) {
	if ok, err := dst.Exists(ctx, d); err != nil {
		return d, fmt.Errorf("pushing %s: %w", title(d), err)
	} else if ok {
		return d, nil
	}
	if err := dst.Push(ctx, d, bytes.NewReader(data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return d, fmt.Errorf("pushing %s: %w", title(d), err)
	}
	return d, nil
}

// WriteFiles writes pulled files into dir, each by a rename.
func WriteFiles(dir string, files []File) error {
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
