package e2e

import (
	"regexp"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestRandomUUID(t *testing.T) {
	forEachClient(t, func(t *testing.T, cs *mcp.ClientSession) {
		first := text(callTool(t, cs, "random_uuid", nil))
		second := text(callTool(t, cs, "random_uuid", map[string]any{}))
		for _, id := range []string{first, second} {
			if !uuidV4.MatchString(id) {
				t.Errorf("random_uuid = %q; want a version 4 UUID", id)
			}
		}
		if first == second {
			t.Errorf("two calls gave the same UUID %s", first)
		}
		if res := callTool(t, cs, "random_uuid", map[string]any{"count": 2}); !res.IsError {
			t.Errorf("an unexpected argument was accepted: %q", text(res))
		}
	})
}
