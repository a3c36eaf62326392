package oci

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"
	"oras.land/oras-go/v2/registry"

	"github.com/wasmcp/wasmcp/abi"
	wregistry "github.com/wasmcp/wasmcp/internal/registry"
)

var created = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func testTool(version string) Tool {
	return Tool{
		Module:   File{Name: "echo.wasm", Data: []byte("\x00asm\x01\x00\x00\x00" + version)},
		Manifest: &File{Name: "echo" + abi.SidecarSuffix, Data: []byte(`{"tools":[]}` + version)},
		Signatures: []File{
			{Name: "echo.wasm.minisig", Data: []byte("sig of the module " + version)},
			{Name: "echo" + abi.SidecarSuffix + ".minisig", Data: []byte("sig of the manifest " + version)},
		},
	}
}

func openStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A pushed tool is in the Wasm layout, and pulls back as it was pushed,
// its signatures included.
func TestPushPull(t *testing.T) {
	ctx := context.Background()
	dst := memory.New()
	tool := testTool("v1")
	desc, err := Push(ctx, dst, "v1", tool, created)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	fetchJSON(t, dst, desc, &m)
	if m.Config.MediaType != MediaTypeWasmConfig || len(m.Layers) != 2 || m.Layers[0].MediaType != MediaTypeWasm || m.Layers[1].MediaType != MediaTypeManifest {
		t.Fatalf("manifest %+v", m)
	}
	if title(m.Layers[0]) != "echo.wasm" || title(m.Layers[1]) != "echo"+abi.SidecarSuffix {
		t.Errorf("titles %v", m.Layers)
	}
	var cfg wasmConfig
	fetchJSON(t, dst, m.Config, &cfg)
	if cfg.Architecture != "wasm" || cfg.OS != "wasip1" || cfg.Created != "2026-12-01T12:00:00Z" || len(cfg.LayerDigests) != 2 || cfg.LayerDigests[0] != m.Layers[0].Digest {
		t.Errorf("config %+v", cfg)
	}

	got, files, err := Pull(ctx, dst, "v1", openStore(t))
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != desc.Digest {
		t.Errorf("pulled %s; pushed %s", got.Digest, desc.Digest)
	}
	want := []File{tool.Module, *tool.Manifest, tool.Signatures[0], tool.Signatures[1]}
	if len(files) != len(want) {
		t.Fatalf("files %v; want %v", names(files), names(want))
	}
	for i := range want {
		if files[i].Name != want[i].Name || !bytes.Equal(files[i].Data, want[i].Data) {
			t.Errorf("file %d: %s; want %s", i, files[i].Name, want[i].Name)
		}
	}

	// Without a sidecar or signatures, the module alone.
	if _, err := Push(ctx, dst, "bare", Tool{Module: tool.Module}, created); err != nil {
		t.Fatal(err)
	}
	if _, files, err := Pull(ctx, dst, "bare", openStore(t)); err != nil || len(files) != 1 || files[0].Name != "echo.wasm" {
		t.Errorf("bare: %v, %v", names(files), err)
	}
}

