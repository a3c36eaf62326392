package main

import (
	"slices"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/tooltest"
	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

func TestManifest(t *testing.T) {
	m := tooltest.Manifest(t, "remove_note", abi.OutputText)
	if m.Permissions == nil || len(m.Permissions.Dirs) != 1 || m.Permissions.Dirs[0].Guest != root || !m.Permissions.Dirs[0].Write {
		t.Fatalf("the manifest must ask for %s, writable: %+v", root, m.Permissions)
	}
	if !slices.Equal(m.Tools[0].Client, []string{abi.ClientElicitation}) {
		t.Errorf("client = %v; the tool asks by elicitation, and only so", m.Tools[0].Client)
	}
}

func TestOnlyAnAcceptedYesConfirms(t *testing.T) {
	for _, tc := range []struct {
		r    guest.ElicitResult
		want bool
	}{
		{guest.ElicitResult{Action: guest.Accept, Content: map[string]any{"confirm": true}}, true},
		{guest.ElicitResult{Action: guest.Accept, Content: map[string]any{"confirm": false}}, false},
		{guest.ElicitResult{Action: guest.Accept, Content: map[string]any{"confirm": "yes"}}, false},
		{guest.ElicitResult{Action: guest.Accept}, false},
		{guest.ElicitResult{Action: guest.Decline, Content: map[string]any{"confirm": true}}, false},
		{guest.ElicitResult{Action: guest.Cancel}, false},
	} {
		if got := confirmed(&tc.r); got != tc.want {
			t.Errorf("confirmed(%+v) = %v; want %v", tc.r, got, tc.want)
		}
	}
}
