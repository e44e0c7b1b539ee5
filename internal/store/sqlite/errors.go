package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store/dialect"
)

// resource names the record a statement touched (see package dialect).
type resource = dialect.Resource

const (
	resMeta        = dialect.Meta
	resOrg         = dialect.Org
	resWorkspace   = dialect.Workspace
	resProject     = dialect.Project
	resRuntime     = dialect.Runtime
	resSandbox     = dialect.Sandbox
	resAPIKey      = dialect.APIKey
	resWarm        = dialect.Warm
	resSecret      = dialect.Secret
	resCapVer      = dialect.CapVer
	resBinding     = dialect.Binding
	resSession     = dialect.Session
	resUser        = dialect.User
	resOrgMember   = dialect.OrgMember
	resChallenge   = dialect.Challenge
	resAuthSession = dialect.AuthSession
)

func notFound(res resource, cause error) error { return dialect.NotFound(res, cause) }

func versionConflict(res resource, id string, version int64) error {
	return dialect.VersionConflict(res, id, version)
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
			return dialect.Exists(res, err)
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return dialect.ReferenceMissing(res, err)
		case sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT_CHECK:
			return dialect.Invalid(res, err)
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