// ReadTool reads what lies beside a module.
func TestReadTool(t *testing.T) {
	dir := t.TempDir()
	tool := testTool("v1")
	for _, f := range append([]File{tool.Module, *tool.Manifest}, tool.Signatures...) {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadTool(filepath.Join(dir, "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Manifest == nil || len(got.Signatures) != 2 || got.Signatures[1].Name != "echo"+abi.SidecarSuffix+".minisig" {
		t.Errorf("read %+v", got)
	}
	if _, err := ReadTool(filepath.Join(dir, "echo"+abi.SidecarSuffix)); err == nil {
		t.Error("a manifest was read as a tool to push")
	}
}

// A registry is the attacker's: a manifest that is not a tool's, a name
// that is a path, an unexpected media type, or a size over its bound is
// refused before any of its blobs is read.
func TestPullRefuses(t *testing.T) {
	ctx := context.Background()
	module := content.NewDescriptorFromBytes(MediaTypeWasm, []byte("\x00asm"))
	titled := func(d ocispec.Descriptor, name string) ocispec.Descriptor {
		d.Annotations = map[string]string{ocispec.AnnotationTitle: name}
		return d
	}
	huge := titled(ocispec.Descriptor{MediaType: MediaTypeWasm, Digest: digest.FromString("huge"), Size: wregistry.MaxModuleSize + 1}, "echo.wasm")
	cfg := ocispec.Descriptor{MediaType: MediaTypeWasmConfig, Digest: digest.FromString("{}"), Size: 2}
	for _, tc := range []struct {
		name string
		m    ocispec.Manifest
		want string
	}{
		{"not a Wasm artifact", ocispec.Manifest{Config: ocispec.Descriptor{MediaType: "application/vnd.oci.image.config.v1+json"}, Layers: []ocispec.Descriptor{titled(module, "echo.wasm")}}, "is not a Wasm artifact"},
		{"no layers", ocispec.Manifest{Config: cfg}, "has 0 layers"},
		{"too many layers", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(module, "a.wasm"), titled(module, "b.wasm"), titled(module, "c.wasm")}}, "has 3 layers"},
		{"a path", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(module, "../../etc/echo.wasm")}}, "is not STEM.wasm"},
		{"a hidden file", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(module, ".echo.wasm")}}, "is not STEM.wasm"},
		{"no title", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{module}}, "is not STEM.wasm"},
		{"another file", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(module, "echo.sh")}}, "is not STEM.wasm"},
		{"wrong media type", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(ocispec.Descriptor{MediaType: "application/octet-stream", Digest: module.Digest, Size: module.Size}, "echo.wasm")}}, `has media type "application/octet-stream"`},
		{"a signature among the layers", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(module, "echo.wasm.minisig")}}, "signatures go in a referrer"},
		{"two tools", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(module, "a.wasm"), titled(content.NewDescriptorFromBytes(MediaTypeManifest, []byte("{}")), "b"+abi.SidecarSuffix)}}, `is not of tool "a"`},
		{"no module", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{titled(content.NewDescriptorFromBytes(MediaTypeManifest, []byte("{}")), "echo"+abi.SidecarSuffix)}}, "holds no module"},
		{"a module over the limit", ocispec.Manifest{Config: cfg, Layers: []ocispec.Descriptor{huge}}, "over this server's limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := memory.New()
			if err := src.Push(ctx, module, bytes.NewReader([]byte("\x00asm"))); err != nil {
				t.Fatal(err)
			}
			tc.m.Versioned.SchemaVersion = 2
			tc.m.MediaType = ocispec.MediaTypeImageManifest
			pushManifest(t, src, "v1", tc.m)
			fetches := &countingTarget{ReadOnlyGraphTarget: src}
			_, _, err := Pull(ctx, fetches, "v1", openStore(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one saying %q", err, tc.want)
			}
			if tc.name == "a module over the limit" && fetches.n.Load() != 1 {
				t.Errorf("%d fetches; want the manifest's alone", fetches.n.Load())
			}
		})
	}
}

