package postgres_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paddockhq/paddock/internal/testenv"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/storetest"
)

func TestMain(m *testing.M) { testenv.MainWithPostgres(m) }

// testDSN returns a DSN of a fresh, empty database for one test.
func testDSN(t *testing.T) string { return testenv.Postgres(t) }

func openTest(t *testing.T) store.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), testDSN(t), nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, openTest)
}

// TestMigrationsMatchSQLite holds the two dialects to one list of
// migrations: the same versions under the same names.
func TestMigrationsMatchSQLite(t *testing.T) {
	names := func(dir string) []string {
		m, err := filepath.Glob(filepath.Join(dir, "*.sql"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		slices.Sort(m)
		return m
	}
	pg, lite := names("migrations"), names("../sqlite/migrations")
	if !slices.Equal(pg, lite) {
		t.Fatalf("postgres migrations %v\n   sqlite migrations %v\nwant the same list", pg, lite)
	}
}

func TestOpenTwiceMigratesOnce(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := postgres.Open(ctx, dsn, nil)
			if err == nil {
				err = s.Check(ctx)
				_ = s.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
