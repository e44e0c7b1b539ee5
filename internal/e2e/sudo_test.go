package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/testenv"
	pc "github.com/paddockhq/paddock/pkg/client"
)

// TestSudo: in the default image, whose /usr/bin/sudo links the agent, a
// process of the sandbox's user runs commands as root through the agent
// (no setuid binary: no-new-privileges holds), with its own standard
// streams, exit status and signals, and sudo's environment rules.
func TestSudo(t *testing.T) {
	testenv.RequireDocker(t, testenv.DefaultImage)
	env, docker, _, _ := dockerEnv(t)
	var p pc.Project
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws/dev/projects", pc.CreateProjectRequest{
		Name: "sudo", Runtime: &pc.RuntimeConfig{Image: testenv.DefaultImage, MemoryMB: 256, PidsLimit: 64},
	}).Decode(t, &p)
	s := startSandbox(t, env, docker, p, "/api/v1/org/acme/ws/dev/runtimes/"+p.RuntimeID)

	sh := func(script string, extra pc.ExecRequest) pc.ExecResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		extra.Argv = []string{"bash", "-c", script}
		res, err := s.sdk.Exec(ctx, "acme", "dev", s.rid, extra)
		if err != nil || res.Exit == nil {
			t.Fatalf("exec %q: %v %+v", script, err, res)
		}
		return res
	}
	out := func(script string) string {
		t.Helper()
		res := sh(script, pc.ExecRequest{})
		if res.Exit.Code != 0 {
			t.Fatalf("%q: exit %d, stderr %q", script, res.Exit.Code, res.Stderr)
		}
		return strings.TrimSpace(string(res.Stdout))
	}

	if got := out("id -u; sudo id -u; sudo -u user id -un; sudo -n -- id -u"); got != "1000\n0\nuser\n0" {
		t.Fatalf("ids: %q", got)
	}
	// A root-only file: the user cannot read it, sudo can.
	out("sudo sh -c 'echo secret > /tmp/rootonly && chmod 600 /tmp/rootonly'")
	if res := sh("cat /tmp/rootonly", pc.ExecRequest{}); res.Exit.Code == 0 {
		t.Fatalf("the user read root's file: %q", res.Stdout)
	}
	if got := out("sudo cat /tmp/rootonly"); got != "secret" {
		t.Fatalf("sudo cat: %q", got)
	}
	// Standard streams are the caller's own: a pipe in, a pipe out.
	if got := out("echo piped | sudo tr a-z A-Z"); got != "PIPED" {
		t.Fatalf("stdin through sudo: %q", got)
	}
	// Exit statuses as a shell's.
	if res := sh("sudo sh -c 'exit 7'", pc.ExecRequest{}); res.Exit.Code != 7 {
		t.Fatalf("exit status: %d", res.Exit.Code)
	}
	if res := sh("sudo no-such-command", pc.ExecRequest{}); res.Exit.Code != 127 {
		t.Fatalf("a missing command: exit %d, stderr %q", res.Exit.Code, res.Stderr)
	}
	// Environment: reset (secure PATH, root's HOME) unless -E; -i is a
	// login shell in root's home.
	res := sh("sudo sh -c 'echo $PATH $HOME $FOO $SUDO_USER'; sudo -E sh -c 'echo $FOO'; sudo -i pwd", pc.ExecRequest{Env: map[string]string{"FOO": "bar"}})
	want := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /root user\nbar\n/root"
	if got := strings.TrimSpace(string(res.Stdout)); res.Exit.Code != 0 || got != want {
		t.Fatalf("environment: exit %d %q, want %q (stderr %q)", res.Exit.Code, got, want, res.Stderr)
	}
	// A signal to sudo reaches the command: nothing outlives it.
	res = sh("timeout -s TERM 2 sudo sleep 600; echo status=$?; for i in $(seq 300); do pgrep -x sleep >/dev/null || { echo gone; exit 0; }; sleep 0.1; done; echo left", pc.ExecRequest{})
	if got := string(res.Stdout); !strings.Contains(got, "status=124") || !strings.Contains(got, "gone") {
		t.Fatalf("signals through sudo: %q (stderr %q)", got, res.Stderr)
	}
}
