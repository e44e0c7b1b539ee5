package testenv_test

import (
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestSweepStale: a sweep of what earlier runs left takes only the
// networks of the prefixes named that were made before its cut-off: one
// made after it (a live test's) and one of another prefix stay.
func TestSweepStale(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	cli := testenv.DockerClient(t)
	ctx := t.Context()
	run := testenv.Instance(t)
	mk := func(instance string) string {
		t.Helper()
		r, err := cli.NetworkCreate(ctx, "pdk-test-"+instance, network.CreateOptions{Driver: "bridge", Internal: true,
			Labels: map[string]string{provider.LabelInstance: instance}})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	stale, other := mk(run+"-stale"), mk("pdkother-"+testenv.RunID)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, "pdkother-"+testenv.RunID) })
	exists := func(id string) bool {
		_, err := cli.NetworkInspect(ctx, id, network.InspectOptions{})
		return err == nil
	}

	if err := testenv.SweepStale(provider.LabelInstance, []string{run}, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !exists(stale) {
		t.Fatal("a network made after the cut-off was swept")
	}
	if err := testenv.SweepStale(provider.LabelInstance, []string{run}, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if exists(stale) {
		t.Fatal("a network made before the cut-off is still there")
	}
	if !exists(other) {
		t.Fatal("a network of another prefix was swept")
	}
}
