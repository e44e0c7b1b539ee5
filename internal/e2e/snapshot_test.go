package e2e

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/docker"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/snapshot"
	"github.com/paddockhq/paddock/internal/snapshot/s3test"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// otherDockerProvider is a second Docker provider on the same engine
// under the other OCI runtime than the tests' own: gvisor (runsc) beside
// docker (runc), or docker beside gvisor.
func otherDockerProvider(t *testing.T, instance string) *docker.Provider {
	t.Helper()
	name, runtime := "gvisor", testenv.GVisorRuntime
	if main, _ := testenv.TestProvider(t); main == "gvisor" {
		name, runtime = "docker", ""
	} else {
		testenv.RequireRuntime(t, testenv.GVisorRuntime)
	}
	p, err := docker.New(docker.Config{
		Name: name, Runtime: runtime, Instance: instance, ShimPath: testenv.Binary(t, "paddock-shim"),
		RunDir: testenv.ShortTempDir(t), DiskDir: testenv.DiskDir(t), StartTimeout: 30 * time.Second,
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatalf("docker provider %s: %v", name, err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// snapEnv is the API on Docker with a second provider (gVisor), a data
// directory the test reads, and one running runtime with files in its
// workspace.
type snapEnv struct {
	*lifeEnv
	dataDir string
	other   string // the second provider's name
	rid     string
}

func newSnapEnv(t *testing.T) *snapEnv {
	t.Helper()
	dataDir := t.TempDir()
	instance := testenv.Instance(t)
	other := otherDockerProvider(t, instance)
	e := newLifeEnv(t, servertest.Options{DataDir: dataDir, MoreProviders: []provider.Provider{other}})
	rid := e.project(t, "p1", pc.RuntimeConfig{})
	e.env.Must(t, 200, "POST", rtPath(rid)+"/start", nil)
	e.exec(t, rid, "sh", "-c", "mkdir -p /workspace/notes && echo hello > /workspace/notes/a.txt && echo top > /workspace/top.txt")
	return &snapEnv{lifeEnv: e, dataDir: dataDir, other: other.Name(), rid: rid}
}

const snapsPath = "/api/v1/org/acme/ws/dev/snapshots"

func (e *snapEnv) snapshot(t *testing.T, rid, name string) pc.Snapshot {
	t.Helper()
	var s pc.Snapshot
	e.env.Must(t, 201, "POST", rtPath(rid)+"/snapshots", pc.CreateSnapshotRequest{Name: name}).Decode(t, &s)
	return s
}

func (e *snapEnv) restore(t *testing.T, id string, req pc.RestoreSnapshotRequest) pc.RestoreSnapshotResult {
	t.Helper()
	var res pc.RestoreSnapshotResult
	e.env.Must(t, 200, "POST", snapsPath+"/"+id+"/restore", req).Decode(t, &res)
	if res.Runtime.Status != "running" {
		t.Fatalf("restored runtime is %s, want running", res.Runtime.Status)
	}
	return res
}

// TestSnapshotRestoreIntoNewProject: files written in a runtime come back
// in a new project restored from its snapshot, which is listed, sized and
// kept as a file under the data directory until it is deleted.
func TestSnapshotRestoreIntoNewProject(t *testing.T) {
	e := newSnapEnv(t)
	s := e.snapshot(t, e.rid, "first")
	if s.SizeBytes <= 0 || s.RuntimeID != e.rid || s.Destination != "local" || s.Provider != "docker" && s.Provider != "gvisor" {
		t.Fatalf("snapshot %+v", s)
	}
	art := filepath.Join(e.dataDir, "snapshots", e.runtime(t, e.rid).OrgID, s.ID+".tar.gz")
	if fi, err := os.Stat(art); err != nil || fi.Size() != s.SizeBytes {
		t.Fatalf("artifact %s: %v (size %d, snapshot says %d)", art, err, sizeOf(fi), s.SizeBytes)
	}
	var l pc.List[pc.Snapshot]
	e.env.Must(t, 200, "GET", rtPath(e.rid)+"/snapshots", nil).Decode(t, &l)
	if len(l.Items) != 1 || l.Items[0].ID != s.ID {
		t.Fatalf("runtime's snapshots: %+v", l.Items)
	}
	e.env.Must(t, 200, "GET", snapsPath, nil).Decode(t, &l)
	if len(l.Items) != 1 || l.Items[0].Name != "first" {
		t.Fatalf("workspace's snapshots: %+v", l.Items)
	}
	if r := e.env.Do(t, "POST", rtPath(e.rid)+"/snapshots", pc.CreateSnapshotRequest{Name: "first"}); r.Status != 409 || r.Code() != "snapshot_exists" {
		t.Fatalf("a taken name: %d %s", r.Status, r.Body)
	}

	res := e.restore(t, s.ID, pc.RestoreSnapshotRequest{ProjectName: "copy"})
	if res.Project == nil || res.Project.Name != "copy" || res.Runtime.ID == e.rid {
		t.Fatalf("restored into %+v", res)
	}
	if got := e.exec(t, res.Runtime.ID, "cat", "/workspace/notes/a.txt", "/workspace/top.txt"); got != "hello\ntop\n" {
		t.Fatalf("restored files: %q", got)
	}

	e.env.Must(t, 204, "DELETE", snapsPath+"/"+s.ID, nil)
	if _, err := os.Stat(art); !os.IsNotExist(err) {
		t.Fatalf("artifact after delete: %v", err)
	}
	if r := e.env.Do(t, "GET", snapsPath+"/"+s.ID, nil); r.Status != 404 || r.Code() != "snapshot_not_found" {
		t.Fatalf("deleted snapshot: %d %s", r.Status, r.Body)
	}
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}

// TestSnapshotRestoreIntoSameRuntime: restoring into the runtime it was
// taken of resets it (its processes end), and its workspace is the
// snapshot's again: changes since are gone, deleted files are back.
func TestSnapshotRestoreIntoSameRuntime(t *testing.T) {
	e := newSnapEnv(t)
	s := e.snapshot(t, e.rid, "before")
	e.exec(t, e.rid, "sh", "-c", "rm -r /workspace/notes && echo later > /workspace/later.txt")
	was := e.runtime(t, e.rid).CurrentSandboxID
	res := e.restore(t, s.ID, pc.RestoreSnapshotRequest{RuntimeID: e.rid})
	if res.Project != nil || res.Runtime.ID != e.rid || res.Runtime.CurrentSandboxID == was {
		t.Fatalf("restored into %+v (sandbox was %s)", res, was)
	}
	if got := e.exec(t, e.rid, "sh", "-c", "cat /workspace/notes/a.txt; ls /workspace"); got != "hello\nnotes\ntop.txt\n" {
		t.Fatalf("workspace after restore: %q", got)
	}
	// From idle too: the volume is kept by a runtime without a sandbox,
	// and still replaced.
	e.exec(t, e.rid, "sh", "-c", "echo again > /workspace/later.txt")
	e.env.Must(t, 200, "POST", rtPath(e.rid)+"/reset", nil)
	e.restore(t, s.ID, pc.RestoreSnapshotRequest{RuntimeID: e.rid})
	if got := e.exec(t, e.rid, "ls", "/workspace"); got != "notes\ntop.txt\n" {
		t.Fatalf("workspace after restore from idle: %q", got)
	}
}

// TestSnapshotAcrossProviders: a snapshot taken on one provider restores
// on the other (the workspace carries the state), and one the provider
// asked for cannot run is 422 snapshot_not_portable, leaving no project.
func TestSnapshotAcrossProviders(t *testing.T) {
	e := newSnapEnv(t)
	s := e.snapshot(t, e.rid, "portable")
	res := e.restore(t, s.ID, pc.RestoreSnapshotRequest{ProjectName: "moved", Provider: e.other})
	if res.Runtime.Config.Provider != e.other {
		t.Fatalf("restored on %q, want %q", res.Runtime.Config.Provider, e.other)
	}
	if got := e.exec(t, res.Runtime.ID, "cat", "/workspace/notes/a.txt"); got != "hello\n" {
		t.Fatalf("restored on %s: %q", e.other, got)
	}
	r := e.env.Do(t, "POST", snapsPath+"/"+s.ID+"/restore", pc.RestoreSnapshotRequest{ProjectName: "nowhere", Provider: "no-such-provider"})
	if r.Status != 422 || r.Code() != "snapshot_not_portable" {
		t.Fatalf("restore on a provider that cannot run it: %d %s", r.Status, r.Body)
	}
	e.env.Must(t, 404, "GET", "/api/v1/org/acme/ws/dev/projects/nowhere", nil)
}

// TestSnapshotForeignOrg: another org's admin, and another workspace,
// see none of a workspace's snapshots: 404.
func TestSnapshotForeignOrg(t *testing.T) {
	e := newSnapEnv(t)
	s := e.snapshot(t, e.rid, "mine")
	env := e.env
	env.Must(t, 201, "POST", "/api/v1/orgs", pc.CreateOrgRequest{Name: "rival"})
	env.Must(t, 201, "POST", "/api/v1/org/rival/ws", pc.CreateWorkspaceRequest{Name: "dev"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", pc.CreateWorkspaceRequest{Name: "side"})
	env.Must(t, 201, "POST", "/api/v1/org/rival/members", pc.AddOrgMemberRequest{Member: "rival@example.com", Role: "admin"})
	var rival pc.CreatedKey
	env.Must(t, 201, "POST", "/api/v1/org/rival/keys", pc.CreateKeyRequest{Member: "rival@example.com", Role: "admin"}).Decode(t, &rival)
	for _, c := range []struct{ key, method, path string }{
		{rival.Key, "GET", "/api/v1/org/rival/ws/dev/snapshots/" + s.ID},
		{rival.Key, "DELETE", "/api/v1/org/rival/ws/dev/snapshots/" + s.ID},
		{rival.Key, "GET", snapsPath + "/" + s.ID},
		{rival.Key, "POST", "/api/v1/org/acme/ws/dev/runtimes/" + e.rid + "/snapshots"},
		{env.Key, "GET", "/api/v1/org/acme/ws/side/snapshots/" + s.ID},
		{env.Key, "DELETE", "/api/v1/org/acme/ws/side/snapshots/" + s.ID},
	} {
		if r := env.DoKey(t, c.key, c.method, c.path, nil); r.Status != 404 {
			t.Errorf("%s %s: %d %s, want 404", c.method, c.path, r.Status, r.Body)
		}
	}
	r := env.DoKey(t, rival.Key, "POST", "/api/v1/org/rival/ws/dev/snapshots/"+s.ID+"/restore", pc.RestoreSnapshotRequest{ProjectName: "stolen"})
	if r.Status != 404 {
		t.Errorf("restore from another org: %d %s", r.Status, r.Body)
	}
	var l pc.List[pc.Snapshot]
	env.MustKey(t, rival.Key, 200, "GET", "/api/v1/org/rival/ws/dev/snapshots", nil).Decode(t, &l)
	if len(l.Items) != 0 || strings.Contains(string(r.Body), s.Name) {
		t.Fatalf("another org lists %+v", l.Items)
	}
	env.Must(t, 200, "GET", snapsPath+"/"+s.ID, nil)
}

// TestSnapshotS3RoundTrip: a runtime's snapshot kept in a real
// S3-compatible bucket on loopback (allowed explicitly) restores into a
// new project with its files, and its deletion removes the object.
func TestSnapshotS3RoundTrip(t *testing.T) {
	e := newSnapEnv(t)
	srv := s3test.Start(t, "snaps")
	s3, err := snapshot.NewS3(t.Context(), snapshot.S3Config{
		Endpoint: srv.URL, Bucket: srv.Bucket, Region: "us-east-1", AccessKey: "key", SecretKey: "secret", AllowInternal: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := snapshot.New(snapshot.Config{Store: e.env.Store, Runtimes: e.env.Runtimes, Destination: s3})
	rt, err := e.env.Store.GetRuntime(t.Context(), e.rid)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := svc.Create(t.Context(), rt, "in-s3")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Destination != "s3" || snap.SizeBytes <= 0 {
		t.Fatalf("snapshot %+v", snap)
	}
	ws, err := e.env.Store.GetWorkspace(t.Context(), rt.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	_, restored, err := svc.RestoreAsProject(t.Context(), ws, snap, "from-s3", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := e.exec(t, restored.ID, "cat", "/workspace/notes/a.txt"); got != "hello\n" {
		t.Fatalf("restored from S3: %q", got)
	}
	if err := svc.Delete(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Get(t.Context(), snap.Location); !errdefs.IsNotFound(err) {
		t.Fatalf("the object after delete: %v", err)
	}
}

// TestSnapshotFreezesProcesses: a process writing two files in lockstep
// as fast as it can is stopped while the workspace is copied, so the
// snapshot holds the two within one step of each other; it is continued
// after and keeps writing.
func TestSnapshotFreezesProcesses(t *testing.T) {
	e := newSnapEnv(t)
	ctx := t.Context()
	// Each file is written whole (a rename), as an application that keeps
	// its files consistent does; the freeze makes the two one moment.
	// Between a and b in the tar's (name) order, a file that takes a while
	// to copy: without the freeze the writer would run on meanwhile.
	e.exec(t, e.rid, "sh", "-c", "mkdir -p /workspace/c && head -c 24000000 /dev/urandom > /workspace/c/a2")
	loop := `mkdir -p /workspace/c; cd /workspace/c; i=0; while :; do i=$((i+1)); echo $i > .a; mv .a a; echo $i > .b; mv .b b; done`
	if _, err := e.sdk.Exec(ctx, "acme", "dev", e.rid, pc.ExecRequest{Argv: []string{"sh", "-c", loop}, Background: true}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, func() error {
		if n := strings.TrimSpace(e.exec(t, e.rid, "sh", "-c", "cat /workspace/c/b 2>/dev/null || echo 0")); len(n) < 3 {
			return fmt.Errorf("the writer is at %q", n)
		}
		return nil
	})
	s := e.snapshot(t, e.rid, "frozen")
	res := e.restore(t, s.ID, pc.RestoreSnapshotRequest{ProjectName: "frozen-copy"})
	var a, b int
	got := e.exec(t, res.Runtime.ID, "cat", "/workspace/c/a", "/workspace/c/b")
	if _, err := fmt.Sscanf(got, "%d\n%d\n", &a, &b); err != nil {
		t.Fatalf("restored %q: %v", got, err)
	}
	if a-b < 0 || a-b > 1 {
		t.Fatalf("the snapshot has a=%d b=%d: not one moment of the writer", a, b)
	}
	after := e.exec(t, e.rid, "cat", "/workspace/c/a")
	testenv.Eventually(t, func() error {
		if e.exec(t, e.rid, "cat", "/workspace/c/a") == after {
			return fmt.Errorf("the writer is still at %q after the snapshot", after)
		}
		return nil
	})
}
