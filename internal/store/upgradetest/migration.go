package upgradetest

import (
	"fmt"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/paddockhq/paddock/internal/store/dialect"
)

// succeeding is a migration that succeeds, applied before the failing one
// in the same open.
const succeeding = `
CREATE TABLE probe_applied (id INTEGER PRIMARY KEY);
INSERT INTO probe_applied (id) VALUES (1);
UPDATE credit_accounts SET balance_micros = balance_micros + 1;
`

// failing is a migration, valid in both dialects up to its last
// statement, whose first statements succeed (a new table and rows in it,
// a new column and index on an old table, a change to old rows) and whose
// last one fails.
const failing = `
CREATE TABLE probe (id INTEGER PRIMARY KEY);
INSERT INTO probe (id) VALUES (1);
ALTER TABLE orgs ADD COLUMN probe TEXT;
UPDATE orgs SET name = name || '-changed';
CREATE INDEX orgs_probe ON orgs (probe);
INSERT INTO no_such_table (id) VALUES (1);
`

// FailingName ends the name of the migration WithFailing adds.
const FailingName = "_failing.sql"

// WithFailing returns a dialect's migrations (fsys holds migrations/*.sql)
// and, after them, one that succeeds and one that fails part-way: a
// failure must undo both, and every migration applied in the same open.
func WithFailing(t testing.TB, fsys fs.FS) fs.FS {
	t.Helper()
	ms, err := dialect.LoadMigrations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, m := range ms {
		out["migrations/"+m.Name] = &fstest.MapFile{Data: []byte(m.SQL)}
	}
	out[fmt.Sprintf("migrations/%04d_succeeding.sql", len(ms)+1)] = &fstest.MapFile{Data: []byte(succeeding)}
	out[fmt.Sprintf("migrations/%04d%s", len(ms)+2, FailingName)] = &fstest.MapFile{Data: []byte(failing)}
	return out
}

// SameSnapshots fails the test when two snapshots of a database (a name,
// such as a table's, to its rows as text) differ, naming what differs.
func SameSnapshots(t testing.TB, before, after map[string][]string) {
	t.Helper()
	for name, rows := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s appeared: %q", name, rows)
		}
	}
	for name, rows := range before {
		got, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s went", name)
		case fmt.Sprint(got) != fmt.Sprint(rows):
			t.Errorf("%s changed:\nbefore %q\nafter  %q", name, rows, got)
		}
	}
}
