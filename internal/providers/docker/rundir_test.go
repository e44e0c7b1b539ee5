package docker_test

import (
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestReplicasShareTheRunDir: servers of one installation starting at once
// on one run directory mount one tmpfs there, not one over another; a
// server whose start fails leaves the mount while another uses it, and
// takes it away once none does.
func TestReplicasShareTheRunDir(t *testing.T) {
	e := newEnv(t)
	runDir := filepath.Join(testenv.ShortTempDir(t), "r")
	open := func() *docker.Provider {
		p, err := docker.New(docker.Config{
			Name: "docker", Instance: e.instance, ShimPath: e.shim, RunDir: runDir, DiskDir: e.diskDir,
		}, slog.New(slog.NewTextHandler(t.Output(), nil)))
		if err != nil {
			t.Error(err)
		}
		return p
	}

	var wg sync.WaitGroup
	replicas := make([]*docker.Provider, 6)
	for i := range replicas {
		wg.Go(func() { replicas[i] = open() })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if m := testenv.MountsUnder(runDir); len(m) != 1 {
		t.Fatalf("mounts under the run directory after %d replicas started at once: %v, want one", len(replicas), m)
	}
	for _, p := range replicas {
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	testenv.UnmountUnder(runDir)

	first := open() // mounts the run directory
	second := open()
	defer second.Close()
	if err := first.ReleaseRunDir(); err != nil {
		t.Fatal(err)
	}
	if m := testenv.MountsUnder(runDir); len(m) != 1 {
		t.Fatalf("a failed start took the run directory from a replica that uses it: mounts %v", m)
	}
	second.Close()
	if err := first.ReleaseRunDir(); err != nil {
		t.Fatal(err)
	}
	first.Close()
	if m := testenv.MountsUnder(runDir); len(m) != 0 {
		t.Errorf("the run directory stays mounted after its last user's failed start: %v", m)
	}
}
