package oci

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// RequestTimeout bounds one request to a registry, a module's download
// included: 64 MiB at a few MiB/s.
const RequestTimeout = 2 * time.Minute

// Remote opens repositories of registries, with credentials and over
// HTTPS unless told otherwise.
type Remote struct {
	plainHTTP []string
	client    *auth.Client
}

// NewRemote makes a Remote. plainHTTP are the registries (HOST or
// HOST:PORT) it reaches over plain HTTP, every other over HTTPS. Its
// credentials are those of authFile (a Docker config.json; "" for none),
// then those of the Docker config file (DOCKER_CONFIG, or
// ~/.docker/config.json) and its credential helpers.
func NewRemote(plainHTTP []string, authFile string) (*Remote, error) {
	store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the Docker config file: %w", err)
	}
	var creds credentials.Store = store
	if authFile != "" {
		// NewStore takes a missing file as an empty one: a mistyped path
		// must not pass for having no credentials.
		if _, err := os.Stat(authFile); err != nil {
			return nil, fmt.Errorf("registry credentials file: %w", err)
		}
		file, err := credentials.NewStore(authFile, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("registry credentials file: %w", err)
		}
		creds = credentials.NewStoreWithFallbacks(file, store)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = 30 * time.Second
	tr.MaxResponseHeaderBytes = 64 << 10
	return &Remote{
		plainHTTP: plainHTTP,
		client: &auth.Client{
			Client:     &http.Client{Transport: tr, Timeout: RequestTimeout},
			Cache:      auth.NewCache(),
			Credential: credentials.Credential(creds),
		},
	}, nil
}

// Repository opens the repository ref names.
func (r *Remote) Repository(ref registry.Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(ref.Registry)
	if err != nil {
		host = ref.Registry
	}
	repo.PlainHTTP = slices.Contains(r.plainHTTP, ref.Registry) || slices.Contains(r.plainHTTP, host)
	repo.Client = r.client
	repo.MaxMetadataBytes = MaxManifestBytes
	// Against a registry without the referrers API, a signature's push
	// rewrites the index under the referrers tag; deleting the index it
	// replaces would fail where deletes are off (Distribution's default),
	// so it is left.
	repo.SkipReferrersGC = true
	return repo, nil
}
