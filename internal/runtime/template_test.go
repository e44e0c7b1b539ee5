package runtime

import (
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/sidecar"
	"github.com/paddockhq/paddock/internal/store"
)

// TestFromTemplate: each setting a project gives overrides its template's,
// the network as a whole; what it leaves out is the template's.
func TestFromTemplate(t *testing.T) {
	tpl := store.RuntimeConfig{Image: "paddock/x:1", CPUMillis: 500, MemoryMB: 256, Secrets: []string{"a"},
		Network: store.NetworkConfig{Mode: "proxy", Allow: []string{"pypi.org"}}, Harness: "codex", Model: "m-1",
		IdleTimeoutSeconds: 60, ArchiveAfterSeconds: 3600}
	computerUse := sidecar.Image([]string{"computer_use"})
	for _, tc := range []struct {
		name       string
		tpl, given store.RuntimeConfig
		want       store.RuntimeConfig
	}{
		{"nothing given", tpl, store.RuntimeConfig{}, tpl},
		{"scalars", tpl, store.RuntimeConfig{MemoryMB: 512, Model: "m-2", Harness: "gemini"},
			func() store.RuntimeConfig { c := tpl; c.MemoryMB, c.Model, c.Harness = 512, "m-2", "gemini"; return c }()},
		{"the network as a whole", tpl, store.RuntimeConfig{Network: store.NetworkConfig{Mode: "none"}},
			func() store.RuntimeConfig { c := tpl; c.Network = store.NetworkConfig{Mode: "none"}; return c }()},
		{"secrets replaced, emptied", tpl, store.RuntimeConfig{Secrets: []string{}},
			func() store.RuntimeConfig { c := tpl; c.Secrets = []string{}; return c }()},
		{"ports replaced", func() store.RuntimeConfig { c := tpl; c.Ports = []store.DeclaredPort{{Port: 80}}; return c }(),
			store.RuntimeConfig{Ports: []store.DeclaredPort{{Port: 3000, Public: true}}},
			func() store.RuntimeConfig {
				c := tpl
				c.Ports = []store.DeclaredPort{{Port: 3000, Public: true}}
				return c
			}()},
		{"sidecars keep a template's own image", tpl, store.RuntimeConfig{Sidecars: []string{}},
			func() store.RuntimeConfig { c := tpl; c.Sidecars = []string{}; return c }()},
		{"sidecars choose their image again", store.RuntimeConfig{Image: computerUse, Sidecars: []string{"computer_use"}},
			store.RuntimeConfig{Sidecars: []string{}}, store.RuntimeConfig{Sidecars: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromTemplate(tc.tpl, tc.given); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("FromTemplate = %+v, want %+v", got, tc.want)
			}
		})
	}
}
