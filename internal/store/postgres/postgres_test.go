package postgres_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/postgres"
	"github.com/paddockhq/paddock/internal/store/storetest"
)

// testDSN returns a DSN of a fresh, empty database for one test.
//
// TODO(lead): replaced by testenv.Postgres when it lands; until then it
// needs PADDOCK_TEST_POSTGRES, the DSN of a cluster's postgres database.
func testDSN(t *testing.T) string {
	t.Helper()
	admin := os.Getenv("PADDOCK_TEST_POSTGRES")
	if admin == "" {
		t.Skip("PADDOCK_TEST_POSTGRES is not set")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := "t_" + uuid.NewString()[:8]
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
	})
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
}

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
