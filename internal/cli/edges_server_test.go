package cli_test

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestLoginDropsDefaultsTheCredentialCannotSee: logging in with a key of
// another org drops the old default org (and workspace) instead of keeping
// one the next command would fail on, and takes the new key's only org;
// naming another org drops the old org's workspace.
func TestLoginDropsDefaultsTheCredentialCannotSee(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "org", "create", "other")
	clitest.MustRun(t, env, "member", "add", "ann@example.com", "--role", "admin", "--org", "other")
	ann := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--org", "other", "--member", "ann@example.com", "--name", "ann")

	home := t.TempDir()
	path := filepath.Join(home, ".config", "paddock", "config.json")
	base := map[string]string{"HOME": home}
	clitest.MustRun(t, base, "login", "--url", srv.URL, "--api-key", srv.Key, "--org", "acme", "--ws", "dev")

	out := clitest.MustRun(t, base, "login", "--url", srv.URL, "--api-key", ann.Key)
	if !strings.Contains(out, "Dropped the default org acme: this credential cannot see it") || !strings.Contains(out, "Default org: other") {
		t.Fatalf("login with ann's key:\n%s", out)
	}
	if got := savedConfig(t, path); got["org"] != "other" || got["workspace"] != "" {
		t.Fatalf("config after ann's login: %v", got)
	}
	if rows := table(clitest.MustRun(t, base, "ws", "ls")); len(rows) != 1 {
		t.Fatalf("ws ls in org other: %v", rows)
	}

	// A credential that still sees them keeps the defaults.
	clitest.MustRun(t, base, "login", "--api-key", srv.Key, "--org", "acme", "--ws", "dev")
	out = clitest.MustRun(t, base, "login", "--api-key", srv.Key)
	if strings.Contains(out, "Dropped") || !strings.Contains(out, "Default workspace: dev") {
		t.Fatalf("login again with the admin key:\n%s", out)
	}
	// Another org named: the old org's workspace is not kept with it.
	out = clitest.MustRun(t, base, "login", "--api-key", srv.Key, "--org", "other")
	if got := savedConfig(t, path); got["org"] != "other" || got["workspace"] != "" || strings.Contains(out, "Default workspace") {
		t.Fatalf("login naming org other kept acme's workspace: %v\n%s", got, out)
	}
}

// TestKeyRevokeByPrefix: key revoke takes the prefix key ls shows, as well
// as the id; a prefix no live key has is refused by name.
func TestKeyRevokeByPrefix(t *testing.T) {
	t.Parallel()
	_, env := cliOnServer(t, servertest.Options{})
	clitest.MustRun(t, env, "member", "add", "bob@example.com")
	k := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", "bob@example.com", "--name", "ci")
	rows := table(clitest.MustRun(t, env, "key", "ls"))
	var prefix string
	for _, r := range rows[1:] {
		if r[0] == k.ID {
			prefix = r[2]
		}
	}
	if prefix == "" || !strings.HasPrefix(k.Key, prefix) {
		t.Fatalf("key ls shows no prefix of %s:\n%v", k.ID, rows)
	}
	if out := clitest.MustRun(t, env, "key", "revoke", prefix); out != "revoked key "+k.ID+"\n" {
		t.Fatalf("revoke by prefix: %q", out)
	}
	if _, errOut, code := clitest.Run(t, clitest.Env(env["PADDOCK_URL"], k.Key), "whoami"); code != cli.ExitError || !strings.Contains(errOut, "401") && !strings.Contains(errOut, "(invalid_api_key)") && !strings.Contains(errOut, "revoked") {
		t.Fatalf("the revoked key: exit %d, stderr %q", code, errOut)
	}
	mustFail(t, env, cli.ExitError, []string{"no key with prefix " + prefix + " that is not revoked"}, "key", "revoke", prefix)

	// A whole key is taken by its prefix, and never printed back.
	k2 := clitest.JSON[client.CreatedKey](t, env, "key", "create", "--member", "bob@example.com", "--name", "ci2")
	if out := clitest.MustRun(t, env, "key", "revoke", k2.Key); out != "revoked key "+k2.ID+"\n" {
		t.Fatalf("revoke by the whole key: %q", out)
	}
	errOut := mustFail(t, env, cli.ExitError, []string{"no key with prefix " + k2.Key[:10] + " that"}, "key", "revoke", k2.Key)
	if strings.Contains(errOut, k2.Key[10:]) {
		t.Fatalf("the error prints the whole key: %q", errOut)
	}
}

// TestCLIErrorsInTheUsersTerms: rules on a runtime whose network is none
// or open are refused (not kept unused), --cpu is answered in cores, and a runtime the
// user named by its project is named so in errors.
func TestCLIErrorsInTheUsersTerms(t *testing.T) {
	t.Parallel()
	_, env := cliOnServer(t, servertest.Options{})
	mustFail(t, env, cli.ExitError, []string{"apply only in proxy mode", "(network_rules_need_proxy)"}, "project", "create", "quiet", "--allow", "pypi.org")
	mustFail(t, env, cli.ExitError, []string{"network is open", "(network_rules_need_proxy)"}, "project", "create", "wide", "--network", "open", "--allow", "pypi.org")
	p := clitest.JSON[client.Project](t, env, "project", "create", "quiet")
	mustFail(t, env, cli.ExitError, []string{"(network_rules_need_proxy)"}, "runtime", "set", "quiet", "--allow", "pypi.org")
	if rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "quiet"); len(rt.Config.Network.Allow) != 0 {
		t.Fatalf("the refused rule was kept: %+v", rt.Config.Network)
	}

	errOut := mustFail(t, env, cli.ExitError, []string{"64 cores", "(invalid_resources)"}, "project", "create", "big", "--cpu", "64")
	if strings.Contains(errOut, "cpu_millis 64000 ") {
		t.Fatalf("--cpu 64 answered in millis: %q", errOut)
	}

	clitest.MustRun(t, env, "runtime", "start", "quiet")
	errOut = mustFail(t, env, cli.ExitError, []string{"runtime quiet is already running", "(runtime_already_running)"}, "runtime", "start", "quiet")
	if strings.Contains(errOut, p.RuntimeID) {
		t.Fatalf("the error names the runtime's id, not the project the user typed: %q", errOut)
	}
}

// writeCounter counts the writes made to it.
type writeCounter struct {
	writes int
	bytes.Buffer
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestTablesAreWrittenAtOnce: a table reaches stdout in one write, so a
// reader that stops at its first match (grep -q) does not kill paddock
// with SIGPIPE halfway through it.
func TestTablesAreWrittenAtOnce(t *testing.T) {
	t.Parallel()
	_, env := cliOnServer(t, servertest.Options{})
	for _, name := range []string{"a", "b", "c"} {
		clitest.MustRun(t, env, "project", "create", name)
	}
	for _, args := range [][]string{{"project", "ls"}, {"runtime", "get", "b"}} {
		var out writeCounter
		code := cli.Run(t.Context(), cli.Env{
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		}, args)
		if code != cli.ExitOK || out.writes != 1 || !strings.Contains(out.String(), "b") {
			t.Fatalf("paddock %v: exit %d, %d writes:\n%s", args, code, out.writes, out.String())
		}
	}
}
