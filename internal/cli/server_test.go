package cli_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// cliOnServer starts a real API with opts and makes org acme and workspace
// dev through the CLI; the environment it returns names them.
func cliOnServer(t *testing.T, opts servertest.Options) (*servertest.Env, map[string]string) {
	t.Helper()
	srv := servertest.New(t, opts)
	env := clitest.Env(srv.URL, srv.Key)
	clitest.MustRun(t, env, "org", "create", "acme")
	clitest.MustRun(t, env, "workspace", "create", "dev", "--org", "acme")
	env["PADDOCK_ORG"], env["PADDOCK_WS"] = "acme", "dev"
	return srv, env
}

// TestAgainstTheServer runs a runtime's life through the CLI against the
// real API, store and runtime service, with the fake provider.
func TestAgainstTheServer(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})

	p := clitest.JSON[client.Project](t, env, "project", "create", "agent", "--cpu", "0.5", "--memory", "256", "--idle-timeout", "10m",
		"--max-lifetime", "2h", "--archive-after", "48h")
	if p.Name != "agent" || p.RuntimeID == "" {
		t.Fatalf("project = %+v", p)
	}
	rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent")
	if rt.ID != p.RuntimeID || rt.Status != client.RuntimeIdle || rt.Config.CPUMillis != 500 || rt.Config.MemoryMB != 256 || rt.Config.IdleTimeoutSeconds != 600 ||
		rt.Config.MaxLifetimeSeconds != 7200 || rt.Config.ArchiveAfterSeconds != 172800 {
		t.Fatalf("runtime = %+v", rt)
	}

	_, errOut, code := clitest.Run(t, env, "runtime", "pause", "agent")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(runtime_has_no_sandbox)\n") {
		t.Fatalf("pause without a sandbox: exit %d, stderr %q", code, errOut)
	}

	rt = clitest.JSON[client.Runtime](t, env, "runtime", "start", "agent")
	if rt.Status != client.RuntimeRunning || rt.CurrentSandboxID == "" {
		t.Fatalf("started runtime = %+v", rt)
	}
	_, errOut, code = clitest.Run(t, env, "runtime", "start", rt.ID)
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(runtime_already_running)\n") {
		t.Fatalf("second start: exit %d, stderr %q", code, errOut)
	}
	if rt = clitest.JSON[client.Runtime](t, env, "runtime", "pause", "agent"); rt.Status != client.RuntimePaused {
		t.Fatalf("paused runtime = %+v", rt)
	}
	if rt = clitest.JSON[client.Runtime](t, env, "runtime", "resume", "agent"); rt.Status != client.RuntimeRunning {
		t.Fatalf("resumed runtime = %+v", rt)
	}
	if rt = clitest.JSON[client.Runtime](t, env, "runtime", "keepalive", "agent", "--duration", "5m"); rt.ExpiresAt == nil {
		t.Fatalf("kept-alive runtime = %+v", rt)
	}

	sbs := clitest.JSON[client.List[client.Sandbox]](t, env, "sandbox", "ls", "--runtime", rt.ID)
	if len(sbs.Items) != 1 || sbs.Items[0].ID != rt.CurrentSandboxID || sbs.Items[0].ProviderSandboxID == "" {
		t.Fatalf("sandboxes = %+v", sbs)
	}
	sb := sbs.Items[0]
	out := clitest.MustRun(t, env, "sandbox", "ls")
	if rows := table(out); len(rows) != 2 || rows[1][0] != sb.ID || rows[1][2] != client.SandboxRunning || rows[1][6] != "agent" {
		t.Fatalf("sandbox table (want the project's name):\n%s", out)
	}
	out = clitest.MustRun(t, env, "runtime", "ls")
	if rows := table(out); len(rows) != 2 || rows[1][1] != "agent" {
		t.Fatalf("runtime table (want the project's name):\n%s", out)
	}
	if got := clitest.JSON[client.Sandbox](t, env, "sandbox", "get", sb.ProviderSandboxID); got.ID != sb.ID {
		t.Fatalf("sandbox by provider id = %+v", got)
	}
	if got := clitest.JSON[client.Sandbox](t, env, "sandbox", "kill", sb.ProviderSandboxID); got.State != client.SandboxKilled {
		t.Fatalf("killed sandbox = %+v", got)
	}

	removeAndReset(t, env)
	_, errOut, code = clitest.Run(t, env, "sandbox", "ls", "--kind", "nonsense")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(invalid_filter)\n") {
		t.Fatalf("bad filter: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = clitest.Run(t, clitest.Env(srv.URL, "pdk_notakey"), "org", "ls")
	if code != cli.ExitError || !strings.HasPrefix(errOut, "error: ") {
		t.Fatalf("bad key: exit %d, stderr %q", code, errOut)
	}
	if caps := clitest.JSON[client.Capabilities](t, env, "capabilities"); caps.DefaultProvider == "" {
		t.Fatalf("capabilities = %+v", caps)
	}
}

// removeAndReset: rm refuses a runtime with a sandbox unless --force, as
// docker rm refuses a running container; reset kills the sandbox; rm
// deletes the project.
func removeAndReset(t *testing.T, env map[string]string) {
	clitest.MustRun(t, env, "project", "create", "busy")
	clitest.MustRun(t, env, "runtime", "start", "busy")
	if _, errOut, code := clitest.Run(t, env, "project", "rm", "busy"); code != cli.ExitError || !strings.Contains(errOut, "--force") {
		t.Fatalf("rm of a running runtime without --force: exit %d, stderr %q", code, errOut)
	}
	if rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "busy"); rt.Status != client.RuntimeRunning {
		t.Fatalf("the refused rm touched the runtime: %+v", rt)
	}
	if out := clitest.MustRun(t, env, "project", "rm", "--force", "busy"); out != "deleted project busy\n" {
		t.Fatalf("rm --force: %q", out)
	}

	clitest.MustRun(t, env, "runtime", "start", "agent")
	rt := clitest.JSON[client.Runtime](t, env, "runtime", "reset", "agent", "--wipe-workspace")
	if rt.Status != client.RuntimeIdle || rt.CurrentSandboxID != "" {
		t.Fatalf("reset runtime = %+v", rt)
	}
	if killed := clitest.JSON[client.List[client.Sandbox]](t, env, "sandbox", "ls", "--state", "killed", "--runtime", rt.ID); len(killed.Items) != 2 {
		t.Fatalf("killed sandboxes = %+v", killed)
	}

	if out := clitest.MustRun(t, env, "project", "rm", "agent"); out != "deleted project agent\n" {
		t.Fatalf("rm: %q", out)
	}
	_, errOut, code := clitest.Run(t, env, "project", "get", "agent")
	if code != cli.ExitError || !strings.HasSuffix(errOut, "(project_not_found)\n") {
		t.Fatalf("get a deleted project: exit %d, stderr %q", code, errOut)
	}
}
