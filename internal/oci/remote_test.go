package oci

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const password = "s3cret-password"

// authRegistry asks for basic auth, and knows no manifest.
func authRegistry(t *testing.T) (host string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "puller" || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func dockerConfig(t *testing.T, dir, host string) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte("puller:" + password))
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// pullError pulls oci://host/tools/echo:v1 through NewRemote(plain, auth).
func pullError(t *testing.T, plain []string, authFile, host string) error {
	t.Helper()
	r, err := NewRemote(plain, authFile)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := ParseReference("oci://" + host + "/tools/echo:v1")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := r.Repository(ref)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Pull(context.Background(), repo, ref.Reference, openStore(t))
	if err == nil {
		t.Fatal("pulled a manifest the registry does not have")
	}
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte("puller:"+password))) {
		t.Fatalf("the error %q holds the credentials", err)
	}
	return err
}

// Credentials come from the auth file, then the Docker config file; a
// registry is reached over plain HTTP only when named.
func TestRemote(t *testing.T) {
	host := authRegistry(t)
	hostname, _, _ := strings.Cut(host, ":")
	t.Setenv("DOCKER_CONFIG", t.TempDir())

	if err := pullError(t, []string{host}, "", host); !strings.Contains(err.Error(), "credential not found") {
		t.Errorf("without credentials: %v; want none found", err)
	}
	authFile := dockerConfig(t, t.TempDir(), host)
	if err := pullError(t, []string{host}, authFile, host); !strings.Contains(err.Error(), "not found") {
		t.Errorf("with the auth file: %v; want the manifest not found", err)
	}
	if err := pullError(t, []string{hostname}, authFile, host); !strings.Contains(err.Error(), "not found") {
		t.Errorf("plain HTTP by host name: %v; want the manifest not found", err)
	}
	if err := pullError(t, nil, authFile, host); !strings.Contains(err.Error(), "https://") {
		t.Errorf("not named plain: %v; want an HTTPS request", err)
	}

	docker := t.TempDir()
	dockerConfig(t, docker, host)
	t.Setenv("DOCKER_CONFIG", docker)
	if err := pullError(t, []string{host}, "", host); !strings.Contains(err.Error(), "not found") {
		t.Errorf("with the Docker config file: %v; want the manifest not found", err)
	}

	if _, err := NewRemote(nil, filepath.Join(t.TempDir(), "absent.json")); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("a missing auth file: %v; want an error naming it", err)
	}
}
