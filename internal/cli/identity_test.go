package cli_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// Two wallets of well-known keys: 1 and 2.
const (
	wallet1    = "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf"
	wallet1Key = "0x0000000000000000000000000000000000000000000000000000000000000001"
	wallet2    = "0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF"
	wallet2Key = "0000000000000000000000000000000000000000000000000000000000000002"
)

// startIdentity starts the real API with org acme and workspace dev; its
// key is the installation admin's.
func startIdentity(t *testing.T) (a *apiServer, url, goodKey string) {
	t.Helper()
	a, _ = startScoped(t, servertest.Options{})
	return a, a.URL, a.Key
}

// twinKeys stores two keys of org acme whose plaintexts share their shown
// prefix, pdk_000000, and returns one of them whole.
func twinKeys(t *testing.T, a *apiServer) string {
	t.Helper()
	org := get[client.Org](t, a, "/api/v1/org/acme")
	var whole string
	for _, name := range []string{"twin", "twin2"} {
		plain := auth.KeyPrefix + "000000" + auth.NewKey()[len(auth.KeyPrefix)+6:]
		_, _, err := auth.Keys{Store: a.Store, Now: a.Clock.Now}.Create(t.Context(), store.APIKey{Name: name, Role: "member", OrgID: org.ID}, plain)
		if err != nil {
			t.Fatal(err)
		}
		whole = plain
	}
	return whole
}

func TestKeyCommands(t *testing.T) {
	t.Parallel()
	f, url, goodKey := startIdentity(t)
	env := clitest.Env(url, goodKey)
	env["PADDOCK_ORG"] = "acme"
	env["PADDOCK_WS"] = "not-a-key-scope" // the default workspace narrows no key
	clitest.MustRun(t, env, "member", "add", "ann@example.com", "--role", "admin")
	clitest.MustRun(t, env, "workspace", "members", "add", "ann@example.com", "--ws", "dev")
	const create = "POST /api/v1/org/{org}/keys"

	// The key is printed once, with the note that it will not be again.
	out := clitest.MustRun(t, env, "key", "create", "--name", "ci", "--member", "ann@example.com", "--role", "member", "--ws", "dev", "--expires", "30d")
	head, note, _ := strings.Cut(out, "\n\n")
	d := detail(head)
	if !strings.HasPrefix(d["KEY"], "pdk_") || strings.Count(out, d["KEY"]) != 1 || note != "Store the key now: it will not be shown again.\n" {
		t.Fatalf("key create:\n%s", out)
	}
	if d["NAME"] != "ci" || d["ROLE"] != "member" || d["WORKSPACE_ID"] != get[client.Workspace](t, f, "/api/v1/org/acme/ws/dev").ID || d["EXPIRES"] != "2026-04-03T05:06:07Z" || d["REVOKED"] != "-" {
		t.Fatalf("key create: %v", d)
	}
	jsonEq(t, f.body(create), `{"name":"ci","member":"ann@example.com","role":"member","workspace":"dev","expires_in":"720h0m0s"}`)
	ci := d["ID"]

	// The keys below are made by a signed-in admin of acme for herself,
	// an hour before ci, so that ci is listed first (newest first).
	f.Clock.Advance(-time.Hour)
	self := signedIn(t, env, url, wallet1Key)
	self["PADDOCK_WS"] = env["PADDOCK_WS"]
	made := keyExpiries(t, f, self)
	f.Clock.Advance(time.Hour)

	rows := table(clitest.MustRun(t, env, "key", "ls"))
	if got := strings.Join(rows[0], " "); got != "ID NAME PREFIX ROLE USER_ID WORKSPACE_ID EXPIRES REVOKED CREATED" {
		t.Fatalf("header %q", got)
	}
	if len(rows) != 1+1+made || rows[1][0] != ci || rows[1][4] != get[client.User](t, f, "/api/v1/users/ann@example.com").ID || rows[1][7] != "-" {
		t.Fatalf("key ls:\n%v", rows)
	}
	if out := clitest.MustRun(t, env, "key", "revoke", ci); out != "revoked key "+ci+"\n" {
		t.Fatalf("revoke: %q", out)
	}
	if rows := table(clitest.MustRun(t, env, "key", "ls", "--limit", "1")); rows[1][7] != fakeNow {
		t.Fatalf("revoked key:\n%v", rows)
	}
	mustFail(t, env, cli.ExitError, []string{"(key_not_found)"}, "key", "revoke", "00000000-0000-4000-8000-000000000000")
	// A prefix, or a whole key, two keys share is refused, naming no more
	// than the prefix.
	whole := twinKeys(t, f)
	for _, arg := range []string{"pdk_000000", whole} {
		errOut := mustFail(t, env, cli.ExitError, []string{"2 keys have the prefix pdk_000000; revoke one by its id"}, "key", "revoke", arg)
		if strings.Contains(errOut, whole) {
			t.Fatalf("the error prints the whole key: %q", errOut)
		}
	}
	t.Run("installation keys", func(t *testing.T) { installationKeys(t, f, env) })
	t.Run("no org", func(t *testing.T) {
		mustFail(t, clitest.Env(url, goodKey), cli.ExitUsage, []string{"no org"}, "key", "ls")
	})
}

