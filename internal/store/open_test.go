package store

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// errOpened carries what an opener was given out of Open.
type errOpened struct{ scheme, rest string }

func (e *errOpened) Error() string { return e.scheme + " opened with " + e.rest }

// registerForTest registers an opener under scheme that reports what it
// was given, for the length of t. The package's own tests never link a
// real implementation (they import this package), so any scheme is free.
func registerForTest(t *testing.T, scheme string) {
	t.Helper()
	Register(scheme, func(_ context.Context, rest string, _ *slog.Logger) (Store, error) {
		return nil, &errOpened{scheme, rest}
	})
	t.Cleanup(func() {
		driversMu.Lock()
		defer driversMu.Unlock()
		delete(drivers, scheme)
	})
}

// TestOpenHandsOpenersTheirPart: a path-like store gets what follows
// "<scheme>:" (and "//"); a URL store (postgres) gets the whole DSN, with
// "postgresql" reaching the postgres opener; bad DSNs are clear errors.
func TestOpenHandsOpenersTheirPart(t *testing.T) {
	registerForTest(t, "sqlite")
	registerForTest(t, "postgres")
	for _, tc := range []struct {
		dsn, scheme, rest string
	}{
		{"sqlite:/var/lib/paddock/paddock.db", "sqlite", "/var/lib/paddock/paddock.db"},
		{"sqlite:///var/lib/paddock/paddock.db", "sqlite", "/var/lib/paddock/paddock.db"},
		{"./data/paddock.db", "sqlite", "./data/paddock.db"},
		{"postgres://paddock@127.0.0.1:5432/paddock?sslmode=disable", "postgres", "postgres://paddock@127.0.0.1:5432/paddock?sslmode=disable"},
		{"postgresql://paddock:secret@db.internal/paddock", "postgres", "postgresql://paddock:secret@db.internal/paddock"},
		{"postgres:///paddock?host=/run/postgresql", "postgres", "postgres:///paddock?host=/run/postgresql"},
	} {
		_, err := Open(t.Context(), tc.dsn, slog.New(slog.DiscardHandler))
		var got *errOpened
		if !errors.As(err, &got) {
			t.Errorf("Open(%q) = %v; want it to reach the %s opener", tc.dsn, err, tc.scheme)
			continue
		}
		if got.scheme != tc.scheme || got.rest != tc.rest {
			t.Errorf("Open(%q) gave the %s opener %q; want the %s opener given %q", tc.dsn, got.scheme, got.rest, tc.scheme, tc.rest)
		}
	}
	for dsn, code := range map[string]string{
		"postgres:":      "invalid_store_dsn",
		"postgres://":    "invalid_store_dsn",
		"mysql://x@y/z":  "unknown_store",
		"redis:whatever": "unknown_store",
	} {
		_, err := Open(t.Context(), dsn, slog.New(slog.DiscardHandler))
		if e, ok := errdefs.Public(err); !ok || !errors.Is(err, errdefs.ErrInvalidArgument) || e.Code != code {
			t.Errorf("Open(%q) = %v; want invalid argument %s", dsn, err, code)
		}
	}
}

// TestOpenPrefersOpenerUnderOwnName: a store registered as "postgresql"
// itself gets those DSNs, whole.
func TestOpenPrefersOpenerUnderOwnName(t *testing.T) {
	registerForTest(t, "postgres")
	registerForTest(t, "postgresql")
	_, err := Open(t.Context(), "postgresql://h/db", slog.New(slog.DiscardHandler))
	var got *errOpened
	if !errors.As(err, &got) || got.scheme != "postgresql" || got.rest != "postgresql://h/db" {
		t.Errorf("Open(postgresql://h/db) = %v; want the postgresql opener given the whole DSN", err)
	}
}
