package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	v0 "github.com/modelcontextprotocol/registry/pkg/api/v0"
	"github.com/modelcontextprotocol/registry/pkg/model"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkRegistryEntry checks the server.json that scripts/mcpb wrote beside
// bundle, whose bytes are data: it decodes into the MCP registry's own Go
// type for it with no member left over, names the registry's current schema,
// is valid against the schema the registry's module ships, and gives the
// bundle's SHA-256, which the registry requires of an MCPB package.
func checkRegistryEntry(t *testing.T, bundle string, data []byte) {
	t.Helper()
	raw, err := os.ReadFile(strings.TrimSuffix(bundle, ".mcpb") + ".server.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var entry v0.ServerJSON
	if err := dec.Decode(&entry); err != nil {
		t.Fatalf("server.json is not the registry's ServerJSON: %v\n%s", err, raw)
	}
	if entry.Schema != model.CurrentSchemaURL {
		t.Errorf("server.json names schema %q; the registry's current is %q", entry.Schema, model.CurrentSchemaURL)
	}
	sum := sha256.Sum256(data)
	if len(entry.Packages) != 1 || entry.Packages[0].RegistryType != model.RegistryTypeMCPB ||
		entry.Packages[0].FileSHA256 != hex.EncodeToString(sum[:]) || !strings.HasSuffix(entry.Packages[0].Identifier, "/"+filepath.Base(bundle)) {
		t.Errorf("server.json's packages %+v; want the bundle, with its SHA-256", entry.Packages)
	}

	// The schema the registry's module holds (its draft, which only
	// widens 2025-12-11's remote URL pattern), read from the module cache:
	// a dependency, not a copy.
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/modelcontextprotocol/registry").Output()
	if err != nil {
		t.Fatalf("finding the registry module: %v", err)
	}
	schemaFile := filepath.Join(strings.TrimSpace(string(out)), "docs", "reference", "server-json", "draft", "server.schema.json")
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaFile, doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Errorf("server.json is not valid against the registry's schema: %#v", err)
	}
}
