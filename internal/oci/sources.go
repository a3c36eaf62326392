package oci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/registry"
)

// DefaultPullTimeout bounds one pull of a source: resolving, the
// manifest, the layers and the signatures.
const DefaultPullTimeout = 5 * time.Minute

// retryDelay is how soon a failed pull is tried again when tags are not
// resolved again (an interval of 0).
const retryDelay = time.Minute

// maxErrorText bounds the text of a pull's error kept and shown: it may
// quote what the registry answered.
const maxErrorText = 1024

// SourceOptions configure Sources.
type SourceOptions struct {
	Store *Store
	// Open opens the repository of a reference (Remote.Repository, in a
	// server).
	Open func(registry.Reference) (oras.ReadOnlyGraphTarget, error)
	// Interval is how often a tag is resolved again, its new digest
	// pulled; 0: once pulled, never. A failed pull is tried again after
	// Interval, or a minute if it is 0.
	Interval time.Duration
	// Timeout bounds one pull (default DefaultPullTimeout).
	Timeout time.Duration
}

// State is what a source serves.
type State struct {
	// Ref is the source's reference, as configured.
	Ref string
	// Dir is the directory its files are in, "" while it has none.
	Dir string
	// Digest is the manifest digest it serves, "" before its first pull
	// (which may be from an earlier run's store).
	Digest string
	// Err says why its last pull failed; nil after one that did not.
	Err error
}

// Sources keep the tools that OCI references name pulled into a store,
// each source in a directory of its own (State.Dir), and one source's
// failures apart from another's.
type Sources struct {
	opts    SourceOptions
	log     *slog.Logger
	changed func()
	list    []*source
	pulled  chan struct{}
	pending sync.WaitGroup
	// reloading keeps calls of changed from overlapping.
	reloading sync.Mutex
}

type source struct {
	ref    string
	parsed registry.Reference
	key    string
	once   sync.Once // marks its first pull done
	mu     sync.Mutex
	state  State
}

// NewSources parses the references (oci://REGISTRY/REPOSITORY:TAG or
// @sha256:DIGEST). A source whose directory the store already has (from an
// earlier run) serves it until its first pull replaces it.
func NewSources(refs []string, opts SourceOptions) (*Sources, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultPullTimeout
	}
	s := &Sources{opts: opts, pulled: make(chan struct{})}
	seen := map[string]bool{}
	for _, ref := range refs {
		parsed, err := ParseReference(ref)
		if err != nil {
			return nil, err
		}
		if seen[ref] {
			return nil, fmt.Errorf("source %s is given twice", ref)
		}
		seen[ref] = true
		sum := sha256.Sum256([]byte(ref))
		src := &source{ref: ref, parsed: parsed, key: hex.EncodeToString(sum[:8]), state: State{Ref: ref}}
		if dir := opts.Store.SourceDir(src.key); exists(dir) {
			src.state.Dir = dir
		}
		s.list = append(s.list, src)
	}
	s.pending.Add(len(s.list))
	go func() {
		s.pending.Wait()
		close(s.pulled)
	}()
	return s, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Run pulls every source, and again each Interval, until ctx ends. It
// calls changed when a source's files, or why its last pull failed,
// changed: the caller reloads, and the registry reads the source's
// directory again. Calls of changed do not overlap.
func (s *Sources) Run(ctx context.Context, log *slog.Logger, changed func()) {
	s.log, s.changed = log, changed
	var wg sync.WaitGroup
	for _, src := range s.list {
		wg.Go(func() { s.run(ctx, src) })
	}
	wg.Wait()
}

// Pulled is closed once every source has been pulled once.
func (s *Sources) Pulled() <-chan struct{} { return s.pulled }

// States returns what each source serves, in the order configured.
func (s *Sources) States() []State {
	out := make([]State, len(s.list))
	for i, src := range s.list {
		src.mu.Lock()
		out[i] = src.state
		src.mu.Unlock()
	}
	return out
}

func (s *Sources) run(ctx context.Context, src *source) {
	for {
		err := s.pull(ctx, src)
		delay := s.opts.Interval
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && (delay == 0 || IsDigest(src.parsed)):
			return // nothing it names can change
		case delay == 0:
			delay = retryDelay
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// pull pulls a source once, and records what it gave.
func (s *Sources) pull(ctx context.Context, src *source) error {
	pctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	var (
		dir, digest string
		moved       bool
	)
	repo, err := s.opts.Open(src.parsed)
	if err == nil {
		var desc ocispec.Descriptor
		var files []File
		desc, files, err = Pull(pctx, repo, src.parsed.Reference, s.opts.Store)
		digest = desc.Digest.String()
		if err == nil {
			dir, moved, err = s.opts.Store.Materialize(src.key, files)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err() // shutting down: nothing to record
	}
	if err != nil {
		err = brief(err)
	}
	src.mu.Lock()
	prev := src.state
	if err != nil {
		src.state.Err = err
	} else {
		src.state = State{Ref: src.ref, Dir: dir, Digest: digest}
	}
	src.mu.Unlock()
	log := s.log.With("source", src.ref)
	if moved || (err == nil) != (prev.Err == nil) || (err != nil && err.Error() != prev.Err.Error()) {
		s.reloading.Lock()
		s.changed()
		if moved {
			if perr := s.opts.Store.Prune(); perr != nil {
				log.Warn("pruning the OCI store", "error", perr)
			}
		}
		s.reloading.Unlock()
	}
	// Logged once served (or kept), for whoever waits on the log.
	switch {
	case err != nil:
		log.Warn("pulling a tool source failed; what it served keeps serving", "error", err)
	case moved || prev.Digest != digest:
		log.Info("pulled tool source", "digest", digest, "dir", dir)
	}
	if err == nil {
		src.once.Do(s.pending.Done)
	}
	return err
}

// brief bounds an error's text, which may quote the registry.
func brief(err error) error {
	if msg := err.Error(); len(msg) > maxErrorText {
		return errors.New(strings.ToValidUTF8(msg[:maxErrorText], "") + "…")
	}
	return err
}
