package oci

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"

	"github.com/wasmcp/wasmcp/abi"
	wregistry "github.com/wasmcp/wasmcp/internal/registry"
)

// Pull fetches the tool that ref (a tag or a digest of src) names: its
// manifest, checked to be a tool's artifact, its layers, and the files of
// the newest signature artifact that refers to it. Every blob goes
// through store, which checks it against its digest. It returns the
// manifest's descriptor, whose digest is what the tag named at the time,
// and the tool's files, the module first.
func Pull(ctx context.Context, src oras.ReadOnlyGraphTarget, ref string, store *Store) (ocispec.Descriptor, []File, error) {
	desc, err := src.Resolve(ctx, ref)
	if err != nil {
		return desc, nil, fmt.Errorf("resolving %q: %w", ref, err)
	}
	if strings.HasPrefix(ref, "sha256:") && desc.Digest.String() != ref {
		return desc, nil, fmt.Errorf("the registry resolved %s to another digest, %s", ref, desc.Digest)
	}
	var m ocispec.Manifest
	if err := fetchManifest(ctx, src, store, desc, &m); err != nil {
		return desc, nil, err
	}
	if m.Config.MediaType != MediaTypeWasmConfig {
		return desc, nil, fmt.Errorf("%s is not a Wasm artifact: its config is %q, not %q (push tools with `wasmcp push`)", desc.Digest, m.Config.MediaType, MediaTypeWasmConfig)
	}
	if len(m.Layers) == 0 || len(m.Layers) > maxLayers {
		return desc, nil, fmt.Errorf("%s has %d layers; a tool has a module and at most its sidecar manifest", desc.Digest, len(m.Layers))
	}
	// Every layer is checked before any is fetched.
	type layer struct {
		desc  ocispec.Descriptor
		limit int64
	}
	var layers []layer
	stem, module := "", false
	for _, l := range m.Layers {
		name := title(l)
		s, kind, err := splitName(name)
		if err != nil {
			return desc, nil, fmt.Errorf("%s: layer %s: %w", desc.Digest, l.Digest, err)
		}
		want, limit := MediaTypeWasm, int64(wregistry.MaxModuleSize)
		if kind != kindModule {
			want, limit = MediaTypeManifest, abi.MaxManifestSize
		}
		switch {
		case kind == kindSignature:
			return desc, nil, fmt.Errorf("%s: layer %q: signatures go in a referrer artifact, not in the tool's", desc.Digest, name)
		case l.MediaType != want:
			return desc, nil, fmt.Errorf("%s: layer %q has media type %q, not %q", desc.Digest, name, l.MediaType, want)
		case stem != "" && s != stem:
			return desc, nil, fmt.Errorf("%s: layer %q is not of tool %q", desc.Digest, name, stem)
		case slices.ContainsFunc(layers, func(o layer) bool { return title(o.desc) == name }):
			return desc, nil, fmt.Errorf("%s: two layers are titled %q", desc.Digest, name)
		}
		stem, module = s, module || kind == kindModule
		// The module first, then its sidecar.
		if kind == kindModule {
			layers = slices.Insert(layers, 0, layer{l, limit})
		} else {
			layers = append(layers, layer{l, limit})
		}
	}
	if !module {
		return desc, nil, fmt.Errorf("%s has no %s layer: it holds no module", desc.Digest, MediaTypeWasm)
	}
	var files []File
	for _, l := range layers {
		data, err := store.Blob(ctx, src, l.desc, l.limit)
		if err != nil {
			return desc, nil, fmt.Errorf("%s: layer %q: %w", desc.Digest, title(l.desc), err)
		}
		files = append(files, File{Name: title(l.desc), Data: data})
	}
	sigs, err := signatures(ctx, src, store, desc, files)
	if err != nil {
		return desc, nil, fmt.Errorf("%s: signatures: %w", desc.Digest, err)
	}
	return desc, append(files, sigs...), nil
}

