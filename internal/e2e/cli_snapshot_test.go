package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestCLISnapshot: paddock snapshot create, ls, restore (into a new
// project and into the same runtime) and rm, on Docker.
func TestCLISnapshot(t *testing.T) {
	e := newSnapEnv(t)
	env := clitest.Env(e.env.URL, e.env.Key)
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"

	s := clitest.JSON[pc.Snapshot](t, env, "snapshot", "create", "p1", "--name", "cli-snap", "-o", "json")
	if s.Name != "cli-snap" || s.RuntimeID != e.rid || s.SizeBytes <= 0 {
		t.Fatalf("created %+v", s)
	}
	rows := clitest.Table(clitest.MustRun(t, env, "snapshot", "ls"))
	if len(rows) != 2 || rows[1][1] != "cli-snap" {
		t.Fatalf("snapshot ls: %v", rows)
	}
	if l := clitest.JSON[pc.List[pc.Snapshot]](t, env, "snapshot", "ls", "p1", "-o", "json"); len(l.Items) != 1 || l.Items[0].ID != s.ID {
		t.Fatalf("snapshot ls p1: %+v", l.Items)
	}

	rt := clitest.JSON[pc.Runtime](t, env, "snapshot", "restore", "cli-snap", "--project", "cli-copy", "-o", "json")
	if rt.Status != "running" || rt.ID == e.rid {
		t.Fatalf("restored into %+v", rt)
	}
	if got := e.exec(t, rt.ID, "cat", "/workspace/notes/a.txt"); got != "hello\n" {
		t.Fatalf("restored files: %q", got)
	}
	e.exec(t, e.rid, "rm", "/workspace/top.txt")
	clitest.MustRun(t, env, "snapshot", "restore", s.ID, "--into", "p1")
	if got := e.exec(t, e.rid, "cat", "/workspace/top.txt"); got != "top\n" {
		t.Fatalf("restored in place: %q", got)
	}
	if _, errOut, code := clitest.Run(t, env, "snapshot", "restore", "cli-snap"); code == 0 || !strings.Contains(errOut, "into") {
		t.Fatalf("restore without a target: %d %q", code, errOut)
	}

	out := clitest.MustRun(t, env, "snapshot", "rm", "cli-snap")
	if !strings.Contains(out, "deleted snapshot cli-snap") {
		t.Fatalf("snapshot rm: %q", out)
	}
	if _, err := os.Stat(filepath.Join(e.dataDir, "snapshots", e.runtime(t, e.rid).OrgID, s.ID+".tar.gz")); !os.IsNotExist(err) {
		t.Fatalf("artifact after rm: %v", err)
	}
	if _, errOut, code := clitest.Run(t, env, "snapshot", "rm", "cli-snap"); code == 0 || !strings.Contains(errOut, "no snapshot named") {
		t.Fatalf("rm twice: %d %q", code, errOut)
	}
}
