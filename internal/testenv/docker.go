package testenv

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
)

// RunID is unique to this test process; instance labels built from it let
// a sweep touch only what this process created.
var RunID = func() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// Instance returns a fresh instance label value for t, under this process's
// RunID.
func Instance(t testing.TB) string {
	return "pdktest-" + RunID + "-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
}

// DockerClient returns a Docker API client closed when t ends.
func DockerClient(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// DockerClientOn returns a client of the engine at host (a dedicated
// one's), closed when t ends.
func DockerClientOn(t testing.TB, host string) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.WithHost(host), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// ShortTempDir returns a new directory with a short path (agent socket
// paths must stay under 108 bytes), removed when t ends.
func ShortTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "pdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		UnmountUnder(d) // a Docker provider's run directory is a tmpfs
		_ = os.RemoveAll(d)
	})
	return d
}

// ProviderEnv selects the provider the end-to-end tests run on:
// PADDOCK_TEST_PROVIDER=gvisor runs them under gVisor (the docker provider
// with runtime runsc, named "gvisor"); unset or "docker", under runc.
const ProviderEnv = "PADDOCK_TEST_PROVIDER"

// TestProvider returns the name and OCI runtime of the provider the
// end-to-end tests run on (see ProviderEnv).
func TestProvider(t testing.TB) (name, runtime string) {
	switch v := os.Getenv(ProviderEnv); v {
	case "", "docker":
		return "docker", ""
	case "gvisor":
		RequireRuntime(t, GVisorRuntime)
		return "gvisor", GVisorRuntime
	default:
		t.Fatalf("%s=%q: want docker or gvisor", ProviderEnv, v)
		return "", ""
	}
}

// DockerProvider returns a Docker provider that labels everything with
// instance, runs the freshly built shim, never pulls, and whose containers,
// volumes and snapshot images are swept when t ends, even on failure. It
// runs under the runtime TestProvider selects.
func DockerProvider(t testing.TB, instance string) *docker.Provider {
	t.Helper()
	name, runtime := TestProvider(t)
	return dockerProviderOn(t, instance, name, runtime)
}

// RuncProvider is DockerProvider under runc whatever TestProvider
// selects, for what only runc offers (worlds' private networks).
func RuncProvider(t testing.TB, instance string) *docker.Provider {
	t.Helper()
	return dockerProviderOn(t, instance, "docker", "")
}

// dockerProviderOn is DockerProvider named name, under the OCI runtime
// runtime ("" for the engine's default, runc).
func dockerProviderOn(t testing.TB, instance, name, runtime string) *docker.Provider {
	t.Helper()
	RequireDocker(t, TestImage)
	disks := DiskDir(t)
	p, err := docker.New(docker.Config{
		Name:         name,
		Runtime:      runtime,
		Instance:     instance,
		ShimPath:     Binary(t, "paddock-shim"),
		RunDir:       ShortTempDir(t),
		DiskDir:      disks,
		StartTimeout: 30 * time.Second,
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatalf("docker provider: %v", err)
	}
	t.Cleanup(func() {
		_ = p.Close()
		if err := Sweep(provider.LabelInstance, instance); err != nil {
			t.Errorf("sweep: %v", err)
		}
	})
	return p
}

// Sweep force-removes every container, volume, network and image whose
// label key has a value starting with prefix, and nothing else.
func Sweep(key, prefix string) error {
	return sweepWhere(key, func(labels map[string]string, _ time.Time) bool {
		v, ok := labels[key]
		return ok && strings.HasPrefix(v, prefix)
	}, true)
}

// SweepStale force-removes the containers, volumes and networks whose
// label key has a value starting with one of prefixes and that were made
// before before: what test processes that were killed, and so never swept,
// left on the engine (their networks would use up its address pools). A
// test binary lives at most its -timeout, so nothing older than that is a
// live test's.
func SweepStale(key string, prefixes []string, before time.Time) error {
	return sweepWhere(key, func(labels map[string]string, created time.Time) bool {
		v, ok := labels[key]
		if !ok || created.IsZero() || !created.Before(before) {
			return false
		}
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(v, p) })
	}, false)
}

// sweepWhere removes the containers, volumes, networks and (images) the
// images that carry label key and that ours accepts, by their labels and
// when they were made.
func sweepWhere(key string, ours func(labels map[string]string, created time.Time) bool, images bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return err
	}
	defer cli.Close()
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", key))})
	if err != nil {
		if client.IsErrConnectionFailed(err) {
			return nil // no engine, nothing made
		}
		return err
	}
	for _, c := range cs {
		if ours(c.Labels, time.Unix(c.Created, 0)) {
			if c.State == container.StatePaused {
				// A paused gVisor sandbox does not die of SIGKILL, and a
				// forced removal leaves its processes behind; thawed, it
				// dies (the docker provider's Destroy does the same).
				_ = cli.ContainerUnpause(ctx, c.ID)
			}
			if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				return err
			}
		}
	}
	vs, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", key))})
	if err != nil {
		return err
	}
	for _, v := range vs.Volumes {
		created, _ := time.Parse(time.RFC3339, v.CreatedAt)
		if ours(v.Labels, created) {
			if err := cli.VolumeRemove(ctx, v.Name, true); err != nil && !cerrdefs.IsNotFound(err) {
				return err
			}
		}
	}
	if err := sweepNetworks(ctx, cli, key, ours); err != nil {
		return err
	}
	if !images {
		return nil
	}
	return sweepImages(ctx, cli, key, func(labels map[string]string) bool { return ours(labels, time.Time{}) })
}

// sweepNetworks removes the networks ours accepts and every firewall rule
// naming their bridges.
func sweepNetworks(ctx context.Context, cli *client.Client, key string, ours func(map[string]string, time.Time) bool) error {
	ns, err := cli.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", key))})
	if err != nil {
		return err
	}
	for _, n := range ns {
		if !ours(n.Labels, n.Created) {
			continue
		}
		if err := cli.NetworkRemove(ctx, n.ID); err != nil && !cerrdefs.IsNotFound(err) {
			return err
		}
		if bridge := n.Options["com.docker.network.bridge.name"]; bridge != "" {
			docker.RemoveFirewall(bridge)
		}
	}
	return nil
}

// sweepImages removes the images ours accepts (snapshots carry the labels
// of their sandbox), by id with all their tags. Parents are not pruned, as
// they may not be ours. A parent cannot go while a child depends on it, so
// removal goes newest first, in rounds, until nothing of ours is left or a
// round makes no progress.
func sweepImages(ctx context.Context, cli *client.Client, key string, ours func(map[string]string) bool) error {
	for {
		ims, err := cli.ImageList(ctx, image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", key))})
		if err != nil {
			return err
		}
		ims = slices.DeleteFunc(ims, func(im image.Summary) bool { return !ours(im.Labels) })
		if len(ims) == 0 {
			return nil
		}
		slices.SortFunc(ims, func(a, b image.Summary) int { return cmp.Compare(b.Created, a.Created) })
		var errs []error
		for _, im := range ims {
			_, err := cli.ImageRemove(ctx, im.ID, image.RemoveOptions{Force: true})
			if err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		if len(errs) == len(ims) {
			return errors.Join(errs...)
		}
	}
}
