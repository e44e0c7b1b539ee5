package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/provider"
	"github.com/paddockhq/paddock/internal/providers/fake"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/pkg/client"
)

// TestSecretCommands runs the secret commands against the real API: the
// value comes from standard input, an environment variable or a file,
// never the command line, and never comes back.
func TestSecretCommands(t *testing.T) {
	t.Parallel()
	srv, env := cliOnServer(t, servertest.Options{})
	const value = "sk-cli-secret-value"

	out, errOut, code := clitest.RunInput(t, env, value+"\n", "secret", "create", "openai", "--env", "OPENAI_API_KEY", "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("create from stdin: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, value) {
		t.Fatalf("create printed the value: %s", out)
	}
	env["GH"] = "ghp-from-env"
	clitest.MustRun(t, env, "secret", "create", "github", "--from-env", "GH", "--org-wide")
	file := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(file, []byte("sk-ant\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.MustRun(t, env, "secret", "create", "anthropic", "--value-file", file, "--brokered", "--host", "api.anthropic.com")

	ws := clitest.Table(clitest.MustRun(t, env, "secret", "ls"))
	if len(ws) != 3 || ws[1][0] != "openai" || ws[1][1] != "OPENAI_API_KEY" || ws[2][0] != "anthropic" || ws[2][3] != "api.anthropic.com" {
		t.Fatalf("workspace secrets:\n%v", ws)
	}
	org := clitest.JSON[client.List[client.Secret]](t, env, "secret", "ls", "--org-wide", "-o", "json")
	if len(org.Items) != 1 || org.Items[0].Name != "github" || org.Items[0].Env != "GITHUB" {
		t.Fatalf("org secrets: %+v", org.Items)
	}

	// The values reached the server as given (one trailing line break
	// dropped): the agent would get them.
	for name, want := range map[string]string{"openai": value, "github": "ghp-from-env"} {
		args := []string{"secret", "get", name, "-o", "json"}
		if name == "github" {
			args = append(args, "--org-wide")
		}
		s := clitest.JSON[client.Secret](t, env, args...)
		got, err := srv.Secrets.Env(t.Context(), store.Sandbox{ID: "check", OrgID: s.OrgID, SecretIDs: []string{s.ID}})
		if err != nil || got[s.Env] != want {
			t.Fatalf("%s: %q %v, want %q", name, got[s.Env], err, want)
		}
	}

	if _, errOut, code := clitest.RunInput(t, env, "", "secret", "create", "empty"); code != cli.ExitUsage || !strings.Contains(errOut, "empty") {
		t.Fatalf("an empty value: exit %d %q", code, errOut)
	}
	if _, errOut, code := clitest.Run(t, env, "secret", "set", "openai"); code != cli.ExitUsage || !strings.Contains(errOut, "nothing to change") {
		t.Fatalf("set without a change: exit %d %q", code, errOut)
	}
	s := clitest.JSON[client.Secret](t, env, "secret", "set", "openai", "--env", "OPENAI_KEY", "-o", "json")
	if s.Env != "OPENAI_KEY" || s.Version != 2 {
		t.Fatalf("set: %+v", s)
	}
	// Bound to a runtime, and refused by name when unknown.
	clitest.MustRun(t, env, "project", "create", "agent")
	clitest.MustRun(t, env, "runtime", "set", "agent", "--secret", "openai", "--secret", "github")
	if _, errOut, code := clitest.Run(t, env, "runtime", "start", "agent", "--secret", "nope"); code != cli.ExitError || !strings.HasSuffix(errOut, "(secret_not_found)\n") {
		t.Fatalf("start with an unknown secret: exit %d %q", code, errOut)
	}
	rt := clitest.JSON[client.Runtime](t, env, "runtime", "start", "agent", "-o", "json")
	sb := clitest.JSON[client.Sandbox](t, env, "sandbox", "get", rt.CurrentSandboxID, "-o", "json")
	if len(sb.SecretIDs) != 2 {
		t.Fatalf("sandbox secrets: %v", sb.SecretIDs)
	}

	if out := clitest.MustRun(t, env, "secret", "rm", "openai"); !strings.Contains(out, "deleted secret openai") {
		t.Fatalf("rm: %q", out)
	}
	if _, errOut, code := clitest.Run(t, env, "secret", "get", "openai"); code != cli.ExitError || !strings.HasSuffix(errOut, "(secret_not_found)\n") {
		t.Fatalf("get after rm: exit %d %q", code, errOut)
	}
}

// TestRuntimeSetRules: --allow and --deny each replace one list, and
// --allow ” empties it.
func TestRuntimeSetRules(t *testing.T) {
	t.Parallel()
	_, env := cliOnServer(t, servertest.Options{Provider: fake.New(fake.Config{Networks: []provider.NetworkPolicy{provider.NetworkNone, provider.NetworkProxy}})})
	clitest.MustRun(t, env, "project", "create", "agent", "--network", "proxy", "--allow", "pypi.org")
	clitest.MustRun(t, env, "runtime", "set", "agent", "--deny", "evil.example")
	rt := clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent", "-o", "json")
	if n := rt.Config.Network; n.Mode != "proxy" || strings.Join(n.Allow, ",") != "pypi.org" || strings.Join(n.Deny, ",") != "evil.example" {
		t.Fatalf("after --deny: %+v", n)
	}
	clitest.MustRun(t, env, "runtime", "set", "agent", "--allow", "")
	rt = clitest.JSON[client.Runtime](t, env, "runtime", "get", "agent", "-o", "json")
	if n := rt.Config.Network; len(n.Allow) != 0 || strings.Join(n.Deny, ",") != "evil.example" {
		t.Fatalf("after --allow '': %+v", n)
	}
}
