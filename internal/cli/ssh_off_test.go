package cli_test

import (
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
)

// TestSSHGatewayOff: against a server whose SSH gateway is off (its API
// has no GET /api/v1/ssh), paddock ssh says the gateway is off and names
// the setting, and runs nothing.
func TestSSHGatewayOff(t *testing.T) {
	_, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "project", "create", "agent")
	env["HOME"] = t.TempDir()
	_, stderr, code := clitest.Run(t, env, "ssh", "agent", "--", "true")
	if code == 0 || !strings.Contains(stderr, "the server's SSH gateway is off (ssh_listen)") {
		t.Fatalf("paddock ssh with the gateway off: exit %d, stderr %q", code, stderr)
	}
}
