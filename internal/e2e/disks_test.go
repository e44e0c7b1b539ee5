package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestDeletionsReleaseWorkspaceDisks: every way a workspace goes (its
// project deleted, with its runtime running, paused, or idle with its
// Docker volume already gone; a reset that wipes it) detaches its loop
// device and deletes its image file and mount point, on real Docker with
// quotas on.
func TestDeletionsReleaseWorkspaceDisks(t *testing.T) {
	env, cli, _, _ := dockerEnv(t)
	deleteProject := func(p pc.Project, _, _ string) {
		env.Must(t, 204, "DELETE", "/api/v1/org/acme/ws/dev/projects/"+p.ID, nil)
	}
	cases := []struct {
		name     string
		pause    bool
		deletion func(p pc.Project, rtPath, volume string)
	}{
		{"project deleted, runtime running", false, deleteProject},
		{"project deleted, runtime paused", true, deleteProject},
		{"workspace wiped by a reset", false, func(_ pc.Project, rtPath, _ string) {
			env.Must(t, 200, "POST", rtPath+"/reset", pc.ResetRequest{WipeWorkspace: true})
		}},
		// An operator's `docker volume prune -a` removes an idle runtime's
		// volume, not its disk.
		{"project deleted, volume pruned", false, func(p pc.Project, rtPath, volume string) {
			env.Must(t, 200, "POST", rtPath+"/reset", pc.ResetRequest{})
			if err := cli.VolumeRemove(t.Context(), volume, false); err != nil {
				t.Fatal(err)
			}
			deleteProject(p, rtPath, volume)
		}},
	}
	for i, tc := range cases {
		var p pc.Project
		env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
			Name: "disk" + string(rune('a'+i)), Runtime: &pc.RuntimeConfig{MemoryMB: 128, PidsLimit: 64, DiskMB: 64},
		}).Decode(t, &p)
		rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
		env.Must(t, 200, "POST", rtPath+"/start", nil)
		if tc.pause {
			env.Must(t, 200, "POST", rtPath+"/pause", nil)
		}
		vs, err := cli.VolumeList(t.Context(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelWorkspace+"="+p.RuntimeID))})
		if err != nil || len(vs.Volumes) != 1 {
			t.Fatalf("%s: the runtime's workspace volume: %v, %v", tc.name, vs.Volumes, err)
		}
		mnt := vs.Volumes[0].Options["device"]
		img := mnt + ".img"
		if len(testenv.LoopsOf(img)) != 1 {
			t.Fatalf("%s: no loop device holds %s before the deletion; the check would prove nothing", tc.name, img)
		}

		tc.deletion(p, rtPath, vs.Volumes[0].Name)
		if loops := testenv.LoopsOfSettled(img, 0); len(loops) > 0 {
			t.Errorf("%s: loop devices still hold the workspace image: %v", tc.name, loops)
		}
		for _, path := range []string{img, mnt} {
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s: %s after the deletion: %v", tc.name, path, err)
			}
		}
		if m := testenv.MountsUnder(mnt); len(m) > 0 {
			t.Errorf("%s: the workspace is still mounted: %v", tc.name, m)
		}
	}
}

// TestIdleRuntimesHoldNoLoopDevice: a workspace's disk is attached only
// while a sandbox exists on it (running or paused): a reset that keeps the
// workspace and an archive detach its loop device, and the next sandbox
// gets the same files back on a fresh one. So a host's loop devices bound
// its sandboxes, not its runtimes.
func TestIdleRuntimesHoldNoLoopDevice(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	e := newLifeEnv(t, servertest.Options{})
	cli := testenv.DockerClient(t)
	rid := e.project(t, "p", pc.RuntimeConfig{DiskMB: 64, ArchiveAfterSeconds: 60})
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil)
	vs, err := cli.VolumeList(t.Context(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelWorkspace+"="+rid))})
	if err != nil || len(vs.Volumes) != 1 {
		t.Fatalf("the runtime's workspace volume: %v, %v", vs.Volumes, err)
	}
	mnt := vs.Volumes[0].Options["device"]
	img := mnt + ".img"
	// Written from the host, onto the mounted disk: what the sandbox
	// finds again later.
	if err := os.WriteFile(filepath.Join(mnt, "note"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loops := func(when string, want int) {
		t.Helper()
		if got := testenv.LoopsOfSettled(img, want); len(got) != want {
			t.Fatalf("%s: the workspace holds loop devices %v, want %d", when, got, want)
		}
	}
	loops("running", 1)

	e.env.Must(t, 200, "POST", rtPath(rid)+"/reset", pc.ResetRequest{})
	loops("idle after a reset", 0)
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil)
	if got := e.exec(t, rid, "cat", "/workspace/note"); got != "kept\n" {
		t.Fatalf("the workspace after a reset: %q", got)
	}
	loops("started again", 1)

	e.env.Must(t, 200, "POST", rtPath(rid)+"/pause", nil)
	loops("paused", 1)
	e.clock.Advance(2 * time.Minute)
	if rep := e.tick(t); !slices.Contains(rep.Archived, rid) {
		t.Fatalf("not archived past its threshold: %+v", rep)
	}
	loops("archived", 0)
	if got := e.exec(t, rid, "cat", "/workspace/note"); got != "kept\n" {
		t.Fatalf("the workspace after a restore: %q", got)
	}
	loops("restored", 1)
}

// BenchmarkIdleRuntimes makes b.N runtimes with a disk quota (the default,
// 10 GiB) through the API, runs each once (start, then a reset that keeps
// the workspace) so each has its disk, and reports what the host keeps for
// them while idle: loop devices (none), host disk per runtime.
//
//	go test -run '^$' -bench IdleRuntimes -benchtime 200x ./internal/e2e
func BenchmarkIdleRuntimes(b *testing.B) {
	testenv.RequireDocker(b, testenv.TestImage)
	fast := api.Rate{PerSecond: 1e6, Burst: 1e6} // three calls a runtime, as fast as they go
	e := newLifeEnv(b, servertest.Options{Limits: api.Limits{PerKey: fast, PerClient: fast}})
	cli := testenv.DockerClient(b)
	rids := make([]string, b.N)
	b.ResetTimer()
	for i := range b.N {
		rids[i] = e.project(b, fmt.Sprintf("idle%d", i), pc.RuntimeConfig{})
		e.env.Must(b, 200, "POST", rtPath(rids[i])+"/start", nil)
		e.env.Must(b, 200, "POST", rtPath(rids[i])+"/reset", pc.ResetRequest{})
	}
	b.StopTimer()
	var loops int
	var allocated int64
	for _, rid := range rids {
		vs, err := cli.VolumeList(b.Context(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelWorkspace+"="+rid))})
		if err != nil || len(vs.Volumes) != 1 {
			b.Fatalf("the workspace volume of %s: %v, %v", rid, vs.Volumes, err)
		}
		img := vs.Volumes[0].Options["device"] + ".img"
		loops += len(testenv.LoopsOf(img))
		var st syscall.Stat_t
		if err := syscall.Stat(img, &st); err != nil {
			b.Fatal(err)
		}
		allocated += st.Blocks * 512
	}
	if loops != 0 {
		b.Fatalf("%d idle runtimes hold %d loop devices, want none", b.N, loops)
	}
	b.ReportMetric(float64(loops), "loop-devices")
	b.ReportMetric(float64(allocated>>10)/float64(b.N), "KiB-disk/runtime")
	b.Logf("%d idle runtimes with 10 GiB quotas: %d loop devices, %d MiB of host disk", b.N, loops, allocated>>20)
}