// A signature artifact is held to what a tool's signatures may be.
func TestPullRefusesSignatures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		sigs []File
		want string
	}{
		{"a path", []File{{Name: "../echo.wasm.minisig", Data: []byte("x")}}, "is not STEM.wasm"},
		{"not a signature", []File{{Name: "echo.wasm", Data: []byte("x")}}, "is not a .minisig signature"},
		{"signs another file", []File{{Name: "other.wasm.minisig", Data: []byte("x")}}, "signs no file of the tool"},
		{"too big", []File{{Name: "echo.wasm.minisig", Data: bytes.Repeat([]byte("x"), MaxSignatureBytes+1)}}, "over this server's limit"},
		{"too many", []File{{Name: "echo.wasm.minisig", Data: []byte("1")}, {Name: "echo.wasm.minisig", Data: []byte("2")}, {Name: "echo.wasm.minisig", Data: []byte("3")}}, "has 3 layers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := memory.New()
			tool := testTool("v1")
			tool.Signatures = nil
			desc, err := Push(ctx, dst, "v1", tool, created)
			if err != nil {
				t.Fatal(err)
			}
			var layers []ocispec.Descriptor
			for _, f := range tc.sigs {
				d, err := pushFile(ctx, dst, MediaTypeMinisig, f)
				if err != nil {
					t.Fatal(err)
				}
				layers = append(layers, d)
			}
			if _, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, ArtifactTypeSignature, oras.PackManifestOptions{Subject: &desc, Layers: layers}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Pull(ctx, dst, "v1", openStore(t)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one saying %q", err, tc.want)
			}
		})
	}

	t.Run("the newest of several", func(t *testing.T) {
		dst := memory.New()
		desc, err := Push(ctx, dst, "v1", testTool("old"), created)
		if err != nil {
			t.Fatal(err)
		}
		d, err := pushFile(ctx, dst, MediaTypeMinisig, File{Name: "echo.wasm.minisig", Data: []byte("newer")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, ArtifactTypeSignature, oras.PackManifestOptions{
			Subject: &desc, Layers: []ocispec.Descriptor{d},
			ManifestAnnotations: map[string]string{ocispec.AnnotationCreated: created.Add(time.Hour).Format(time.RFC3339)},
		}); err != nil {
			t.Fatal(err)
		}
		_, files, err := Pull(ctx, dst, "v1", openStore(t))
		if err != nil || len(files) != 3 || string(files[2].Data) != "newer" {
			t.Fatalf("files %v, %v; want the newer signature alone", names(files), err)
		}
	})
}

// The store takes a blob only if it is what its digest says, and gives
// one back only if it still is.
func TestStoreVerifies(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	good := []byte("the module")
	desc := content.NewDescriptorFromBytes(MediaTypeWasm, good)
	lying := content.FetcherFunc(func(context.Context, ocispec.Descriptor) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("the moduly")), nil
	})
	if _, err := store.Blob(ctx, lying, desc, 1<<20); err == nil {
		t.Fatal("a blob whose digest is not its descriptor's was taken")
	}
	path := filepath.Join(store.dir, "blobs", "sha256", desc.Digest.Encoded())
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused blob was stored: %v", err)
	}
	honest := content.FetcherFunc(func(context.Context, ocispec.Descriptor) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(good)), nil
	})
	if data, err := store.Blob(ctx, honest, desc, 1<<20); err != nil || !bytes.Equal(data, good) {
		t.Fatalf("blob %q, %v", data, err)
	}
	// Tampered with on disk, it is fetched again.
	if err := os.WriteFile(path, []byte("the moduly"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Blob(ctx, lying, desc, 1<<20); err == nil {
		t.Fatal("a tampered stored blob was given back")
	}
	if data, err := store.Blob(ctx, honest, desc, 1<<20); err != nil || !bytes.Equal(data, good) {
		t.Fatalf("blob %q, %v", data, err)
	}
	if _, err := store.Blob(ctx, honest, desc, desc.Size-1); err == nil || !strings.Contains(err.Error(), "over this server's limit") {
		t.Errorf("error %v; want the bound's", err)
	}
}

// Materialize moves a source to a new tree in one rename, and Prune
// removes the tree left behind.
func TestMaterialize(t *testing.T) {
	store := openStore(t)
	v1 := []File{{Name: "echo.wasm", Data: []byte("v1")}}
	dir, moved, err := store.Materialize("src", v1)
	if err != nil || !moved {
		t.Fatal(moved, err)
	}
	if _, moved, err := store.Materialize("src", v1); err != nil || moved {
		t.Errorf("the same files again: moved %v, %v", moved, err)
	}
	if _, _, err := store.Materialize("src", []File{{Name: "echo.wasm", Data: []byte("v2")}}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "echo.wasm")); err != nil || string(data) != "v2" {
		t.Fatalf("served %q, %v", data, err)
	}
	if err := store.Prune(); err != nil {
		t.Fatal(err)
	}
	if trees, _ := os.ReadDir(filepath.Join(store.dir, "trees")); len(trees) != 1 {
		t.Errorf("%d trees after pruning; want the one served", len(trees))
	}
}

