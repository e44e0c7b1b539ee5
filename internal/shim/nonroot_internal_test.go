package shim

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/paddockhq/paddock/internal/agentpb"
)

// TestOwnAccount: an agent that is not root is the account of its ids
// when that account's home is there, so its processes get that home and
// name; root, another uid or a missing home leave it nameless, as before.
func TestOwnAccount(t *testing.T) {
	home := t.TempDir()
	accounts := map[string]sandboxUser{
		UserDefault: {name: UserDefault, uid: 1000, gid: 1000, home: home},
		UserRoot:    {name: UserRoot, uid: 0, gid: 0, home: t.TempDir()},
	}
	if u := ownAccount(1000, 1000, accounts); u != accounts[UserDefault] {
		t.Errorf("uid 1000: %+v, want the user account", u)
	}
	for _, c := range []struct{ uid, gid int }{{0, 0}, {1001, 1001}, {1000, 1001}} {
		if u := ownAccount(c.uid, c.gid, accounts); u != (sandboxUser{uid: c.uid, gid: c.gid}) {
			t.Errorf("%d:%d: %+v, want no account", c.uid, c.gid, u)
		}
	}
	accounts[UserDefault] = sandboxUser{name: UserDefault, uid: 1000, gid: 1000, home: filepath.Join(home, "missing")}
	if u := ownAccount(1000, 1000, accounts); u.name != "" {
		t.Errorf("uid 1000 without its home: %+v, want no account", u)
	}
}

// cannotSwitch makes the agent one without CAP_SETUID and CAP_SETGID for
// the test, as a Pod's agent is.
func cannotSwitch(t *testing.T) {
	saved := canSwitchUsers
	canSwitchUsers = func() bool { return false }
	t.Cleanup(func() { canSwitchUsers = saved })
}

// TestAgentThatCannotSwitchUsers: an agent that cannot become another
// account refuses every call that names one, with user_not_permitted
// (permission denied, 403 for envd's files), before anything starts;
// calls that name none, or its own, are served; it does not serve sudo,
// and a default account it cannot be is an error at its start.
func TestAgentThatCannotSwitchUsers(t *testing.T) {
	if os.Geteuid() == 1000 {
		t.Skip("the test names uid 1000 as the account the agent is not")
	}
	cannotSwitch(t)
	if SudoEnabled() {
		t.Error("sudo is enabled in an agent that cannot switch users")
	}
	srv, hc, _ := serveAgent(t, Options{}, true)
	if _, err := NewServer(Options{User: UserDefault, Logger: srv.log, Reaper: srv.procs.reaper}); !isNotPermitted(err) {
		t.Errorf("NewServer as user: %v, want user_not_permitted", err)
	}

	if _, _, err := srv.execSpec(&agentpb.ProcessStart{Argv: []string{"true"}, User: UserDefault}); !isNotPermitted(err) {
		t.Errorf("exec as user: %v", err)
	}
	if _, _, err := srv.execSpec(&agentpb.ProcessStart{Argv: []string{"true"}}); err != nil {
		t.Errorf("exec as the agent: %v", err)
	}
	if _, err := (&terminalService{s: srv}).startReserved(&agentpb.TerminalStart{User: UserDefault}); !isNotPermitted(err) {
		t.Errorf("terminal as user: %v", err)
	}
	if _, err := srv.envdSpec(bash("true"), withUser(connect.NewRequest(bash("true")), UserDefault).Header()); !isNotPermitted(err) {
		t.Errorf("envd start as user: %v", err)
	}
	if _, err := srv.sudoStart(sudoRequest{Argv: []string{"true"}, User: UserDefault}, nil, nil); !isNotPermitted(err) {
		t.Errorf("sudo as user: %v", err)
	}
	// Through the wire: the Connect code and reason, and envd's 403.
	_, err := srv.envdUser(withUser(connect.NewRequest(bash("true")), UserDefault).Header())
	if code, reason := reasonOf(toConnect(srv.log, "test", err)); code != connect.CodePermissionDenied || reason != "user_not_permitted" {
		t.Errorf("envd user: %v %q", code, reason)
	}
	res, err := hc.Get("http://agent/files?username=user&path=/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("envd download as user: %s, want 403", res.Status)
	}
}

// isNotPermitted reports whether err is the agent's refusal of an
// account it cannot become.
func isNotPermitted(err error) bool {
	var re *rpcError
	return errors.As(err, &re) && re.kind == kindPermission && re.reason == "user_not_permitted" &&
		strings.Contains(re.msg, `user "user" is not available in this sandbox`)
}