// installationKeys makes, lists and revokes installation keys with env.
func installationKeys(t *testing.T, f *apiServer, env map[string]string) {
	{
		f.Clock.Advance(time.Second) // after the server's own key
		k := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--installation", "--name", "ops")
		jsonEq(t, f.body("POST /api/v1/keys"), `{"name":"ops"}`)
		if k.OrgID != "" || k.Role != client.RoleAdmin || k.Key == "" {
			t.Fatalf("installation key %+v", k)
		}
		// The server's own admin key is listed too, after it.
		l := clitest.JSON[client.List[client.APIKey]](t, env, "key", "ls", "--installation")
		if len(l.Items) != 2 || l.Items[0].ID != k.ID {
			t.Fatalf("installation keys %+v", l.Items)
		}
		// Any key of the installation, an org's included.
		org := clitest.JSON[client.List[client.APIKey]](t, env, "key", "ls")
		out := clitest.MustRun(t, env, "key", "--installation", "revoke", org.Items[1].ID, "-o", "json")
		if got := decode[map[string]string](t, out); got["revoked"] != org.Items[1].ID {
			t.Fatalf("revoke: %s", out)
		}
		mustFail(t, env, cli.ExitUsage, []string{"--role does not apply to an installation key"}, "key", "create", "--installation", "--role", "admin")
		mustFail(t, env, cli.ExitUsage, []string{"--org and --installation"}, "key", "ls", "--installation", "--org", "acme")
	}
}

func TestUserCommands(t *testing.T) {
	t.Parallel()
	f, url, goodKey := startIdentity(t)
	env := clitest.Env(url, goodKey)

	d := detail(clitest.MustRun(t, env, "user", "create", "--email", "ann@example.com", "--name", "Ann"))
	if d["EMAIL"] != "ann@example.com" || d["NAME"] != "Ann" || d["WALLET"] != "-" {
		t.Fatalf("user create: %v", d)
	}
	jsonEq(t, f.body("POST /api/v1/users"), `{"email":"ann@example.com","name":"Ann"}`)
	f.Clock.Advance(time.Second) // the order of making is the order listed
	bob := clitest.JSON[client.User](t, env, "user", "create", "--wallet", wallet1)
	jsonEq(t, f.body("POST /api/v1/users"), `{"wallet":"`+wallet1+`"}`)
	mustFail(t, env, cli.ExitUsage, []string{"a user needs --email or --wallet"}, "user", "create", "--name", "nobody")

	rows := table(clitest.MustRun(t, env, "user", "ls"))
	if strings.Join(rows[0], " ") != "ID EMAIL WALLET NAME CREATED" || len(rows) != 3 || rows[2][2] != strings.ToLower(wallet1) {
		t.Fatalf("user ls:\n%v", rows)
	}
	if got := clitest.JSON[client.User](t, env, "user", "get", wallet1); got.ID != bob.ID {
		t.Fatalf("user get by wallet: %+v", got)
	}

	d = detail(clitest.MustRun(t, env, "user", "set", "ann@example.com", "--name", "", "--wallet", wallet2))
	jsonEq(t, f.body("PATCH /api/v1/users/{user}"), `{"wallet":"`+wallet2+`","name":""}`)
	if d["NAME"] != "-" || d["WALLET"] != strings.ToLower(wallet2) {
		t.Fatalf("user set: %v", d)
	}
	mustFail(t, env, cli.ExitUsage, []string{"nothing to change"}, "user", "set", "ann@example.com")
	mustFail(t, env, cli.ExitError, []string{"(missing_identity)"}, "user", "set", bob.ID, "--wallet", "")

	if out := clitest.MustRun(t, env, "user", "rm", "ann@example.com"); out != "deleted user ann@example.com\n" {
		t.Fatalf("user rm: %q", out)
	}
	mustFail(t, env, cli.ExitError, []string{"(user_not_found)"}, "user", "get", "ann@example.com")
}

