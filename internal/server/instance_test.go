package server

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
)

// TestInstanceRefusedStart: instance mode whose setting names what cannot
// be: a name of the wrong shape refuses the build, a template that does
// not exist the start, each naming the setting; the refused start made no
// project.
func TestInstanceRefusedStart(t *testing.T) {
	for _, tc := range []struct {
		name, instance, template, want string
		atStart                        bool
	}{
		{"bad name", "Acme/dev/svc", "", `instance (PADDOCK_INSTANCE): org name "Acme"`, false},
		{"no template", "acme/dev/svc", "missing", `instance (PADDOCK_INSTANCE) "acme/dev/svc": its project: instance_template (PADDOCK_INSTANCE_TEMPLATE) "missing"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, f, ln := failingConfig(t)
			cfg.Instance, cfg.InstanceTemplate = tc.instance, tc.template
			s, err := Build(t.Context(), cfg, slog.New(slog.DiscardHandler), io.Discard, Overrides{Listener: ln, Providers: []provider.Provider{f}, Manual: true})
			if !tc.atStart {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("build = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close(context.Background()) })
			if err := s.Start(t.Context()); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("start = %v, want %q", err, tc.want)
			}
			o, err := s.Store().GetOrgByName(t.Context(), "acme")
			if err != nil {
				t.Fatal(err)
			}
			ws, err := s.Store().GetWorkspaceByName(t.Context(), o.ID, "dev")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Store().GetProjectByName(t.Context(), ws.ID, "svc"); !errdefs.IsNotFound(err) {
				t.Fatalf("the refused start's project: %v", err)
			}
		})
	}
}
