package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestAgentSocketHijack is the attack from the security review, end to
// end on the built binaries: inside runtime A (org mallory), replace the
// agent socket with a symlink to runtime V's (org acme), then force the
// server to redial (a restart). Exec and files calls on A must never run in
// V.
//
// Two layers are checked. First the sandbox cannot touch its run directory
// at all. Then, with the directory opened up from the host (as it was
// before it was locked), the planted link is in place and the restarted
// server still refuses it with agent_unverified, and V's secret stays
// unread.
func TestAgentSocketHijack(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	bin := testenv.Binary(t, "paddock")
	shim := testenv.Binary(t, "paddock-shim")
	instance := testenv.Instance(t)
	t.Cleanup(func() { _ = testenv.Sweep(provider.LabelInstance, instance) })
	data, runDir := t.TempDir(), filepath.Join(testenv.ShortTempDir(t), "r")
	const key = "pdk_00000000000000000000000000000000000000000000beef"
	docker := testenv.DockerClient(t)

	s := serveIn(t, bin, shim, data, runDir, instance, key)
	c := sdkFor(t, s, key)
	ctx := t.Context()
	start := func(org, name string) string {
		t.Helper()
		if _, err := c.CreateOrg(ctx, pc.CreateOrgRequest{Name: org}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateWorkspace(ctx, org, pc.CreateWorkspaceRequest{Name: "dev"}); err != nil {
			t.Fatal(err)
		}
		p, err := c.CreateProject(ctx, org, "dev", pc.CreateProjectRequest{Name: name, Runtime: &pc.RuntimeConfig{MemoryMB: 64, PidsLimit: 32}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.StartRuntime(ctx, org, "dev", p.RuntimeID, pc.StartRuntimeRequest{}); err != nil {
			t.Fatal(err)
		}
		return p.RuntimeID
	}
	victim, attacker := start("acme", "v"), start("mallory", "a")
	sh := func(c *pc.Client, org, rid, script string) (pc.ExecResult, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		return c.Exec(ctx, org, "dev", rid, pc.ExecRequest{Argv: []string{"sh", "-c", script}})
	}
	if res, err := sh(c, "acme", victim, "echo victim-secret > /workspace/secret"); err != nil || res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("writing the victim's secret: %+v, %v", res, err)
	}

	// Where the victim's agent socket lives on the host: the strongest
	// attacker knows it exactly.
	runMount := func(rid string) string {
		for _, ct := range containersOf(t, docker, rid) {
			for _, m := range ct.Mounts {
				if m.Destination == "/.paddock/run" {
					return m.Source
				}
			}
		}
		t.Fatalf("no run directory mount for runtime %s", rid)
		return ""
	}
	vSock := filepath.Join(runMount(victim), "agent.sock")
	plant := "rm -f /.paddock/run/agent.sock && ln -s " + vSock + " /.paddock/run/agent.sock"

	// Layer 1: the sandbox cannot change what the server connects to.
	res, err := sh(c, "mallory", attacker, plant)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit == nil || res.Exit.Code == 0 {
		t.Fatalf("planting the link succeeded inside the sandbox: %+v", res)
	}
	s.kill(t)
	s = serveIn(t, bin, shim, data, runDir, instance, key)
	c = sdkFor(t, s, key)
	res, err = sh(c, "mallory", attacker, "cat /workspace/secret")
	if err != nil {
		t.Fatalf("the attacker's own runtime stopped working: %v", err)
	}
	if strings.Contains(string(res.Stdout), "victim-secret") {
		t.Fatal("runtime A read runtime V's workspace")
	}

	// Layer 2: open the directory up from the host, plant the link, and
	// make the server redial. It must refuse the agent it finds.
	if err := os.Chmod(runMount(attacker), 0o777); err != nil {
		t.Fatal(err)
	}
	if res, err := sh(c, "mallory", attacker, plant); err != nil || res.Exit == nil || res.Exit.Code != 0 {
		t.Fatalf("planting the link in an opened directory: %+v, %v", res, err)
	}
	s.kill(t)
	s = serveIn(t, bin, shim, data, runDir, instance, key)
	c = sdkFor(t, s, key)
	res, err = sh(c, "mallory", attacker, "cat /workspace/secret")
	var apiErr *pc.Error
	if !errors.As(err, &apiErr) || apiErr.Code != "agent_unverified" {
		t.Fatalf("exec through a planted link = %+v, %v; want agent_unverified", res, err)
	}
	if strings.Contains(string(res.Stdout), "victim-secret") {
		t.Fatal("runtime A read runtime V's workspace")
	}
	if _, err := c.ReadFile(ctx, "mallory", "dev", attacker, "/workspace/secret"); !errors.As(err, &apiErr) || apiErr.Code != "agent_unverified" {
		t.Fatalf("file read through a planted link: %v; want agent_unverified", err)
	}
	// The victim is unharmed.
	if res, err := sh(c, "acme", victim, "cat /workspace/secret"); err != nil || strings.TrimSpace(string(res.Stdout)) != "victim-secret" {
		t.Fatalf("the victim's runtime: %+v, %v", res, err)
	}
	s.stop(t)
}

func sdkFor(t testing.TB, s *server, key string) *pc.Client {
	t.Helper()
	c, err := pc.New(s.url, key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWorkspaceDiskQuota: a runtime's disk_mb bounds what its sandbox can
// write to /workspace, through the API on real Docker, and the limit holds
// for a new sandbox after a reset that keeps the workspace.
func TestWorkspaceDiskQuota(t *testing.T) {
	env, _, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "small", Runtime: &pc.RuntimeConfig{MemoryMB: 128, PidsLimit: 64, DiskMB: 64},
	}).Decode(t, &p)
	rtPath := "/api/v1/org/acme/ws/dev/runtimes/" + p.RuntimeID
	fill := pc.ExecRequest{Argv: []string{"sh", "-c", "dd if=/dev/zero of=/workspace/big bs=1048576 count=100 2>&1; echo exit=$?"}}
	for round := range 2 {
		env.Must(t, 200, "POST", rtPath+"/start", nil)
		var res pc.ExecResult
		env.Must(t, 200, "POST", rtPath+"/exec", fill).Decode(t, &res)
		out := string(res.Stdout)
		if !strings.Contains(out, "No space left on device") || strings.Contains(out, "exit=0") {
			t.Fatalf("round %d: writing 100 MiB into a 64 MiB workspace: %s", round, out)
		}
		env.Must(t, 200, "POST", rtPath+"/reset", pc.ResetRequest{})
	}
}