// Pruning keeps the blobs of what sources serve, and only those.
func TestPruneBlobs(t *testing.T) {
	ctx := context.Background()
	src := memory.New()
	store := openStore(t)
	if _, err := Push(ctx, src, "v1", testTool("v1"), created); err != nil {
		t.Fatal(err)
	}
	_, v1, err := Pull(ctx, src, "v1", store)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, src, "v1", testTool("v2"), created); err != nil {
		t.Fatal(err)
	}
	_, v2, err := Pull(ctx, src, "v1", store)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Materialize("src", v2); err != nil {
		t.Fatal(err)
	}
	if err := store.Prune(); err != nil {
		t.Fatal(err)
	}
	has := func(f File) bool {
		sum := sha256.Sum256(f.Data)
		_, err := os.Stat(filepath.Join(store.dir, "blobs", "sha256", hex.EncodeToString(sum[:])))
		return err == nil
	}
	for i := range v2 {
		if !has(v2[i]) {
			t.Errorf("%s of the version served was pruned", v2[i].Name)
		}
		if has(v1[i]) {
			t.Errorf("%s of the version left was kept", v1[i].Name)
		}
	}
	if blobs, _ := os.ReadDir(filepath.Join(store.dir, "blobs", "sha256")); len(blobs) != len(v2) {
		t.Errorf("%d blobs kept; want the %d files served", len(blobs), len(v2))
	}
}

// Sources pull their tags again, serve a new digest, and keep what they
// serve when a pull fails; one failing source does not stop another.
func TestSources(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	good := memory.New()
	if _, err := Push(ctx, good, "v1", testTool("v1"), created); err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	open := func(ref registry.Reference) (oras.ReadOnlyGraphTarget, error) {
		if ref.Repository == "down" || down.Load() {
			return nil, errors.New("connection refused")
		}
		return good, nil
	}
	s, err := NewSources([]string{"oci://r/tools/echo:v1", "oci://r/down:v1"}, SourceOptions{Store: openStore(t), Open: open, Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan []State, 100)
	go s.Run(ctx, slog.New(slog.DiscardHandler), func() { changed <- s.States() })
	next := func(ok func([]State) bool) []State {
		t.Helper()
		for st := range changed {
			if ok(st) {
				return st
			}
		}
		return nil
	}
	st := next(func(st []State) bool { return st[0].Dir != "" && st[1].Err != nil })
	if st[1].Dir != "" || !strings.Contains(st[1].Err.Error(), "connection refused") {
		t.Errorf("failing source: %+v", st[1])
	}
	first := st[0].Digest
	if data, err := os.ReadFile(filepath.Join(st[0].Dir, "echo.wasm")); err != nil || !strings.HasSuffix(string(data), "v1") {
		t.Fatalf("served %q, %v", data, err)
	}
	select {
	case <-s.Pulled():
		t.Fatal("pulled, with a source never pulled")
	default:
	}

	if _, err := Push(ctx, good, "v1", testTool("v2"), created); err != nil {
		t.Fatal(err)
	}
	st = next(func(st []State) bool { return st[0].Digest != first })
	if data, err := os.ReadFile(filepath.Join(st[0].Dir, "echo.wasm")); err != nil || !strings.HasSuffix(string(data), "v2") {
		t.Fatalf("served %q, %v", data, err)
	}

	down.Store(true)
	st = next(func(st []State) bool { return st[0].Err != nil })
	if data, err := os.ReadFile(filepath.Join(st[0].Dir, "echo.wasm")); err != nil || !strings.HasSuffix(string(data), "v2") {
		t.Fatalf("after a failed pull, served %q, %v; want v2 still", data, err)
	}
}

func TestParseReference(t *testing.T) {
	for _, ref := range []string{"oci://127.0.0.1:5000/tools/echo:v1", "oci://r.example/a/b@sha256:" + strings.Repeat("ab", 32)} {
		if _, err := ParseReference(ref); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	for ref, want := range map[string]string{
		"127.0.0.1:5000/tools/echo:v1":    "is not an OCI reference",
		"oci://127.0.0.1:5000/tools/echo": "names no tag or digest",
		"oci://echo:v1":                   "missing registry or repository",
	} {
		if _, err := ParseReference(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v; want %q", ref, err, want)
		}
	}
}

// countingTarget counts fetches.
type countingTarget struct {
	oras.ReadOnlyGraphTarget
	n atomic.Int32
}

func (c *countingTarget) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	c.n.Add(1)
	return c.ReadOnlyGraphTarget.Fetch(ctx, d)
}

func pushManifest(t *testing.T, dst oras.Target, tag string, m ocispec.Manifest) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageManifest, data)
	ctx := context.Background()
	if err := dst.Push(ctx, d, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := dst.Tag(ctx, d, tag); err != nil {
		t.Fatal(err)
	}
}

