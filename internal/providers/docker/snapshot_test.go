package docker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/testenv"
)

// snapshot snapshots h and removes the snapshot when the test ends.
func (e *env) snapshot(t *testing.T, h provider.Handle, labels map[string]string) string {
	t.Helper()
	ref, err := e.p.Snapshot(t.Context(), h, labels)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	t.Cleanup(func() { // after t.Context is done
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := e.p.RemoveSnapshot(ctx, ref); err != nil {
			t.Errorf("cleanup: RemoveSnapshot(%s): %v", ref, err)
		}
	})
	return ref
}

// TestSnapshotImage checks the image a snapshot makes: its reference, its
// labels (the ones given win over the container's, which it inherits), and
// that the sandbox is left running or paused as it was.
func TestSnapshotImage(t *testing.T) {
	e := newEnv(t)
	spec := e.spec()
	h := e.started(t, spec)
	// A distinct instance proves the given labels win; it keeps the test's
	// instance as a prefix, so the sweep still finds the image.
	archived := e.instance + "-archive"
	labels := map[string]string{provider.LabelInstance: archived, "dev.paddock.archive": "yes"}

	for _, state := range []provider.State{provider.StateRunning, provider.StatePaused} {
		t.Run(string(state), func(t *testing.T) {
			if state == provider.StatePaused {
				if err := e.p.Pause(t.Context(), h); err != nil {
					t.Fatal(err)
				}
			}
			ref := e.snapshot(t, h, labels)
			if want := docker.ArchiveRepository + ":" + spec.SandboxID[:12] + "-"; !strings.HasPrefix(ref, want) {
				t.Errorf("ref = %q, want prefix %q", ref, want)
			}
			c, err := e.cli.ContainerInspect(t.Context(), h.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c.State.Paused != (state == provider.StatePaused) || !c.State.Running {
				t.Errorf("after Snapshot the container is running=%v paused=%v, want %s", c.State.Running, c.State.Paused, state)
			}
			img, err := e.cli.ImageInspect(t.Context(), ref)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]string{
				provider.LabelInstance: archived,
				"dev.paddock.archive":  "yes",
				provider.LabelManaged:  "true",
				provider.LabelSandbox:  spec.SandboxID,
				provider.LabelRuntime:  spec.RuntimeID,
			} {
				if got := img.Config.Labels[k]; got != want {
					t.Errorf("image label %s = %q, want %q", k, got, want)
				}
			}
			if img.Comment != "paddock snapshot of sandbox "+spec.SandboxID {
				t.Errorf("image comment = %q", img.Comment)
			}
		})
	}
}

// TestSnapshotCapturesFilesystem writes to a container's root (possible only
// in a container made outside the provider: a sandbox's root is read-only)
// and reads the file back in a sandbox created from the snapshot.
func TestSnapshotCapturesFilesystem(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	labels := map[string]string{provider.LabelManaged: "true", provider.LabelInstance: e.instance}
	c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: testenv.TestImage, Cmd: []string{"sleep", "600"}, Labels: labels},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	e.mustExec(t, c.ID, "sh", "-c", "echo kept > /marker")
	spec := e.spec()
	ref := e.snapshot(t, provider.Handle{Provider: docker.Name, ID: c.ID}, map[string]string{provider.LabelInstance: e.instance, provider.LabelRuntime: spec.RuntimeID})
	spec.Image = ref
	h := e.started(t, spec)
	if out := e.mustExec(t, h.ID, "cat", "/marker"); out != "kept\n" {
		t.Fatalf("/marker in the restored sandbox = %q, want kept", out)
	}
}

