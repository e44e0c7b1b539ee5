package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockhq/paddock/internal/imagebuild"
	"github.com/paddockhq/paddock/internal/server/servertest"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestImageBuildsOtherProvider: a runtime on a provider the builder does
// not build for starts on an image the builder has still to make (its
// provider has it); on the builder's own it is told image_building.
func TestImageBuildsOtherProvider(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "build.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nif [ \"$1\" = --list ]; then echo slow paddock/slow:1; exit 0; fi\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	newBuilder := func() *imagebuild.Builder {
		b, err := imagebuild.New(t.Context(), imagebuild.Config{
			Script: script, Targets: []string{"slow"},
			Present: func(context.Context, string) (bool, error) { return false, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		buildsFor []string
		status    int
	}{{nil, 503}, {[]string{"elsewhere"}, 200}} {
		s := servertest.New(t, servertest.Options{Builds: newBuilder(), BuildsFor: tc.buildsFor})
		s.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "acme"})
		s.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "dev"})
		var p pc.Project
		s.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{Name: "p", Runtime: &pc.RuntimeConfig{Image: "paddock/slow:1"}}).Decode(t, &p)
		if res := s.Do(t, "POST", "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID+"/start", nil); res.Status != tc.status {
			t.Fatalf("builds for %v: start = %d %s, want %d", tc.buildsFor, res.Status, res.Body, tc.status)
		}
	}
}