func TestMemberCommands(t *testing.T) {
	t.Parallel()
	f, url, goodKey := startIdentity(t)
	env := clitest.Env(url, goodKey)
	env["PADDOCK_ORG"] = "acme"

	d := detail(clitest.MustRun(t, env, "member", "add", "ann@example.com"))
	jsonEq(t, f.body("POST /api/v1/org/{org}/members"), `{"member":"ann@example.com","role":"member"}`)
	if d["MEMBER"] != "ann@example.com" || d["ROLE"] != "member" || d["USER_ID"] == "-" {
		t.Fatalf("member add: %v", d)
	}
	f.Clock.Advance(time.Second) // the order of adding is the order listed
	m := clitest.JSON[client.OrgMember](t, env, "member", "add", wallet1, "--role", "admin")
	if m.Member != strings.ToLower(wallet1) || m.Role != client.RoleAdmin {
		t.Fatalf("member add: %+v", m)
	}
	rows := table(clitest.MustRun(t, env, "member", "ls"))
	if strings.Join(rows[0], " ") != "MEMBER ROLE USER_ID ADDED" || len(rows) != 3 || rows[2][1] != "admin" || rows[2][2] != m.UserID {
		t.Fatalf("member ls:\n%v", rows)
	}
	d = detail(clitest.MustRun(t, env, "member", "set-role", wallet1, "viewer"))
	jsonEq(t, f.body("PATCH /api/v1/org/{org}/members/{member}"), `{"role":"viewer"}`)
	if d["ROLE"] != "viewer" {
		t.Fatalf("set-role: %v", d)
	}
	mustFail(t, env, cli.ExitUsage, []string{"expected MEMBER ROLE"}, "member", "set-role", wallet1)
	if out := clitest.MustRun(t, env, "member", "rm", "ann@example.com"); out != "removed member ann@example.com\n" {
		t.Fatalf("member rm: %q", out)
	}
	if l := clitest.JSON[client.List[client.OrgMember]](t, env, "members", "ls"); len(l.Items) != 1 || l.Items[0].UserID != m.UserID {
		t.Fatalf("members after rm: %+v", l.Items)
	}
	mustFail(t, env, cli.ExitError, []string{"(member_not_found)"}, "member", "rm", "ann@example.com")
	mustFail(t, clitest.Env(url, goodKey), cli.ExitUsage, []string{"no org"}, "member", "ls")

	t.Run("workspace members show the user", func(t *testing.T) {
		env["PADDOCK_WS"] = "dev"
		d := detail(clitest.MustRun(t, env, "workspace", "members", "add", wallet1))
		if d["MEMBER"] != strings.ToLower(wallet1) || d["USER_ID"] != m.UserID || d["WORKSPACE_ID"] != get[client.Workspace](t, f, "/api/v1/org/acme/ws/dev").ID {
			t.Fatalf("workspace members add: %v", d)
		}
		rows := table(clitest.MustRun(t, env, "workspace", "members", "ls"))
		if strings.Join(rows[0], " ") != "MEMBER USER_ID ADDED" || len(rows) != 2 || rows[1][1] != m.UserID {
			t.Fatalf("workspace members ls:\n%v", rows)
		}
		if out := clitest.MustRun(t, env, "workspace", "members", "rm", m.UserID); out != "removed member "+m.UserID+"\n" {
			t.Fatalf("workspace members rm: %q", out)
		}
	})
}

// signedIn adds the wallet of key as an admin of the org of admin and
// returns an environment signed in with it (a saved session).
func signedIn(t *testing.T, admin map[string]string, url, key string) map[string]string {
	t.Helper()
	addr := map[string]string{wallet1Key: wallet1, wallet2Key: wallet2}[key]
	clitest.MustRun(t, admin, "member", "add", addr, "--role", "admin")
	env := map[string]string{"HOME": t.TempDir()}
	clitest.MustRun(t, env, "login", "--url", url, "--wallet-key-file", writeWalletKey(t, key, 0o600))
	return env
}

