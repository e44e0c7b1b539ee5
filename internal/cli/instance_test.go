package cli_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/shim/shimtest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestInstanceCommands: `paddock instance` acts on the runtime a server in
// instance mode serves, through /api/sandbox (the recorder sees each
// route), and exits with an exec's exit code; against a server not in
// instance mode it says the route is not found.
func TestInstanceCommands(t *testing.T) {
	dial := shimtest.Serve(t)
	a := startAPI(t, servertest.Options{
		Provider:     fake.New(fake.Config{Agent: func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }}),
		InstanceMode: config.InstanceConfig{Instance: "acme/dev/svc"},
	})
	env := clitest.Env(a.URL, a.Key)
	rid := get[client.Project](t, a, "/api/v1/org/acme/ws/dev/projects/svc").RuntimeID

	if out := clitest.MustRun(t, env, "instance", "show"); !strings.Contains(out, rid) || !strings.Contains(out, "idle") {
		t.Fatalf("instance show printed %q", out)
	}
	if out := clitest.MustRun(t, env, "instance", "start"); !strings.Contains(out, "running") {
		t.Fatalf("instance start printed %q", out)
	}
	if out := clitest.MustRun(t, env, "instance", "exec", "--", "sh", "-c", "echo from-instance"); out != "from-instance\n" {
		t.Fatalf("instance exec printed %q", out)
	}
	if !strings.Contains(a.body("POST /api/sandbox/exec"), "from-instance") {
		t.Fatalf("instance exec did not go through /api/sandbox/exec")
	}
	if _, _, code := clitest.Run(t, env, "instance", "exec", "--", "sh", "-c", "exit 3"); code != 3 {
		t.Fatalf("instance exec of exit 3 exited %d", code)
	}
	if out := clitest.MustRun(t, env, "instance", "stop"); !strings.Contains(out, "paused") {
		t.Fatalf("instance stop printed %q", out)
	}
	if rt := get[client.Runtime](t, a, "/api/v1/org/acme/ws/dev/runtimes/"+rid); rt.Status != client.RuntimePaused {
		t.Fatalf("after instance stop the runtime is %s", rt.Status)
	}
	if out := clitest.MustRun(t, env, "instance", "resume"); !strings.Contains(out, "running") {
		t.Fatalf("instance resume printed %q", out)
	}

	plain := startAPI(t, servertest.Options{})
	_, errOut, code := clitest.Run(t, clitest.Env(plain.URL, plain.Key), "instance", "show")
	if code != cli.ExitError || !strings.Contains(errOut, "route_not_found") {
		t.Fatalf("instance show without instance mode: exit %d, %q", code, errOut)
	}
}