func fetchJSON(t *testing.T, src content.Fetcher, d ocispec.Descriptor, v any) {
	t.Helper()
	data, err := content.FetchAll(context.Background(), src, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func names(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	return out
}

// endlessReferrers is a registry whose referrers API pages on forever.
type endlessReferrers struct {
	oras.ReadOnlyGraphTarget
	artifactType string
}

func (e endlessReferrers) Referrers(_ context.Context, _ ocispec.Descriptor, _ string, fn func([]ocispec.Descriptor) error) error {
	for {
		page := make([]ocispec.Descriptor, 10)
		for i := range page {
			page[i] = ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, ArtifactType: e.artifactType, Digest: digest.FromString("x"), Size: 1}
		}
		if err := fn(page); err != nil {
			return err
		}
	}
}

// Listing referrers stops at its bounds, of signatures and of all.
func TestReferrersBounded(t *testing.T) {
	ctx := context.Background()
	dst := memory.New()
	if _, err := Push(ctx, dst, "v1", Tool{Module: testTool("v1").Module}, created); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{ArtifactTypeSignature, "application/vnd.example.sbom"} {
		_, _, err := Pull(ctx, endlessReferrers{dst, kind}, "v1", openStore(t))
		if err == nil || !strings.Contains(err.Error(), "signature artifacts") {
			t.Errorf("endless referrers of %s: error %v; want the bound's", kind, err)
		}
	}

	// A store without the referrers API is held to the same bound.
	desc, err := dst.Resolve(ctx, "v1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range MaxReferrers + 1 {
		sig, err := pushFile(ctx, dst, MediaTypeMinisig, File{Name: "echo.wasm.minisig", Data: fmt.Appendf(nil, "sig %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, ArtifactTypeSignature, oras.PackManifestOptions{Subject: &desc, Layers: []ocispec.Descriptor{sig}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Pull(ctx, dst, "v1", openStore(t)); err == nil || !strings.Contains(err.Error(), "signature artifacts") {
		t.Errorf("%d signature artifacts: error %v; want the bound's", MaxReferrers+1, err)
	}
}

// A source that an earlier run of the store materialized serves that at
// once, before its first pull, which alone makes it pulled.
func TestSourcesServeTheStoreAtStart(t *testing.T) {
	store := openStore(t)
	open := func(registry.Reference) (oras.ReadOnlyGraphTarget, error) {
		return nil, errors.New("connection refused")
	}
	ref := "oci://r/tools/echo@sha256:" + strings.Repeat("ab", 32)
	first, err := NewSources([]string{ref}, SourceOptions{Store: store, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Materialize(first.list[0].key, []File{{Name: "echo.wasm", Data: []byte("v1")}}); err != nil {
		t.Fatal(err)
	}
	again, err := NewSources([]string{ref}, SourceOptions{Store: store, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	if st := again.States()[0]; st.Dir == "" || st.Err != nil {
		t.Errorf("state %+v; want the store's directory", st)
	}
	select {
	case <-again.Pulled():
		t.Error("pulled before any pull")
	default:
	}
}

// An error's text is cut short, still valid UTF-8.
func TestBrief(t *testing.T) {
	err := brief(errors.New(strings.Repeat("é", maxErrorText)))
	if msg := err.Error(); len(msg) > maxErrorText+len("…") || !utf8.ValidString(msg) {
		t.Errorf("%d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
	}
}
