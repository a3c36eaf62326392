package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// fields lists the member names a manifest's objects may have, by where the
// object stands. Schemas are not listed: their keywords are the JSON Schema
// validator's business.
var fields = map[string][]string{
	"manifest":             {"abi", "tools", "resources", "resourceTemplates", "prompts", "limits", "permissions", "start"},
	"permissions":          {"env", "dirs", "http", "secrets"},
	"dir":                  {"guest", "write"},
	"http":                 {"host", "methods"},
	"tool":                 {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons", "_meta", "output", "client", "examples", "execution"},
	"execution":            {"taskSupport", "askFirst"},
	"tool ui":              {"resourceUri", "visibility"},
	"example":              {"name", "arguments", "result", "contains", "isError"},
	"annotations":          {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"},
	"limits":               {"timeout", "memory", "output"},
	"resource":             {"uri", "name", "title", "description", "mimeType", "size", "annotations", "icons", "_meta", "text", "blob"},
	"resource template":    {"uriTemplate", "name", "title", "description", "mimeType", "annotations", "icons", "_meta", "completions", "complete"},
	"resource annotations": {"audience", "priority", "lastModified"},
	"icon":                 {"src", "mimeType", "sizes", "theme"},
	"prompt":               {"name", "title", "description", "arguments", "icons", "_meta", "messages", "complete", "client"},
	"prompt argument":      {"name", "title", "description", "required", "completions"},
	"prompt message":       {"role", "content"},
	"prompt content":       {"type", "text"},
}

// checkKeys requires every member name of the manifest's own objects to be
// spelt exactly as documented and to appear once.
func checkKeys(data []byte) error {
	top, err := members("manifest", data)
	if err != nil || top == nil {
		return err // not an object: the decoder reports it
	}
	if raw, ok := top["limits"]; ok {
		if _, err := members("limits", raw); err != nil {
			return err
		}
	}
	if raw, ok := top["permissions"]; ok {
		perms, err := members("permissions", raw)
		if err != nil {
			return err
		}
		for kind, field := range map[string]string{"dir": "dirs", "http": "http"} {
			var items []json.RawMessage
			if json.Unmarshal(perms[field], &items) != nil {
				continue
			}
			for _, item := range items {
				if _, err := members(kind, item); err != nil {
					return fmt.Errorf("permissions.%s: %w", field, err)
				}
			}
		}
	}
	for _, list := range [...]struct{ kind, field string }{{"resource", "resources"}, {"resource template", "resourceTemplates"}} {
		if err := checkResourceKeys(list.kind, list.field, top[list.field]); err != nil {
			return err
		}
	}
	if err := checkPromptKeys(top["prompts"]); err != nil {
		return err
	}
	var tools []json.RawMessage
	if json.Unmarshal(top["tools"], &tools) != nil {
		return nil
	}
	for i, raw := range tools {
		tool, err := members("tool", raw)
		if err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		for _, kind := range [...]string{"annotations", "execution"} {
			if raw, ok := tool[kind]; ok {
				if _, err := members(kind, raw); err != nil {
					return fmt.Errorf("tool %d: %w", i, err)
				}
			}
		}
		if err := checkIconKeys(tool["icons"]); err != nil {
			return fmt.Errorf("tool %d: %w", i, err)
		}
		var examples []json.RawMessage
		if json.Unmarshal(tool["examples"], &examples) == nil {
			for j, raw := range examples {
				if _, err := members("example", raw); err != nil {
					return fmt.Errorf("tool %d: example %d: %w", i, j, err)
				}
			}
		}
	}
	return nil
}

// checkResourceKeys checks the member names of a list of resources or
// resource templates, their annotations and their icons.
func checkResourceKeys(kind, field string, raw json.RawMessage) error {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	for i, raw := range items {
		item, err := members(kind, raw)
		if err != nil {
			return fmt.Errorf("%s %d: %w", kind, i, err)
		}
		if _, err := members("resource annotations", item["annotations"]); err != nil {
			return fmt.Errorf("%s %d: %w", kind, i, err)
		}
		if err := checkIconKeys(item["icons"]); err != nil {
			return fmt.Errorf("%s %d: %w", kind, i, err)
		}
	}
	return nil
}

// checkIconKeys checks the member names of a list of icons.
func checkIconKeys(raw json.RawMessage) error {
	var icons []json.RawMessage
	if json.Unmarshal(raw, &icons) != nil {
		return nil
	}
	for _, icon := range icons {
		if _, err := members("icon", icon); err != nil {
			return err
		}
	}
	return nil
}

// checkPromptKeys checks the member names of a list of prompts, their
// arguments, icons and messages.
func checkPromptKeys(raw json.RawMessage) error {
	var prompts []json.RawMessage
	if json.Unmarshal(raw, &prompts) != nil {
		return nil
	}
	for i, raw := range prompts {
		p, err := members("prompt", raw)
		if err != nil {
			return fmt.Errorf("prompt %d: %w", i, err)
		}
		for _, list := range [...]struct{ kind, field string }{{"prompt argument", "arguments"}, {"icon", "icons"}, {"prompt message", "messages"}} {
			var items []json.RawMessage
			if json.Unmarshal(p[list.field], &items) != nil {
				continue
			}
			for _, item := range items {
				m, err := members(list.kind, item)
				if err == nil && list.kind == "prompt message" {
					_, err = members("prompt content", m["content"])
				}
				if err != nil {
					return fmt.Errorf("prompt %d: %w", i, err)
				}
			}
		}
	}
	return nil
}

// members reads an object's members, refusing unknown and repeated names.
// It returns nil, nil for a value that is not an object.
func members(kind string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil
		}
		name, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, nil
		}
		if !known(kind, name) {
			return nil, fmt.Errorf("unknown field %q in the %s (fields are case-sensitive: %v)", name, kind, fields[kind])
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("field %q appears twice in the %s", name, kind)
		}
		out[name] = value
	}
	return out, nil
}

func known(kind, name string) bool {
	for _, f := range fields[kind] {
		if f == name {
			return true
		}
	}
	return false
}
