package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/postgres"
)

// TestUnreachableDatabaseIsUnavailable: while the database refuses
// connections (its connections ended, new ones not allowed), a store call
// fails as unavailable (503 store_unavailable), never as an internal
// error; once it allows them again the same store works.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	ctx := context.Background()
	dsn := testDSN(t)
	st, err := postgres.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec("ALTER DATABASE " + db + " ALLOW_CONNECTIONS false")
	exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db + "' AND pid <> pg_backend_pid()")
	for range 3 { // a pooled connection found dead, then new ones refused
		_, err = st.GetOrg(ctx, "00000000-0000-4000-8000-000000000001")
		if !errors.Is(err, errdefs.ErrUnavailable) {
			t.Fatalf("with the database out of reach: %v, want unavailable", err)
		}
	}
	if pe, ok := errdefs.Public(err); !ok || pe.Code != "store_unavailable" {
		t.Fatalf("public error %+v, want store_unavailable", pe)
	}
	exec("ALTER DATABASE " + db + " ALLOW_CONNECTIONS true")
	if _, err := st.GetOrg(ctx, "00000000-0000-4000-8000-000000000001"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("with the database back: %v, want not found", err)
	}
}
