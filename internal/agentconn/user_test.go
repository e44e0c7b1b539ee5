package agentconn_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/agentconn"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/shim"
)

// TestExecAsUser: an agent whose default is "user" starts processes as uid
// and gid 1000 with its home, root processes when asked, without the
// agent's own KILL, SETUID and SETGID but with its other capabilities, and
// refuses an account the sandbox has not.
func TestExecAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting processes as another user needs the agent to be root, as it is in a sandbox")
	}
	a := startAgent(t, shim.Options{User: "user"})
	ctx := ctxT(t)
	run := func(user string) string {
		t.Helper()
		res, err := a.client.Run(ctx, agentconn.ExecRequest{User: user, Cwd: "/",
			Argv: []string{"sh", "-c", `echo "$(id -u) $(id -g) $HOME $(awk '/^CapEff/ { print $2 }' /proc/self/status)"`}})
		if err != nil || res.Exit.Code != 0 {
			t.Fatalf("as %q: %v %+v %s", user, err, res.Exit, res.Stderr)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	if got := run(""); got != "1000 1000 /home/user 0000000000000000" {
		t.Errorf("by default: %q", got)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var own uint64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:\t"); ok {
			own, _ = strconv.ParseUint(v, 16, 64)
		}
	}
	const agentOnly = 1<<5 | 1<<6 | 1<<7 // KILL, SETGID, SETUID
	if got, want := run("root"), fmt.Sprintf("0 0 /root %016x", own&^agentOnly); got != want {
		t.Errorf("as root: %q, want %q (the agent's %016x without KILL, SETGID and SETUID)", got, want, own)
	}
	_, err = a.client.Run(ctx, agentconn.ExecRequest{User: "nobody", Argv: []string{"true"}})
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_user")
}

// TestExecCwdAsUser: a working directory the process's user may not enter
// is refused as invalid_cwd before the fork, though the agent (root) could
// enter it.
func TestExecCwdAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting processes as another user needs the agent to be root, as it is in a sandbox")
	}
	a := startAgent(t, shim.Options{User: "user"})
	ctx := ctxT(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := a.client.Run(ctx, agentconn.ExecRequest{Cwd: dir, Argv: []string{"true"}})
	wantCode(t, err, errdefs.ErrInvalidArgument, "invalid_cwd")
	res, err := a.client.Run(ctx, agentconn.ExecRequest{User: "root", Cwd: dir, Argv: []string{"true"}})
	if err != nil || res.Exit.Code != 0 {
		t.Fatalf("as root in %s: %v %+v", dir, err, res)
	}
}
