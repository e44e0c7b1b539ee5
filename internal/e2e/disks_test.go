package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/paddockhq/paddock/internal/provider"
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
		env.Must(t, 200, "POST", rtPath+"/exec", pc.ExecRequest{Argv: []string{"sh", "-c", "echo kept > /workspace/note"}})
		if tc.pause {
			env.Must(t, 200, "POST", rtPath+"/pause", nil)
		}
		vs, err := cli.VolumeList(t.Context(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", provider.LabelWorkspace+"="+p.RuntimeID))})
		if err != nil || len(vs.Volumes) != 1 {
			t.Fatalf("%s: the runtime's workspace volume: %v, %v", tc.name, vs.Volumes, err)
		}
		mnt := vs.Volumes[0].Options["device"]
		img := mnt + ".img"
		if len(loopsOf(t, img)) != 1 {
			t.Fatalf("%s: no loop device holds %s before the deletion; the check would prove nothing", tc.name, img)
		}

		tc.deletion(p, rtPath, vs.Volumes[0].Name)
		if loops := loopsOf(t, img); len(loops) > 0 {
			t.Errorf("%s: loop devices still hold the workspace image: %v", tc.name, loops)
		}
		for _, path := range []string{img, mnt} {
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s: %s after the deletion: %v", tc.name, path, err)
			}
		}
		if m := mountsUnder(t, mnt); len(m) > 0 {
			t.Errorf("%s: the workspace is still mounted: %v", tc.name, m)
		}
	}
}

// loopsOf lists the loop devices whose backing file is img (or was, before
// it was deleted).
func loopsOf(t *testing.T, img string) []string {
	t.Helper()
	files, err := filepath.Glob("/sys/block/loop*/loop/backing_file")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // detached meanwhile
		}
		if back := strings.TrimSpace(string(b)); back == img || back == img+" (deleted)" {
			out = append(out, filepath.Base(filepath.Dir(filepath.Dir(f))))
		}
	}
	return out
}
