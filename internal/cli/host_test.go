package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestHostCommands: `host add` registers a real machine with its key
// file and the host key read from a known_hosts file, refuses one that
// pins nothing before it asks the server, and `host ls`, `get` and `rm`
// list, show and remove it; `--mode bare` registers it as a bare machine.
func TestHostCommands(t *testing.T) {
	testenv.RequireDocker(t, testenv.TestImage)
	m := testenv.StartSSHHost(t)
	_, env := cliOnServer(t, servertest.Options{ShimPath: testenv.Binary(t, "paddock-shim")})
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, []byte(strings.TrimSuffix(m.Addr, ":22")+" "+m.HostKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"host", "add", "box", "--ssh", "root@" + m.Addr, "--key-file", m.KeyFile,
		"--docker-socket", m.Socket, "--run-dir", filepath.Join(m.Dir, "run"), "--disk-dir", filepath.Join(m.Dir, "disks")}

	if _, errOut, code := clitest.Run(t, env, base...); code != cli.ExitUsage || !strings.Contains(errOut, "--known-hosts") {
		t.Fatalf("a host that pins nothing: exit %d, %q", code, errOut)
	}
	empty := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := clitest.Run(t, env, append(base, "--known-hosts", empty)...); code == 0 || !strings.Contains(errOut, "holds no host key") {
		t.Fatalf("a known_hosts file without the machine: exit %d, %q", code, errOut)
	}

	h := clitest.JSON[client.Host](t, env, append(base, "--known-hosts", known, "--idle-teardown", "2h", "--teardown-command", "true", "--cost-per-hour", "1.5", "-o", "json")...)
	if h.Name != "box" || h.HostKey != m.HostKey || h.Address != m.Addr || h.IdleTeardownSeconds != 7200 || h.TeardownCommand != "true" || h.CostPerHour != 1.5 {
		t.Fatalf("host add = %+v", h)
	}
	rows := clitest.Table(clitest.MustRun(t, env, "host", "ls"))
	if len(rows) != 2 || rows[1][0] != "box" || rows[1][1] != m.Addr || rows[1][3] != "container" || rows[1][5] != "ready" {
		t.Fatalf("host ls printed %v", rows)
	}
	if got := clitest.JSON[client.Host](t, env, "host", "get", "box", "-o", "json"); got.ID != h.ID {
		t.Fatalf("host get = %+v", got)
	}
	if out := clitest.MustRun(t, env, "host", "rm", "box"); !strings.Contains(out, "removed host box") {
		t.Fatalf("host rm printed %q", out)
	}
	if _, errOut, code := clitest.Run(t, env, "host", "get", "box"); code != cli.ExitError || !strings.Contains(errOut, "host_not_found") {
		t.Fatalf("a removed host: exit %d, %q", code, errOut)
	}

	// The same machine, bare: sshd only, no engine named.
	bare := []string{"host", "add", "metal", "--ssh", "root@" + m.Addr, "--key-file", m.KeyFile, "--known-hosts", known,
		"--mode", "bare", "--run-dir", filepath.Join(m.Dir, "run"), "--disk-dir", filepath.Join(m.Dir, "disks")}
	if h := clitest.JSON[client.Host](t, env, append(bare, "-o", "json")...); h.Mode != "bare" || h.DockerSocket != "" {
		t.Fatalf("host add --mode bare = %+v", h)
	}
	if rows := clitest.Table(clitest.MustRun(t, env, "host", "ls")); len(rows) != 2 || rows[1][0] != "metal" || rows[1][3] != "bare" {
		t.Fatalf("host ls printed %v", rows)
	}
	if _, errOut, code := clitest.Run(t, env, "host", "add", "odd", "--ssh", "root@"+m.Addr, "--key-file", m.KeyFile, "--known-hosts", known, "--mode", "vm"); code != cli.ExitError || !strings.Contains(errOut, "invalid_host_mode") {
		t.Fatalf("--mode vm: exit %d, %q", code, errOut)
	}
	clitest.MustRun(t, env, "host", "rm", "metal")
}
