package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/sqlite"
	"github.com/paddockhq/paddock/internal/store/storetest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// open opens a store on path and closes it when the test ends.
func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func tempPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "paddock.db")
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, tempPath(t)) })
}

func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := tempPath(t)
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := store.Org{ID: uuid.NewString(), Name: "acme", CreatedAt: time.Now()}
	if err := s.CreateOrg(ctx, o); err != nil {
		t.Fatal(err)
	}
	if err := s.SetMeta(ctx, "installation_id", "inst-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	applied := schemaVersions(t, path)

	s = open(t, path) // migrations are already applied: a no-op
	got, err := s.GetOrgByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != o.ID || !got.CreatedAt.Equal(o.CreatedAt.Truncate(time.Microsecond)) {
		t.Fatalf("after reopen got %+v, want %+v", got, o)
	}
	v, err := s.GetMeta(ctx, "installation_id")
	if err != nil || v != "inst-1" {
		t.Fatalf("GetMeta = %q, %v; want inst-1", v, err)
	}
	if n := schemaVersions(t, path); n != applied {
		t.Fatalf("schema_migrations has %d rows after two opens, want %d", n, applied)
	}
}

func TestFileIsPrivateAndInWALMode(t *testing.T) {
	path := tempPath(t)
	open(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("database file mode = %v, want 0600", perm)
	}
	db := rawDB(t, path)
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	ctx := t.Context()
	path := tempPath(t)
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	known := schemaVersions(t, path)

	// Stamp the database as if a newer paddock had migrated it.
	db := rawDB(t, path)
	if _, err := db.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from_the_future.sql', 0)", known+1); err != nil {
		t.Fatal(err)
	}

	s, err = sqlite.Open(ctx, path, nil)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a database with a newer schema")
	}
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Open error = %v, want kind %v", err, errdefs.ErrFailedPrecondition)
	}
	if e, ok := errdefs.Public(err); !ok || e.Code != "store_schema_too_new" {
		t.Fatalf("Open error = %#v, want code store_schema_too_new", err)
	}
	if n := schemaVersions(t, path); n != known+1 {
		t.Fatalf("schema_migrations changed by a refused open: %d rows", n)
	}
}

func TestOpenRejectsBadPaths(t *testing.T) {
	cases := []struct {
		name string
		path string
		kind error
	}{
		{"empty", "", errdefs.ErrInvalidArgument},
		{"memory", ":memory:", errdefs.ErrInvalidArgument},
		{"uri", "file:paddock.db?mode=ro", errdefs.ErrInvalidArgument},
		{"query string", filepath.Join(t.TempDir(), "x.db?_pragma=foo"), errdefs.ErrInvalidArgument},
		{"missing directory", filepath.Join(t.TempDir(), "no", "such", "dir", "x.db"), errdefs.ErrFailedPrecondition},
		{"not a database", notADatabase(t), errdefs.ErrFailedPrecondition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.Open(t.Context(), tc.path, nil)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", tc.path)
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("Open(%q) error = %v, want kind %v", tc.path, err, tc.kind)
			}
		})
	}
}

// TestConcurrentWritersNeverSeeLocked hammers one file from two stores (as
// two server processes would) with plain writes, versioned updates and
// transactions. Every call must succeed or fail with a version conflict.
func TestConcurrentWritersNeverSeeLocked(t *testing.T) {
	ctx := t.Context()
	path := tempPath(t)
	stores := []*sqlite.Store{open(t, path), open(t, path)}
	o := store.Org{ID: uuid.NewString(), Name: "acme", CreatedAt: time.Now()}
	if err := stores[0].CreateOrg(ctx, o); err != nil {
		t.Fatal(err)
	}
	shared := store.Sandbox{ID: uuid.NewString(), OrgID: o.ID, Kind: store.KindTask, State: store.SandboxRunning}
	if err := stores[0].CreateSandbox(ctx, shared); err != nil {
		t.Fatal(err)
	}

	const writers, ops = 8, 25
	var mu sync.Mutex
	var failures []error
	var wg sync.WaitGroup
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for i := range ops {
				var err error
				switch i % 4 {
				case 0: // a plain insert
					err = s.CreateSandbox(ctx, store.Sandbox{ID: uuid.NewString(), OrgID: o.ID, Kind: store.KindTask, State: store.SandboxStarting})
				case 1: // a versioned update of a contended row
					var cur store.Sandbox
					if cur, err = s.GetSandbox(ctx, shared.ID); err == nil {
						_, err = s.RecordSandboxProvider(ctx, cur.ID, cur.Version, uuid.NewString(), nil, time.Now())
					}
				case 2: // a read-modify-write transaction
					err = s.InTx(ctx, func(q store.Queries) error {
						return increment(ctx, q, "counter")
					})
				case 3: // a read
					_, _, err = s.ListSandboxes(ctx, store.SandboxFilter{OrgID: o.ID}, store.Page{Limit: 5})
				}
				if err != nil && !errors.Is(err, errdefs.ErrConflict) {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range failures {
		t.Errorf("writer failed: %v", err)
	}
	// Transactions serialize: no increment was lost, across both stores.
	got, err := stores[1].GetMeta(ctx, "counter")
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(writers * ((ops + 1) / 4)); got != want {
		t.Fatalf("counter = %s, want %s", got, want)
	}
}

// TestTransactionsSerialize checks that InTx isolates read-modify-write
// cycles completely: concurrent increments through one store lose nothing.
func TestTransactionsSerialize(t *testing.T) {
	ctx := t.Context()
	s := open(t, tempPath(t))
	const n, each = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, n*each)
	for range n {
		wg.Go(func() {
			for range each {
				if err := s.InTx(ctx, func(q store.Queries) error { return increment(ctx, q, "c") }); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("InTx: %v", err)
	}
	got, err := s.GetMeta(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if got != strconv.Itoa(n*each) {
		t.Fatalf("counter = %s, want %d", got, n*each)
	}
}

func TestCanceledContext(t *testing.T) {
	s := open(t, tempPath(t))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.InTx(ctx, func(q store.Queries) error { return q.SetMeta(ctx, "k", "v") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("InTx on a canceled context = %v, want context.Canceled", err)
	}
	_, err = s.GetOrg(ctx, "x")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("GetOrg on a canceled context = %v, want context.Canceled", err)
	}
	if _, err := s.GetMeta(t.Context(), "k"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("GetMeta after a canceled write = %v, want not found", err)
	}
}

// increment adds one to the integer meta value key (missing is 0).
func increment(ctx context.Context, q store.Queries, key string) error {
	v, err := q.GetMeta(ctx, key)
	n := 0
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
	case err != nil:
		return err
	default:
		if n, err = strconv.Atoi(v); err != nil {
			return err
		}
	}
	return q.SetMeta(ctx, key, strconv.Itoa(n+1))
}

// rawDB opens path directly, bypassing the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// schemaVersions counts the rows of schema_migrations.
func schemaVersions(t *testing.T, path string) int {
	t.Helper()
	var n int
	if err := rawDB(t, path).QueryRow("SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// notADatabase writes a file that is not SQLite.
func notADatabase(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "junk.db")
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i)
	}
	copy(junk, fmt.Appendf(nil, "this is not a database"))
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