// fetchManifest fetches an OCI image manifest, within MaxManifestBytes.
func fetchManifest(ctx context.Context, src content.Fetcher, store *Store, desc ocispec.Descriptor, m *ocispec.Manifest) error {
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return fmt.Errorf("%s is a %q, not an OCI image manifest", desc.Digest, desc.MediaType)
	}
	data, err := store.Blob(ctx, src, desc, MaxManifestBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, m); err != nil {
		return fmt.Errorf("manifest %s: %w", desc.Digest, err)
	}
	if m.MediaType != ocispec.MediaTypeImageManifest {
		return fmt.Errorf("manifest %s says it is a %q, not an OCI image manifest", desc.Digest, m.MediaType)
	}
	return nil
}

// signatures fetches the .minisig files of the newest signature artifact
// that refers to the tool's manifest, if there is one. Each must sign one
// of files.
func signatures(ctx context.Context, src oras.ReadOnlyGraphTarget, store *Store, subject ocispec.Descriptor, files []File) ([]File, error) {
	refs, err := signatureReferrers(ctx, src, subject)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, nil
	}
	created := func(d ocispec.Descriptor) time.Time {
		t, _ := time.Parse(time.RFC3339, d.Annotations[ocispec.AnnotationCreated])
		return t
	}
	newest := slices.MaxFunc(refs, func(a, b ocispec.Descriptor) int {
		return cmp.Or(created(a).Compare(created(b)), strings.Compare(a.Digest.String(), b.Digest.String()))
	})
	var m ocispec.Manifest
	if err := fetchManifest(ctx, src, store, newest, &m); err != nil {
		return nil, err
	}
	if m.ArtifactType != ArtifactTypeSignature || m.Subject == nil || m.Subject.Digest != subject.Digest {
		return nil, fmt.Errorf("%s is listed as a signature of %s but is not one", newest.Digest, subject.Digest)
	}
	if len(m.Layers) > maxSignatureLayers {
		return nil, fmt.Errorf("%s has %d layers; a tool has at most %d signatures", newest.Digest, len(m.Layers), maxSignatureLayers)
	}
	var out []File
	for _, l := range m.Layers {
		name := title(l)
		_, kind, err := splitName(name)
		switch {
		case err != nil:
			return nil, fmt.Errorf("layer %s: %w", l.Digest, err)
		case kind != kindSignature || l.MediaType != MediaTypeMinisig:
			return nil, fmt.Errorf("layer %q (%s) is not a %s signature", name, l.MediaType, SignatureSuffix)
		case !slices.ContainsFunc(files, func(f File) bool { return f.Name+SignatureSuffix == name }):
			return nil, fmt.Errorf("layer %q signs no file of the tool", name)
		case slices.ContainsFunc(out, func(f File) bool { return f.Name == name }):
			return nil, fmt.Errorf("two layers are titled %q", name)
		}
		data, err := store.Blob(ctx, src, l, MaxSignatureBytes)
		if err != nil {
			return nil, fmt.Errorf("layer %q: %w", name, err)
		}
		out = append(out, File{Name: name, Data: data})
	}
	return out, nil
}

// signatureReferrers lists the signature artifacts of subject, at most
// MaxReferrers of them.
func signatureReferrers(ctx context.Context, src oras.ReadOnlyGraphTarget, subject ocispec.Descriptor) ([]ocispec.Descriptor, error) {
	tooMany := fmt.Errorf("more than %d signature artifacts, or %d artifacts in all, refer to %s; delete the stale ones", MaxReferrers, maxListed, subject.Digest)
	lister, ok := src.(registry.ReferrerLister)
	if !ok {
		refs, err := registry.Referrers(ctx, src, subject, ArtifactTypeSignature)
		if len(refs) > MaxReferrers {
			return nil, tooMany
		}
		return refs, err
	}
	var refs []ocispec.Descriptor
	listed := 0
	err := lister.Referrers(ctx, subject, ArtifactTypeSignature, func(page []ocispec.Descriptor) error {
		// A registry that filters nothing may list other referrers,
		// page after page: those count too, against a wider bound.
		listed += len(page)
		for _, d := range page {
			if d.ArtifactType == ArtifactTypeSignature {
				refs = append(refs, d)
			}
		}
		if len(refs) > MaxReferrers || listed > maxListed {
			return tooMany
		}
		return nil
	})
	return refs, err
}
