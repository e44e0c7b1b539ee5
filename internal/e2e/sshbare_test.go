package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSSHProviderBare runs paddock with a `kind: ssh` provider in bare
// mode: /api/capabilities lists it as host isolation with networks none
// and open and no pause; a runtime there runs its agent on the machine
// itself (no container on the machine's engine), writes its workspace
// (a directory of the machine's), keeps answering after the SSH
// connection drops, is archived when paused (bare mode cannot pause) and
// resumed with its workspace, and leaves nothing running once deleted.
func TestSSHProviderBare(t *testing.T) {
	m := testenv.StartSSHHost(t)
	c := serveWithMachine(t, m, "bare")
	ctx := t.Context()

	caps, err := c.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	box, ok := caps.Providers["box"]
	if !ok || box.Isolation != "host" || !box.Agent || box.Pause || !slices.Equal(box.Networks, []string{"none", "open"}) {
		t.Fatalf("capabilities of box = %+v (listed: %t), want host isolation, networks none and open, no pause", box, ok)
	}
	if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, "acme", pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProject(ctx, "acme", "dev", pc.CreateProjectRequest{Name: "p", Runtime: &pc.RuntimeConfig{
		Provider: "box", MemoryMB: 128, PidsLimit: 64, DiskMB: 64,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartRuntime(ctx, "acme", "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
		t.Fatalf("start on the machine: %v", err)
	}
	run := func(script string) (string, error) {
		res, err := c.Exec(ctx, "acme", "dev", p.RuntimeID, pc.ExecRequest{Argv: []string{"sh", "-c", script}})
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(res.Stdout)), nil
	}
	if out, err := run("echo hi > /workspace/f && cat /workspace/f"); err != nil || out != "hi" {
		t.Fatalf("exec on the machine: %q, %v", out, err)
	}
	// The workspace is a directory of the machine's.
	files, _ := filepath.Glob(filepath.Join(m.Dir, "disks", "bare", "*", "f"))
	if len(files) != 1 {
		t.Fatalf("the workspace's file on the machine: %v", files)
	}
	if n := machineContainers(t, m, p.RuntimeID); n != 0 {
		t.Fatalf("bare mode made %d containers on the machine's engine", n)
	}

	if n := m.DropConnections(t); n == 0 {
		t.Fatal("sshd served no connection to drop")
	}
	testenv.Eventually(t, func() error {
		if out, err := run("cat /workspace/f"); err != nil || out != "hi" {
			return fmt.Errorf("exec after the drop: %q, %v", out, err)
		}
		return nil
	})
	if _, err := c.PauseRuntime(ctx, "acme", "dev", p.RuntimeID); err != nil {
		t.Fatalf("pause (an archive in bare mode): %v", err)
	}
	if _, err := c.ResumeRuntime(ctx, "acme", "dev", p.RuntimeID); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if out, err := run("cat /workspace/f"); err != nil || out != "hi" {
		t.Fatalf("the workspace after resume: %q, %v", out, err)
	}
	if err := c.DeleteProject(ctx, "acme", "dev", p.ID); err != nil {
		t.Fatalf("delete the project: %v", err)
	}
	testenv.Eventually(t, func() error {
		left, _ := filepath.Glob(filepath.Join(m.Dir, "run", "bare", "*", "state.json"))
		if len(left) != 0 {
			return fmt.Errorf("sandboxes left on the machine: %v", left)
		}
		if _, err := os.Stat(files[0]); err == nil {
			return fmt.Errorf("the deleted project's workspace is still on the machine")
		}
		return nil
	})
}
