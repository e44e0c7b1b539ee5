package cli_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestTemplateCommands: template create, ls, get and rm, and project
// create --template [--start], against the real API.
func TestTemplateCommands(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})
	fails := func(code string, args ...string) {
		t.Helper()
		if _, errOut, exit := clitest.Run(t, env, args...); exit != cli.ExitError || !strings.HasSuffix(errOut, "("+code+")\n") {
			t.Fatalf("paddock %s: exit %d %q, want code %s", strings.Join(args, " "), exit, errOut, code)
		}
	}

	tpl := clitest.JSON[client.Template](t, env, "template", "create", "coder", "--image", "example/agent:1", "--cpu", "0.5", "--memory", "256M",
		"--pids-limit", "128", "--idle-timeout", "10m", "--archive-after", "48h", "--harness", "codex", "--model", "gpt-5-codex", "--description", "writes code")
	c := tpl.Runtime
	if tpl.Name != "coder" || c.Image != "example/agent:1" || c.CPUMillis != 500 || c.MemoryMB != 256 || c.PidsLimit != 128 ||
		c.IdleTimeoutSeconds != 600 || c.ArchiveAfterSeconds != 172800 || c.Harness != "codex" || c.Model != "gpt-5-codex" {
		t.Fatalf("template = %+v", tpl)
	}
	clitest.MustRun(t, env, "template", "create", "bare")
	fails("template_exists", "template", "create", "coder")
	fails("image_not_allowed", "template", "create", "bad", "--image", "ubuntu:24.04")
	fails("unknown_harness", "template", "create", "bad", "--harness", "hal")
	fails("secret_not_found", "template", "create", "bad", "--secret", "nope")

	out := clitest.MustRun(t, env, "template", "ls")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[1], "coder") || !strings.Contains(lines[1], "gpt-5-codex") ||
		!strings.Contains(lines[2], "bare") || !strings.Contains(lines[2], "(default)") {
		t.Fatalf("template ls:\n%s", out)
	}
	if got := clitest.MustRun(t, env, "template", "get", "coder"); !strings.Contains(got, "writes code") || !strings.Contains(got, "codex") {
		t.Fatalf("template get:\n%s", got)
	}

	// A project from it: its flags override the template's.
	p := clitest.JSON[client.Project](t, env, "project", "create", "agent", "--template", "coder", "--memory", "512M")
	rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent")
	if rt.ID != p.RuntimeID || rt.Status != client.RuntimeIdle || rt.Config.Image != "example/agent:1" || rt.Config.MemoryMB != 512 ||
		rt.Config.CPUMillis != 500 || rt.Config.Model != "gpt-5-codex" {
		t.Fatalf("runtime from the template = %+v", rt)
	}
	fails("template_not_found", "project", "create", "x", "--template", "nope")
	clitest.MustRun(t, env, "runtime", "set", "agent", "--model", "o3")
	if rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent"); rt.Config.Model != "o3" || rt.Config.Harness != "codex" {
		t.Fatalf("runtime after set --model = %+v", rt.Config)
	}

	// --start: running when the command returns.
	clitest.MustRun(t, env, "project", "create", "started", "--template", "coder", "--start")
	if rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "started"); rt.Status != client.RuntimeRunning {
		t.Fatalf("runtime of --start = %+v", rt)
	}
	// A start that fails: the project stands, the command says why and
	// exits 1.
	srv.Fake.FailNext("create", errdefs.Unavailable("engine_down", "the engine is down").WithCause(errors.New("refused")))
	_, errOut, code := clitest.Run(t, env, "project", "create", "unlucky", "--template", "coder", "--start")
	if code != cli.ExitError || !strings.Contains(errOut, "project unlucky was created, but its runtime did not start: the engine is down (engine_down)") {
		t.Fatalf("a failed start: exit %d, stderr %q", code, errOut)
	}
	clitest.MustRun(t, env, "project", "get", "unlucky")

	if out := clitest.MustRun(t, env, "template", "rm", "coder", "bare"); out != "deleted template coder\ndeleted template bare\n" {
		t.Fatalf("template rm: %q", out)
	}
	fails("template_not_found", "template", "get", "coder")
	if rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent"); rt.Config.Image != "example/agent:1" {
		t.Fatalf("a project after its template's delete = %+v", rt.Config)
	}
}