// keyExpiries makes keys with env with each form of --expires and refuses
// bad ones before they reach the server; it returns how many it made.
func keyExpiries(t *testing.T, f *apiServer, env map[string]string) int {
	const create = "POST /api/v1/org/{org}/keys"
	tests := []struct {
		expires string
		body    string
	}{
		{"720h", `{"expires_in":"720h0m0s"}`},
		{"1d12h", `{"expires_in":"36h0m0s"}`},
		{"90m", `{"expires_in":"1h30m0s"}`},
		{"2026-12-31T00:00:00Z", `{"expires_at":"2026-12-31T00:00:00Z"}`},
		{"2026-12-31T01:00:00+01:00", `{"expires_at":"2026-12-31T01:00:00+01:00"}`},
	}
	for _, tt := range tests {
		t.Run("expires "+tt.expires, func(t *testing.T) {
			out, errOut, code := clitest.Run(t, env, "key", "create", "--expires", tt.expires, "-o", "json")
			if code != 0 || errOut != "Store the key now: it will not be shown again.\n" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if k := decode[client.CreatedKey](t, out); !strings.HasPrefix(k.Key, "pdk_") || k.ExpiresAt == nil {
				t.Fatalf("created %+v", k)
			}
			jsonEq(t, f.body(create), tt.body)
		})
	}
	for _, bad := range []string{"soon", "0d", "-5h", "30 days", "1d-25h", "2026-13-01T00:00:00Z", "2026-12-31"} {
		t.Run("refuses "+bad, func(t *testing.T) {
			before := f.body(create)
			mustFail(t, env, cli.ExitUsage, []string{`--expires "` + bad + `"`}, "key", "create", "--expires", bad)
			if f.body(create) != before {
				t.Fatal("a bad --expires reached the server")
			}
		})
	}

	return len(tests)
}

