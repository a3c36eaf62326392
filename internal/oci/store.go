package oci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/wasmcp/wasmcp/internal/atomicfile"
	"oras.land/oras-go/v2/content"
)

// File is one file of a tool: its plain name (STEM.wasm,
// STEM.manifest.json, or either with .minisig) and content.
type File struct {
	Name string
	Data []byte
}

// Store is a content-addressed directory of what was pulled:
//
//	blobs/sha256/HEX   each blob, by its digest, checked on the way in and out
//	trees/HEX          a tool's files by name, HEX hashing their names and digests
//	sources/KEY        a link to the tree a source serves now
//
// A tree never changes once made; a source moves to another by replacing
// its link, in one rename, so that whoever reads the directory sees the
// old files or the new, never a mix.
type Store struct {
	dir string
	mu  sync.Mutex // trees and links, against Prune
}

// OpenStore opens (making it if need be) the store in dir.
func OpenStore(dir string) (*Store, error) {
	for _, sub := range []string{"blobs/sha256", "trees", "sources"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("opening the OCI store: %w", err)
		}
	}
	return &Store{dir: dir}, nil
}

// Blob returns the content desc describes, from the store if it holds it,
// else fetched and stored. It refuses a descriptor over limit before
// reading anything, and content whose digest or size is not desc's.
func (s *Store) Blob(ctx context.Context, src content.Fetcher, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	if desc.Digest.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("digest %q is not a sha256 digest", desc.Digest)
	}
	if err := desc.Digest.Validate(); err != nil {
		return nil, fmt.Errorf("digest %q: %w", desc.Digest, err)
	}
	if desc.Size < 0 || desc.Size > limit {
		return nil, fmt.Errorf("%s %s is %d bytes, %w of %d", desc.MediaType, desc.Digest, desc.Size, errTooBig, limit)
	}
	path := filepath.Join(s.dir, "blobs", "sha256", desc.Digest.Encoded())
	if data, err := readVerified(path, desc); err == nil {
		return data, nil
	}
	rc, err := src.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", desc.Digest, err)
	}
	defer rc.Close()
	data, err := content.ReadAll(rc, desc)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", desc.Digest, err)
	}
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return nil, fmt.Errorf("storing %s: %w", desc.Digest, err)
	}
	return data, nil
}

// readVerified reads a stored blob, if it is there and still what its
// name says.
func readVerified(path string, desc ocispec.Descriptor) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return content.ReadAll(f, desc)
}

// Materialize makes the tree of files and points the source key at it.
// It returns the path the source's files are served from, the same
// whatever tree it points to, and whether it pointed elsewhere before.
func (s *Store) Materialize(key string, files []File) (dir string, moved bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := sha256.New()
	for _, f := range files {
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(h, "%s %x\n", f.Name, sum)
	}
	name := hex.EncodeToString(h.Sum(nil))
	tree := filepath.Join(s.dir, "trees", name)
	if _, err := os.Stat(tree); errors.Is(err, fs.ErrNotExist) {
		tmp, err := os.MkdirTemp(filepath.Join(s.dir, "trees"), ".new-")
		if err != nil {
			return "", false, fmt.Errorf("materializing: %w", err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(tmp, f.Name), f.Data, 0o600); err != nil {
				os.RemoveAll(tmp)
				return "", false, fmt.Errorf("materializing: %w", err)
			}
		}
		if err := os.Rename(tmp, tree); err != nil {
			os.RemoveAll(tmp)
			return "", false, fmt.Errorf("materializing: %w", err)
		}
	} else if err != nil {
		return "", false, fmt.Errorf("materializing: %w", err)
	}
	link := s.SourceDir(key)
	target := filepath.Join("..", "trees", name)
	if old, err := os.Readlink(link); err == nil && old == target {
		return link, false, nil
	}
	tmp := link + ".new"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return "", false, fmt.Errorf("materializing: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return "", false, fmt.Errorf("materializing: %w", err)
	}
	return link, true, nil
}

// SourceDir is the directory a source's files are served from.
func (s *Store) SourceDir(key string) string { return filepath.Join(s.dir, "sources", key) }

// Prune removes the trees no source points to, and the blobs that are no
// file of a tree left: those of the versions sources moved on from, and
// the OCI manifests, which are small and fetched again at the next pull.
// Call it once nothing reads a tree a source has left (after the reload
// that follows Materialize).
func (s *Store) Prune() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	links, err := os.ReadDir(filepath.Join(s.dir, "sources"))
	if err != nil {
		return err
	}
	var live []string
	for _, l := range links {
		if target, err := os.Readlink(filepath.Join(s.dir, "sources", l.Name())); err == nil {
			live = append(live, filepath.Base(target))
		}
	}
	trees, err := os.ReadDir(filepath.Join(s.dir, "trees"))
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range trees {
		if !slices.Contains(live, t.Name()) && !strings.HasPrefix(t.Name(), ".new-") {
			errs = append(errs, os.RemoveAll(filepath.Join(s.dir, "trees", t.Name())))
		}
	}
	// A tree's files are its blobs' contents: their digests are the
	// blobs kept.
	kept := map[string]bool{}
	for _, t := range live {
		files, err := os.ReadDir(filepath.Join(s.dir, "trees", t))
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(s.dir, "trees", t, f.Name()))
			if err != nil {
				return errors.Join(append(errs, err)...)
			}
			sum := sha256.Sum256(data)
			kept[hex.EncodeToString(sum[:])] = true
		}
	}
	blobs := filepath.Join(s.dir, "blobs", "sha256")
	entries, err := os.ReadDir(blobs)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, b := range entries {
		if !kept[b.Name()] && !strings.HasPrefix(b.Name(), ".new-") {
			errs = append(errs, os.Remove(filepath.Join(blobs, b.Name())))
		}
	}
	return errors.Join(errs...)
}
