package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// resource names the record a statement touched, for public messages and
// codes ("org" → "org_not_found").
type resource string

const (
	resMeta        resource = "meta"
	resOrg         resource = "org"
	resWorkspace   resource = "workspace"
	resProject     resource = "project"
	resRuntime     resource = "runtime"
	resSandbox     resource = "sandbox"
	resAPIKey      resource = "api_key"
	resWarm        resource = "warm_sandbox"
	resSecret      resource = "secret"
	resCapVer      resource = "capability"
	resBinding     resource = "binding"
	resSession     resource = "session"
	resUser        resource = "user"
	resOrgMember   resource = "org_member"
	resChallenge   resource = "auth_challenge"
	resAuthSession resource = "auth_session"
)

// notFound is the error for a missing record.
func notFound(res resource, cause error) error {
	e := errdefs.NotFound(string(res)+"_not_found", "%s not found", res)
	if cause != nil {
		return e.WithCause(cause)
	}
	return e
}

// versionConflict is the error for a failed optimistic version check.
func versionConflict(res resource, id string, version int64) error {
	return errdefs.Conflict(string(res)+"_version_conflict",
		"%s %s was changed concurrently (version %d is stale); read it again and retry", res, id, version).WithCause(store.ErrStale)
}

// classify maps an error from a statement on res to an errdefs kind.
// Context errors stay matchable with errors.Is; any other driver error is
// wrapped as an internal error whose cause is kept for logs.
func classify(op string, res resource, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return notFound(res, nil)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlite store: %s: %w", op, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return errdefs.Conflict(string(res)+"_exists", "a %s with this id or name already exists", res).WithCause(err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return errdefs.FailedPrecondition(string(res)+"_reference_missing",
				"the %s refers to a record that does not exist", res).WithCause(err)
		case sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT_CHECK:
			return errdefs.InvalidArgument("invalid_"+string(res), "the %s is missing a required field or has an invalid one", res).WithCause(err)
		}
		switch se.Code() & 0xff { // primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return errdefs.Unavailable("store_busy", "the database is busy; retry").WithCause(err)
		case sqlite3.SQLITE_FULL:
			return errdefs.ResourceExhausted("store_full", "the database disk is full").WithCause(err)
		case sqlite3.SQLITE_READONLY:
			return errdefs.FailedPrecondition("store_read_only", "the database is read-only").WithCause(err)
		}
	}
	return fmt.Errorf("sqlite store: %s: %w", op, err)
}

// wrap classifies an error that concerns no particular record.
func wrap(op string, err error) error { return classify(op, "record", err) }