// writeWalletKey writes a wallet key file of mode perm.
func writeWalletKey(t *testing.T, key string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wallet.key")
	if err := os.WriteFile(path, []byte(key+"\n"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// ended reports whether the server refuses a session token now.
func ended(t *testing.T, a *apiServer, token string) bool {
	t.Helper()
	return a.DoKey(t, token, "GET", "/api/v1/me", nil).Status == http.StatusUnauthorized
}

// TestWalletLogin signs in with a wallet key file against the server,
// which checks the signature over the message it issued, uses the
// session, and logs out.
func TestWalletLogin(t *testing.T) {
	t.Parallel()
	f, url, goodKey := startIdentity(t)
	admin := clitest.Env(url, goodKey)
	admin["PADDOCK_ORG"] = "acme"
	clitest.MustRun(t, admin, "member", "add", wallet1, "--role", "admin")

	home := t.TempDir()
	path := filepath.Join(home, ".config", "paddock", "config.json")
	env := map[string]string{"HOME": home}
	keyFile := writeWalletKey(t, wallet1Key, 0o600)

	out := clitest.MustRun(t, env, "login", "--url", url, "--wallet-key-file", keyFile)
	lower := strings.ToLower(wallet1)
	want := "Signed in to " + url + " as " + lower + "; session saved to " + path + "\nSession expires: 2026-03-05T05:06:07Z\nDefault org: acme\n"
	if out != want {
		t.Fatalf("login:\n%s\nwant:\n%s", out, want)
	}
	jsonEq(t, f.body("POST /api/auth/challenge"), `{"address":"`+wallet1+`"}`)
	cfg := savedConfig(t, path)
	token := cfg["session_token"]
	if !strings.HasPrefix(token, "v4.local.") || cfg["api_key"] != "" || cfg["url"] != url || cfg["org"] != "acme" {
		t.Fatalf("config %v", cfg)
	}
	if strings.Contains(out, token) || strings.Contains(out, strings.TrimPrefix(wallet1Key, "0x")) {
		t.Fatalf("login printed a secret:\n%s", out)
	}

	// Later commands act as the user, with the session token.
	d := detail(strings.SplitN(clitest.MustRun(t, env, "whoami"), "\n\n", 2)[0])
	if !strings.HasPrefix(d["CREDENTIAL"], "session:") || d["USER"] != lower || d["INSTALLATION_ADMIN"] != "false" {
		t.Fatalf("whoami as the session: %v", d)
	}
	me := clitest.JSON[client.Me](t, env, "whoami")
	if me.User == nil || me.User.Wallet != lower || len(me.Memberships) != 1 || me.Memberships[0].Role != client.RoleAdmin {
		t.Fatalf("me %+v", me)
	}
	clitest.MustRun(t, env, "key", "create", "--name", "laptop")

	// logout ends the session on the server, then forgets it.
	out = clitest.MustRun(t, env, "logout")
	if out != "Signed out of "+url+"; removed the session token from "+path+"\n" {
		t.Fatalf("logout: %q", out)
	}
	if !ended(t, f, token) {
		t.Fatal("the session still works after logout")
	}
	if cfg := savedConfig(t, path); cfg["session_token"] != "" || cfg["url"] != url || cfg["org"] != "acme" {
		t.Fatalf("config after logout %v", cfg)
	}
	if out := clitest.MustRun(t, env, "logout"); out != "Not logged in: no credential saved\n" {
		t.Fatalf("logout again: %q", out)
	}
	mustFail(t, env, cli.ExitUsage, []string{"no API key"}, "whoami")

	t.Run("a session ended elsewhere is still logged out of", func(t *testing.T) {
		clitest.MustRun(t, env, "login", "--wallet-key-file", keyFile)
		f.MustKey(t, savedConfig(t, path)["session_token"], 204, "DELETE", "/api/auth/session", nil)
		clitest.MustRun(t, env, "logout")
		if cfg := savedConfig(t, path); cfg["session_token"] != "" {
			t.Fatalf("config %v", cfg)
		}
	})
	t.Run("an API key is only forgotten", func(t *testing.T) {
		clitest.MustRun(t, env, "login", "--api-key", goodKey)
		out := clitest.MustRun(t, env, "logout", "-o", "json")
		if got := decode[map[string]any](t, out); got["config"] != path || len(got["removed"].([]any)) != 1 || ended(t, f, goodKey) {
			t.Fatalf("logout: %s", out)
		}
	})
	t.Run("a key without 0x of a wallet added later", func(t *testing.T) {
		clitest.MustRun(t, admin, "member", "add", wallet2)
		out := clitest.MustRun(t, env, "login", "--wallet-key-file", writeWalletKey(t, wallet2Key, 0o400), "-o", "json")
		if got := decode[map[string]string](t, out); got["user"] != strings.ToLower(wallet2) || got["org"] != "acme" {
			t.Fatalf("login: %s", out)
		}
	})
	walletLoginRefusals(t, env, url, home, keyFile, goodKey)
}

// walletLoginRefusals: a login with a bad key file, or for a wallet no
// user has, is refused, shows no key and leaves the config as it was.
func walletLoginRefusals(t *testing.T, env map[string]string, url, home, keyFile, goodKey string) {
	path := filepath.Join(home, ".config", "paddock", "config.json")
	refusals := []struct {
		name   string
		file   string
		args   []string
		code   int
		stderr string
	}{
		{"a key file others may read", writeWalletKey(t, wallet1Key, 0o644), nil, cli.ExitError, "is open to others (mode 0644): it must be readable by its owner only"},
		{"a key file its group may read", writeWalletKey(t, wallet1Key, 0o640), nil, cli.ExitError, "chmod 600"},
		{"not a key", writeWalletKey(t, "hunter2", 0o600), nil, cli.ExitError, "does not hold a hex secp256k1 private key"},
		{"a zero key", writeWalletKey(t, strings.Repeat("0", 64), 0o600), nil, cli.ExitError, "does not hold a valid secp256k1 private key"},
		{"a missing file", filepath.Join(home, "nope"), nil, cli.ExitError, "wallet key file: open"},
		{"a wallet no user has", writeWalletKey(t, "0x"+strings.Repeat("0", 63)+"3", 0o600), nil, cli.ExitError, "(unknown_wallet)"},
		{"with an API key too", keyFile, []string{"--api-key", goodKey}, cli.ExitUsage, "pass --wallet-key-file or an API key, not both"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile(path)
			args := append([]string{"login", "--url", url, "--wallet-key-file", tt.file}, tt.args...)
			errOut := mustFail(t, env, tt.code, []string{tt.stderr}, args...)
			if strings.Contains(errOut, "hunter2") || strings.Contains(errOut, strings.TrimPrefix(wallet1Key, "0x")) {
				t.Fatalf("stderr shows the key: %q", errOut)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Fatalf("the config changed:\n%s", after)
			}
		})
	}
}

func TestWhoamiWithAKey(t *testing.T) {
	t.Parallel()
	a, url, _ := startIdentity(t)
	goodKey, key, err := auth.Keys{Store: a.Store, Now: a.Clock.Now}.CreateInstallation(t.Context(), "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	goodKeyID := key.ID
	out := clitest.MustRun(t, clitest.Env(url, goodKey), "whoami")
	head, memberships, _ := strings.Cut(out, "\n\n")
	d := detail(head)
	want := map[string]string{
		"CREDENTIAL": "key:" + goodKeyID, "USER": "-", "USER_ID": "-", "INSTALLATION_ADMIN": "true",
		"KEY_NAME": "admin", "KEY_SCOPE": "installation", "KEY_ROLE": "admin", "KEY_EXPIRES": "-",
	}
	for k, v := range want {
		if d[k] != v {
			t.Fatalf("whoami %s = %q, want %q\n%s", k, d[k], v, out)
		}
	}
	if memberships != "ORG  ROLE  ORG_ID\n" {
		t.Fatalf("memberships %q", memberships)
	}
}

// TestIdentityHelp: the help says what a credential may be.
func TestIdentityHelp(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"--help":            "session token of a wallet sign-in",
		"login --help":      "--wallet-key-file",
		"logout --help":     "ended on the server first",
		"key create --help": "will not be shown again",
		"member --help":     "paddock member [command]",
		"user --help":       "installation admin key",
	} {
		out, _, code := clitest.Run(t, nil, strings.Fields(args)...)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("paddock %s: exit %d, want %q in\n%s", args, code, want, out)
		}
	}
}

// TestWalletLoginRefusesAnotherServersChallenge: a server that relays a
// challenge another server issued (to sign in there as this wallet) gets
// no signature.
func TestWalletLoginRefusesAnotherServersChallenge(t *testing.T) {
	t.Parallel()
	f, url, _ := startIdentity(t)
	f.SignIn.Domain = "paddock.example.com"
	env := map[string]string{"HOME": t.TempDir()}
	keyFile := writeWalletKey(t, wallet1Key, 0o600)
	_, stderr, code := clitest.Run(t, env, "login", "--url", url, "--wallet-key-file", keyFile)
	if code == 0 || !strings.Contains(stderr, "refusing to sign") {
		t.Fatalf("login for a relayed challenge: exit %d, %s", code, stderr)
	}
	if f.body("POST /api/auth/session") != "" {
		t.Fatal("a signature was sent")
	}
}

// TestWalletLoginAgainEndsTheOldSession: a login that replaces a saved
// session ends it on the server instead of leaving it to expire.
func TestWalletLoginAgainEndsTheOldSession(t *testing.T) {
	t.Parallel()
	f, url, goodKey := startIdentity(t)
	admin := clitest.Env(url, goodKey)
	admin["PADDOCK_ORG"] = "acme"
	clitest.MustRun(t, admin, "member", "add", wallet1, "--role", "admin")
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	keyFile := writeWalletKey(t, wallet1Key, 0o600)
	clitest.MustRun(t, env, "login", "--url", url, "--wallet-key-file", keyFile)
	first := savedConfig(t, filepath.Join(home, ".config", "paddock", "config.json"))["session_token"]
	clitest.MustRun(t, env, "login", "--url", url, "--wallet-key-file", keyFile)
	if !ended(t, f, first) {
		t.Fatal("the first session was not ended")
	}
}

// TestSavedCredentialStaysWithItsServer: a saved key or session is sent
// only to the server it was saved for, whatever --url says.
func TestSavedCredentialStaysWithItsServer(t *testing.T) {
	t.Parallel()
	_, url, goodKey := startIdentity(t)
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	clitest.MustRun(t, env, "login", "--url", url, "--api-key", goodKey)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("the saved credential went to another server: %s %s", r.Method, r.URL)
		}
		w.WriteHeader(401)
	}))
	defer other.Close()
	_, stderr, code := clitest.Run(t, env, "--url", other.URL, "whoami")
	if code == 0 || !strings.Contains(stderr, "the saved credential is for "+url) {
		t.Fatalf("whoami at another URL: exit %d, %s", code, stderr)
	}
}
