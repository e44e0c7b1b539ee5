package cli_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/cli"
	"github.com/paddockhq/paddock/internal/cli/clitest"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/backup/backuptest"
	"github.com/paddockhq/paddock/internal/store/sqlite"
)

// TestAdminBackupAndRestore: a backup of a data directory restores into a
// fresh one holding the same key; a second restore into it is refused.
func TestAdminBackupAndRestore(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	backuptest.Installation(t, src)
	file := filepath.Join(t.TempDir(), "paddock.backup")
	_, errOut, code := clitest.Run(t, map[string]string{}, "admin", "backup", "--data-dir", src, "-o", file)
	if code != 0 || !strings.Contains(errOut, "sqlite store, schema version") {
		t.Fatalf("backup: exit %d, stderr %q", code, errOut)
	}
	dst := t.TempDir()
	key, err := os.ReadFile(filepath.Join(src, secrets.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, secrets.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := clitest.Run(t, map[string]string{}, "admin", "restore", "--data-dir", dst, file)
	if code != 0 || !strings.Contains(out, "restored") {
		t.Fatalf("restore: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dst, "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orgs, _, err := st.ListOrgs(context.Background(), store.Page{Limit: 10})
	if err != nil || len(orgs) != 1 || orgs[0].Name != "acme" {
		t.Fatalf("restored orgs %+v %v", orgs, err)
	}
	_, errOut, code = clitest.Run(t, map[string]string{}, "admin", "restore", "--data-dir", dst, file)
	if code != cli.ExitError || !strings.Contains(errOut, "store_not_empty") {
		t.Fatalf("second restore: exit %d, stderr %q", code, errOut)
	}
	// A data directory that does not exist yet is made, as the server
	// makes it.
	fresh := filepath.Join(t.TempDir(), "new", "data")
	_, errOut, code = clitest.Run(t, map[string]string{}, "admin", "restore", "--data-dir", fresh, file)
	if code != 0 || !strings.Contains(errOut, "has no secrets key yet") {
		t.Fatalf("restore into a new data directory without the key: exit %d, stderr %q", code, errOut)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("new data directory: %v %v, want mode 0700", fi, err)
	}
}

func TestAdminBackupUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--data-dir", dir}, "-o <file> is required"},
		{[]string{"backup", "--database", "mysql://db/x", "-o", "x"}, "--database must be sqlite:<path>, a path or a postgres:// DSN"},
		{[]string{"restore", "--data-dir", dir}, "accepts 1 arg(s)"},
		{[]string{"restore", "--data-dir", dir, filepath.Join(dir, "none")}, "cannot read the backup file"},
	} {
		_, errOut, code := clitest.Run(t, map[string]string{}, append([]string{"admin"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want usage error %q", tc.args, code, errOut, tc.want)
		}
	}
}
