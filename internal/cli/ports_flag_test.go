package cli_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestPortFlag: project create's --port declares ports, PORT or
// PORT:public, on the real API; a malformed one is a usage error and one
// declared twice the server's invalid_port.
func TestPortFlag(t *testing.T) {
	t.Parallel()
	_, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "project", "create", "web", "--port", "8000", "--port", "3000:public")
	rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "web")
	if want := []client.RuntimePort{{Port: 3000, Public: true}, {Port: 8000}}; !slices.Equal(rt.Config.Ports, want) {
		t.Fatalf("declared ports %+v, want %+v", rt.Config.Ports, want)
	}
	for _, bad := range []string{"0", "http", "3000:open", "70000"} {
		if _, errOut, code := clitest.Run(t, env, "project", "create", "bad", "--port", bad); code != cli.ExitUsage || !strings.Contains(errOut, "--port") {
			t.Fatalf("--port %s: exit %d %q, want a usage error", bad, code, errOut)
		}
	}
	if _, errOut, code := clitest.Run(t, env, "project", "create", "bad", "--port", "3000", "--port", "3000:public"); code != cli.ExitError || !strings.HasSuffix(errOut, "(invalid_port)\n") {
		t.Fatalf("a port declared twice: exit %d %q", code, errOut)
	}
}
