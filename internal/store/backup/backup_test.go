package backup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/secrets"
	"github.com/paddockhq/paddock/internal/store/backup"
	"github.com/paddockhq/paddock/internal/store/backup/backuptest"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainWithPostgres(m) }

// source is a data directory holding the test installation.
func source(t *testing.T) backup.Location {
	t.Helper()
	dir := t.TempDir()
	backuptest.Installation(t, dir)
	return backup.Location{DataDir: dir}
}

// takeBackup backs l up into memory.
func takeBackup(t *testing.T, l backup.Location) ([]byte, backup.Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := backup.Backup(context.Background(), l, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), m
}

// freshDir is an empty data directory holding l's secrets key, as an
// operator restoring an installation sets it up.
func freshDir(t *testing.T, l backup.Location) string {
	t.Helper()
	dir := t.TempDir()
	key, err := os.ReadFile(filepath.Join(l.DataDir, secrets.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, secrets.KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tables reads every table of the store l names, rendered alike for both
// dialects.
func tables(t *testing.T, l backup.Location) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	if strings.HasPrefix(l.Database, "postgres") {
		conn, err := pgx.Connect(context.Background(), l.Database)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		for _, table := range backup.Tables {
			out[table] = backuptest.PostgresRows(t, conn, table)
		}
		return out
	}
	db, err := sql.Open("sqlite", filepath.Join(l.DataDir, "paddock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range backup.Tables {
		out[table] = backuptest.SQLiteRows(t, db, table)
	}
	return out
}

// sameTables fails unless every table of a and b holds the same rows.
func sameTables(t *testing.T, a, b backup.Location) {
	t.Helper()
	ta, tb := tables(t, a), tables(t, b)
	for _, table := range backup.Tables {
		if !reflect.DeepEqual(ta[table], tb[table]) {
			t.Errorf("%s differs:\n%v\n%v", table, ta[table], tb[table])
		}
	}
	if len(ta["secrets"]) != 1 || len(ta["credit_journal"]) != 2 || len(ta["sandboxes"]) != 1 {
		t.Fatalf("the installation is not the test's: %v", ta)
	}
}

// TestRestoreKeepsEveryTable restores a backup into a fresh data
// directory's SQLite, into PostgreSQL, and a backup of that PostgreSQL
// into SQLite again: every table holds the same rows each time, and the
// secret opens under the copied key.
func TestRestoreKeepsEveryTable(t *testing.T) {
	ctx := context.Background()
	src := source(t)
	file, m := takeBackup(t, src)
	if m.Dialect != "sqlite" || m.InstanceID != "backup-test" || m.Rows["credit_journal"] != 2 || m.Ledger.Balance != 5_000_000 {
		t.Fatalf("manifest %+v", m)
	}

	lite := backup.Location{DataDir: freshDir(t, src)}
	if _, err := backup.Restore(ctx, lite, bytes.NewReader(file), backup.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, src, lite)
	openSecret(t, lite)

	pg := backup.Location{DataDir: freshDir(t, src), Database: testenv.Postgres(t)}
	if _, err := backup.Restore(ctx, pg, bytes.NewReader(file), backup.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, src, pg)

	pgFile, pm := takeBackup(t, pg)
	if pm.Dialect != "postgres" || pm.SchemaVersion != m.SchemaVersion || !reflect.DeepEqual(pm.Rows, m.Rows) || pm.Ledger != m.Ledger {
		t.Fatalf("postgres manifest %+v, sqlite's %+v", pm, m)
	}
	back := backup.Location{DataDir: freshDir(t, src)}
	if _, err := backup.Restore(ctx, back, bytes.NewReader(pgFile), backup.RestoreOptions{}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, src, back)
	openSecret(t, back)
}

// openSecret opens the restored secret with l's key.
func openSecret(t *testing.T, l backup.Location) {
	t.Helper()
	keys, err := secrets.LoadKeyring(l.DataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(l.DataDir, "paddock.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.QueryRow("SELECT id FROM secrets").Scan(&id); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(l.DataDir, "paddock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sec, err := st.GetSecret(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := keys.Open(sec); err != nil || string(v) != backuptest.SecretValue {
		t.Fatalf("restored secret: %q %v", v, err)
	}
}

// TestBackupCarriesTheKeyFingerprintNotTheKey: the manifest names the key
// the secrets are sealed under; the key's bytes are nowhere in the file.
func TestBackupCarriesTheKeyFingerprintNotTheKey(t *testing.T) {
	src := source(t)
	file, m := takeBackup(t, src)
	keys, err := secrets.LoadKeyring(src.DataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.SecretsKey == "" || m.SecretsKey != keys.CurrentKeyID() {
		t.Fatalf("manifest key %q, the key file's id %q", m.SecretsKey, keys.CurrentKeyID())
	}
	text, err := os.ReadFile(filepath.Join(src.DataDir, secrets.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := secrets.ParseKey(string(text))
	if err != nil {
		t.Fatal(err)
	}
	plain := unzip(t, file)
	for _, form := range [][]byte{raw, bytes.TrimSpace(text), []byte(base64.StdEncoding.EncodeToString(raw))} {
		if bytes.Contains(plain, form) {
			t.Fatalf("the backup holds the secrets key")
		}
	}
	if !bytes.Contains(plain, []byte(`"secrets_key_fingerprint": "`+m.SecretsKey+`"`)) {
		t.Fatalf("no fingerprint in the manifest:\n%.600s", plain)
	}
}

func unzip(t *testing.T, file []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withManifest rewrites a backup's manifest.
func withManifest(t *testing.T, file []byte, edit func(m *backup.Manifest)) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(unzip(t, file)))
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		if h.Name == "manifest.json" {
			var m backup.Manifest
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatal(err)
			}
			edit(&m)
			body, _ = json.Marshal(m)
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(body)
	}
	_ = tw.Close()
	_ = zw.Close()
	return out.Bytes()
}

// underChecksum is file with a column's name changed in a table's header,
// under the gzip checksum of the original: a file damaged so that it
// inflates into well-formed but wrong content, whose checksum fails only
// at its end.
func underChecksum(t *testing.T, file []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	from, to := []byte(`{"name":"sealed"`), []byte(`{"name":"sealee"`)
	if bytes.Count(raw, from) != 1 {
		t.Fatalf("the backup holds %q %d times, want once", from, bytes.Count(raw, from))
	}
	raw = bytes.Replace(raw, from, to, 1)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := out.Bytes()
	copy(b[len(b)-8:len(b)-4], file[len(file)-8:len(file)-4]) // the original CRC-32
	return b
}

// TestRestoreRefuses: a restore refuses, with a stable code and nothing
// written, a store in use, a schema it does not match, another secrets
// key (unless forced), and a damaged or cut-short file.
func TestRestoreRefuses(t *testing.T) {
	ctx := context.Background()
	src := source(t)
	file, _ := takeBackup(t, src)
	corrupt := bytes.Clone(file)
	corrupt[len(corrupt)*3/4] ^= 0xff
	cases := []struct {
		name   string
		file   []byte
		target func(t *testing.T) backup.Location
		code   string
	}{
		{"a store in use", file, func(*testing.T) backup.Location { return src }, "store_not_empty"},
		{"a newer schema", withManifest(t, file, func(m *backup.Manifest) { m.SchemaVersion++ }), nil, "store_schema_too_new"},
		{"an older schema", withManifest(t, file, func(m *backup.Manifest) { m.SchemaVersion-- }), nil, "backup_schema_old"},
		{"another key", file, func(t *testing.T) backup.Location {
			dir := t.TempDir()
			_ = os.WriteFile(filepath.Join(dir, secrets.KeyFile), []byte(secrets.NewKey()), 0o600)
			return backup.Location{DataDir: dir}
		}, "backup_key_mismatch"},
		{"a cut-short file", file[:len(file)*9/10], nil, "backup_unreadable"},
		{"a damaged file", corrupt, nil, "backup_unreadable"},
		{"content changed under its checksum", underChecksum(t, file), nil, "backup_unreadable"},
		{"a damaged file into postgres", corrupt, func(t *testing.T) backup.Location {
			return backup.Location{DataDir: freshDir(t, src), Database: emptyPostgres(t)}
		}, "backup_unreadable"},
		{"a manifest whose counts lie", withManifest(t, file, func(m *backup.Manifest) { m.Rows["sandboxes"]++ }), nil, "backup_inconsistent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := backup.Location{DataDir: freshDir(t, src)}
			if tc.target != nil {
				target = tc.target(t)
			}
			before := snapshot(t, target)
			_, err := backup.Restore(ctx, target, bytes.NewReader(tc.file), backup.RestoreOptions{})
			var e *errdefs.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Fatalf("restore: %v, want %s", err, tc.code)
			}
			if after := snapshot(t, target); !reflect.DeepEqual(before, after) {
				t.Fatalf("the target changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// snapshot is what a restore must leave as it was: the data directory's
// files, and a PostgreSQL target's rows.
func snapshot(t *testing.T, l backup.Location) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	entries, err := os.ReadDir(l.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out["files"] = append(out["files"], e.Name())
	}
	if l.Database != "" || len(out["files"]) > 1 {
		for k, v := range tables(t, l) {
			out[k] = v
		}
	}
	return out
}

// TestRestoreWithAnotherKeyWhenForced: --force-key-mismatch restores a
// backup sealed under another key.
func TestRestoreWithAnotherKeyWhenForced(t *testing.T) {
	src := source(t)
	file, _ := takeBackup(t, src)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, secrets.KeyFile), []byte(secrets.NewKey()), 0o600); err != nil {
		t.Fatal(err)
	}
	target := backup.Location{DataDir: dir}
	if _, err := backup.Restore(context.Background(), target, bytes.NewReader(file), backup.RestoreOptions{ForceKeyMismatch: true}); err != nil {
		t.Fatal(err)
	}
	sameTables(t, src, target)
}

// emptyPostgres is a PostgreSQL store with this build's schema and no
// records.
func emptyPostgres(t *testing.T) string {
	t.Helper()
	dsn := testenv.Postgres(t)
	st, err := postgres.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	return dsn
}