// TestRemoveSnapshot covers removal: refusing anything outside the archive
// repository, untagging (never forcing) an image a stopped sandbox uses,
// and removing the kept image once the sandbox is gone.
func TestRemoveSnapshot(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()

	t.Run("refuses other references", func(t *testing.T) {
		for _, ref := range []string{
			"",
			testenv.TestImage,
			docker.ArchiveRepository,
			docker.ArchiveRepository + ":",
			docker.ArchiveRepository + ":-x",
			docker.ArchiveRepository + ":a/../../b",
			docker.ArchiveRepository + "@sha256:" + strings.Repeat("0", 64),
			"docker.io/" + docker.ArchiveRepository + ":x",
			docker.ArchiveRepository + "x:y",
			docker.ArchiveRepository + ":" + strings.Repeat("x", 128),
		} {
			if err := e.p.RemoveSnapshot(ctx, ref); !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("RemoveSnapshot(%q) = %v, want invalid argument", ref, err)
			}
		}
		if _, err := e.cli.ImageInspect(ctx, testenv.TestImage); err != nil {
			t.Fatalf("the test image is gone: %v", err)
		}
	})

	t.Run("missing is not an error", func(t *testing.T) {
		if err := e.p.RemoveSnapshot(ctx, docker.ArchiveRepository+":never-made"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("foreign container is not found", func(t *testing.T) {
		c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: testenv.TestImage, Cmd: []string{"true"}, Labels: map[string]string{provider.LabelInstance: e.instance}},
			&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.p.Snapshot(ctx, provider.Handle{ID: c.ID}, nil)
		if !errdefs.IsNotFound(err) {
			t.Fatalf("Snapshot of a container paddock does not manage = %v, want not found", err)
		}
	})

	t.Run("in use by a stopped sandbox", func(t *testing.T) {
		srcSpec := e.spec()
		src := e.started(t, srcSpec)
		labels := map[string]string{provider.LabelInstance: e.instance}
		ref, err := e.p.Snapshot(ctx, src, labels)
		if err != nil {
			t.Fatal(err)
		}
		img, err := e.cli.ImageInspect(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		spec := e.spec()
		spec.Image = ref
		spec.RuntimeID = srcSpec.RuntimeID // only its own runtime may use a snapshot
		user, err := e.p.Create(ctx, spec) // created, never started: stopped
		if err != nil {
			t.Fatal(err)
		}

		if err := e.p.RemoveSnapshot(ctx, ref); err != nil {
			t.Fatalf("RemoveSnapshot while in use: %v", err)
		}
		if _, err := e.cli.ImageInspect(ctx, ref); !cerrdefs.IsNotFound(err) {
			t.Fatalf("the reference survived RemoveSnapshot: %v", err)
		}
		kept, err := e.cli.ImageInspect(ctx, img.ID)
		if err != nil {
			t.Fatalf("the image in use was deleted: %v", err)
		}
		if want := ref + "-kept"; len(kept.RepoTags) != 1 || kept.RepoTags[0] != want {
			t.Fatalf("the image in use is tagged %v, want [%s]", kept.RepoTags, want)
		}
		// The image record is intact: the sandbox can still be snapshotted,
		// which a forced removal would have broken.
		again, err := e.p.Snapshot(ctx, user, labels)
		if err != nil {
			t.Fatalf("Snapshot of a sandbox whose snapshot was removed: %v", err)
		}
		if err := e.p.RemoveSnapshot(ctx, again); err != nil {
			t.Fatal(err)
		}

		// Once the sandbox is gone, removing the reference again frees the
		// image.
		if err := e.p.Destroy(ctx, user); err != nil {
			t.Fatal(err)
		}
		if err := e.p.RemoveSnapshot(ctx, ref); err != nil {
			t.Fatalf("RemoveSnapshot after the user is gone: %v", err)
		}
		if _, err := e.cli.ImageInspect(ctx, img.ID); !cerrdefs.IsNotFound(err) {
			t.Fatalf("the image survived its last RemoveSnapshot: %v", err)
		}
		left, err := e.cli.ImageList(ctx, image.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", provider.LabelInstance+"="+e.instance))})
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			t.Fatalf("%d images of this test are left after removing every snapshot", len(left))
		}
	})
}
