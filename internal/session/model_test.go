package session

import (
	"testing"

	"github.com/paddockhq/paddock/internal/harness"
	"github.com/paddockhq/paddock/internal/store"
)

// TestRuntimeModelGoesWithItsHarness: a prompt naming no model runs the
// runtime's model only on the harness that model is for (the runtime's,
// or the default when it names none); a turn of another harness keeps
// that harness's own default, and a prompt's model always wins.
func TestRuntimeModelGoesWithItsHarness(t *testing.T) {
	s := &Service{def: "claude-code"}
	lookup := func(name string) *harness.Harness {
		h, ok := harness.Lookup(name)
		if !ok {
			t.Fatalf("no harness %s", name)
		}
		return h
	}
	codexRuntime := store.Runtime{Config: store.RuntimeConfig{Harness: "codex", Model: "gpt-5-codex"}}
	defaultRuntime := store.Runtime{Config: store.RuntimeConfig{Model: "claude-sonnet-4-5"}}
	for _, tc := range []struct {
		name    string
		rt      store.Runtime
		harness string
		model   string
		want    string
	}{
		{"the runtime's harness", codexRuntime, "codex", "", "gpt-5-codex"},
		{"another harness", codexRuntime, "claude-code", "", ""},
		{"the prompt's model", codexRuntime, "codex", "o3", "o3"},
		{"the default harness of a runtime naming none", defaultRuntime, "claude-code", "", "claude-sonnet-4-5"},
		{"another harness of a runtime naming none", defaultRuntime, "gemini", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := s.withRuntimeModel(tc.rt, lookup(tc.harness), Request{Model: tc.model})
			if got.Model != tc.want {
				t.Fatalf("model %q, want %q", got.Model, tc.want)
			}
		})
	}
}
