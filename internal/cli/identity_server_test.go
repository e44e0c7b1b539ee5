package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestIdentityAgainstTheServer runs users, members, keys and a wallet
// sign-in through the CLI against the real API, which holds every request
// and answer to the OpenAPI document.
func TestIdentityAgainstTheServer(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})
	lower := strings.ToLower(wallet1)

	// Members of the org, made users on the way.
	if m := clitest.JSON[client.OrgMember](t, env, "member", "add", wallet1, "--role", "admin"); m.Member != lower || m.Role != client.RoleAdmin {
		t.Fatalf("member add wallet: %+v", m)
	}
	ann := clitest.JSON[client.OrgMember](t, env, "member", "add", "ann@example.com")
	if ann.Role != client.RoleMember || ann.UserID == "" {
		t.Fatalf("member add email: %+v", ann)
	}
	if m := clitest.JSON[client.OrgMember](t, env, "member", "set-role", "ann@example.com", "viewer"); m.Role != client.RoleViewer {
		t.Fatalf("set-role: %+v", m)
	}
	if rows := table(clitest.MustRun(t, env, "member", "ls")); len(rows) != 3 {
		t.Fatalf("member ls:\n%v", rows)
	}
	wm := clitest.JSON[client.WorkspaceMember](t, env, "workspace", "members", "add", "ann@example.com")
	if wm.UserID != ann.UserID || wm.Member != "ann@example.com" {
		t.Fatalf("workspace member: %+v", wm)
	}

	// Users, for the installation admin.
	if u := clitest.JSON[client.User](t, env, "user", "set", "ann@example.com", "--name", "Ann"); u.Name != "Ann" || u.ID != ann.UserID {
		t.Fatalf("user set: %+v", u)
	}
	if u := clitest.JSON[client.User](t, env, "user", "get", wallet1); u.Wallet != lower {
		t.Fatalf("user get: %+v", u)
	}
	if l := clitest.JSON[client.List[client.User]](t, env, "user", "ls"); len(l.Items) != 2 {
		t.Fatalf("user ls: %+v", l.Items)
	}
	bob := clitest.JSON[client.User](t, env, "user", "create", "--email", "bob@example.com")
	clitest.MustRun(t, env, "user", "rm", bob.ID)

	// A key for ann, narrowed to dev, which expires in 30 days.
	k := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--name", "ci", "--member", "ann@example.com", "--ws", "dev", "--expires", "30d")
	if k.UserID != ann.UserID || k.Role != client.RoleViewer || k.WorkspaceID == "" || k.ExpiresAt == nil ||
		k.ExpiresAt.Sub(time.Now()) < 29*24*time.Hour || k.ExpiresAt.Sub(time.Now()) > 31*24*time.Hour {
		t.Fatalf("key create: %+v", k)
	}
	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	if k2 := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", wallet1, "--expires", at.Format(time.RFC3339)); k2.ExpiresAt == nil || !k2.ExpiresAt.Equal(at) {
		t.Fatalf("key create at a time: %+v", k2)
	}
	annEnv := clitest.Env(srv.URL, k.Key)
	d := detail(strings.SplitN(clitest.MustRun(t, annEnv, "whoami"), "\n\n", 2)[0])
	if d["CREDENTIAL"] != "key:"+k.ID || d["USER"] != "ann@example.com" || d["KEY_SCOPE"] != "org acme, workspace "+k.WorkspaceID || d["KEY_ROLE"] != "viewer" {
		t.Fatalf("whoami with ann's key: %v", d)
	}
	if l := clitest.JSON[client.List[client.APIKey]](t, env, "key", "ls"); len(l.Items) < 2 {
		t.Fatalf("key ls: %+v", l.Items)
	}
	clitest.MustRun(t, env, "key", "revoke", k.ID)
	mustFail(t, annEnv, cli.ExitError, []string{"(invalid_api_key)"}, "whoami")

	// Installation keys.
	ops := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--installation", "--name", "ops")
	if l := clitest.JSON[client.List[client.APIKey]](t, env, "key", "ls", "--installation"); !hasKey(l.Items, ops.ID) {
		t.Fatalf("key ls --installation: %+v", l.Items)
	}
	clitest.MustRun(t, env, "key", "revoke", "--installation", ops.ID)

	walletSessionOnServer(t, srv.URL, lower)
	clitest.MustRun(t, env, "member", "rm", "ann@example.com")
	if l := clitest.JSON[client.List[client.OrgMember]](t, env, "member", "ls"); len(l.Items) != 1 {
		t.Fatalf("members after rm: %+v", l.Items)
	}
}

func hasKey(keys []client.APIKey, id string) bool {
	for _, k := range keys {
		if k.ID == id {
			return true
		}
	}
	return false
}

// walletSessionOnServer: a wallet sign-in acts as the wallet's user, and
// ends with logout.
func walletSessionOnServer(t *testing.T, url, lower string) {
	home := t.TempDir()
	user := map[string]string{"HOME": home}
	out := clitest.MustRun(t, user, "login", "--url", url, "--wallet-key-file", writeWalletKey(t, wallet1Key, 0o600))
	if !strings.HasPrefix(out, "Signed in to "+url+" as "+lower) || !strings.Contains(out, "Default org: acme") {
		t.Fatalf("login:\n%s", out)
	}
	token := savedConfig(t, filepath.Join(home, ".config", "paddock", "config.json"))["session_token"]
	me := clitest.JSON[client.Me](t, user, "whoami")
	if !strings.HasPrefix(me.Credential, "session:") || me.User == nil || me.User.Wallet != lower || len(me.Memberships) != 1 || me.Memberships[0].Org != "acme" {
		t.Fatalf("whoami with the session: %+v", me)
	}
	if mine := clitest.JSON[client.CreatedKey](t, user, "key", "create", "--name", "laptop"); mine.Role != client.RoleAdmin || mine.UserID != me.User.ID {
		t.Fatalf("key of the session's user: %+v", mine)
	}
	clitest.MustRun(t, user, "logout")
	mustFail(t, clitest.Env(url, token), cli.ExitError, []string{"(invalid_session)"}, "whoami")
}
