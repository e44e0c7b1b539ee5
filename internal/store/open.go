package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// Opener opens a store from the part of a DSN after its scheme, or from
// the whole DSN for a URL scheme (see urlSchemes).
type Opener func(ctx context.Context, rest string, logger *slog.Logger) (Store, error)

// urlSchemes are the schemes whose DSN is a URL its driver reads whole
// (postgres://user@host:port/db?sslmode=disable): their opener gets the
// DSN unchanged. Each names the scheme whose opener serves it when none
// is registered under its own name: libpq's two spellings are one store.
var urlSchemes = map[string]string{"postgres": "postgres", "postgresql": "postgres"}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Opener{}
)

// Register makes a store implementation available to Open under scheme
// ("sqlite", later "postgres"). Implementations register themselves in
// init, as database/sql drivers do; a binary links the ones it offers.
func Register(scheme string, open Opener) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, ok := drivers[scheme]; ok {
		panic(fmt.Sprintf("store scheme %q registered twice", scheme))
	}
	drivers[scheme] = open
}

// Open opens the store a DSN names: "<scheme>:<rest>", for example
// "sqlite:/var/lib/paddock/paddock.db", or a URL such as
// "postgres://paddock@db:5432/paddock". A DSN without a scheme is a SQLite
// file path. Callers never name an implementation, so another store follows
// without touching them.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (Store, error) {
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok || strings.ContainsAny(scheme, "/.") {
		scheme, rest = "sqlite", dsn
	}
	rest = strings.TrimPrefix(rest, "//")
	canonical, isURL := urlSchemes[scheme]
	if isURL && rest != "" {
		rest = dsn
	}
	driversMu.RLock()
	open, found := drivers[scheme]
	if !found && isURL {
		open, found = drivers[canonical]
	}
	var known []string
	for k := range drivers {
		known = append(known, k)
	}
	driversMu.RUnlock()
	if !found {
		slices.Sort(known)
		return nil, errdefs.InvalidArgument("unknown_store", "store %q is not offered by this build (it offers %s)", scheme, strings.Join(known, ", "))
	}
	if rest == "" {
		return nil, errdefs.InvalidArgument("invalid_store_dsn", "the %s store needs a location after %q", scheme, scheme+":")
	}
	return open(ctx, rest, logger)
}
