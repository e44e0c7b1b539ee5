package cli_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestServerCommandsHelp: serve and admin list their own flags, not the
// client's.
func TestServerCommandsHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "--help"}, {"admin", "create-key", "--help"}} {
		out, _, code := clitest.Run(t, map[string]string{}, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, client := range []string{"--api-key", "--url", "--output"} {
			if strings.Contains(out, client) {
				t.Errorf("%v lists the client flag %s:\n%s", args, client, out)
			}
		}
	}
	out, _, _ := clitest.Run(t, map[string]string{}, "serve", "--help")
	if !strings.Contains(out, "--data-dir") || !strings.Contains(out, "--disk-mb") {
		t.Fatalf("serve --help lacks its own flags:\n%s", out)
	}
}

// TestAdminCreateKey: the command makes a key in an existing database,
// without a server, and refuses a data directory that has none.
func TestAdminCreateKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := clitest.Run(t, map[string]string{}, "admin", "create-key", "--data-dir", dir)
	if code != 0 || !regexp.MustCompile(`pdk_[A-Za-z0-9_]+`).MatchString(out) {
		t.Fatalf("admin create-key: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, errOut, code = clitest.Run(t, map[string]string{"PADDOCK_DATA_DIR": t.TempDir()}, "admin", "create-key")
	if code == 0 || !strings.Contains(errOut, "no paddock database") {
		t.Fatalf("admin create-key on an empty data dir: exit %d, stderr %q", code, errOut)
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string]string{"bash": "__start_paddock", "zsh": "#compdef paddock", "fish": "complete -c paddock"} {
		out, errOut, code := clitest.Run(t, map[string]string{}, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, stderr %q, no %q in the script", shell, code, errOut, want)
		}
	}
	if _, _, code := clitest.Run(t, map[string]string{}, "completion", "tcsh"); code != cli.ExitUsage {
		t.Errorf("completion tcsh: exit %d", code)
	}
}

// TestAdminRotateSecretsKey: the command seals every secret again under a
// new key file, and the values still open.
func TestAdminRotateSecretsKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "paddock.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := secrets.LoadKeyring(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateOrg(ctx, store.Org{ID: "00000000-0000-0000-0000-00000000000a", Name: "acme"}); err != nil {
		t.Fatal(err)
	}
	v := "sk-rotate-me"
	sec, err := secrets.New(st, keys, nil).Create(ctx, "00000000-0000-0000-0000-00000000000a", "", secrets.Spec{Name: "a", Value: &v})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := clitest.Run(t, map[string]string{}, "admin", "rotate-secrets-key", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "1 secrets sealed again under key") {
		t.Fatalf("rotate: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	after, err := st.GetSecret(ctx, sec.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := secrets.LoadKeyring(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if after.KeyID == sec.KeyID || after.KeyID != fresh.CurrentKeyID() {
		t.Fatalf("key %s → %s, the key file's is %s", sec.KeyID, after.KeyID, fresh.CurrentKeyID())
	}
	if got, err := fresh.Open(after); err != nil || string(got) != v {
		t.Fatalf("after rotation: %q %v", got, err)
	}
}

func TestAdminMigrateStoreRefusesOtherStores(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--from", "postgres://a/b", "--to", "postgres://c/d"}, "--from must be a SQLite store"},
		{[]string{"--from", "./data/paddock.db", "--to", "sqlite:/x.db"}, "--to must be a postgres:// DSN"},
		{[]string{"--to", "postgres://c/d"}, `required flag(s) "from" not set`},
	} {
		_, errOut, code := clitest.Run(t, map[string]string{}, append([]string{"admin", "migrate-store"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want usage error %q", tc.args, code, errOut, tc.want)
		}
	}
}
