// Package dialect holds what every SQL dialect of the store shares and
// what must read the same whichever database answers: the public errors a
// store returns, the checks it makes of its input, and the cursors of its
// listings. A dialect package keeps only its SQL, its driver's error codes
// and its column encodings.
package dialect

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Resource names the record a statement touched, for public messages and
// codes ("org" → "org_not_found").
type Resource string

// The records of the store.
const (
	Meta        Resource = "meta"
	Org         Resource = "org"
	Workspace   Resource = "workspace"
	Project     Resource = "project"
	Runtime     Resource = "runtime"
	Sandbox     Resource = "sandbox"
	APIKey      Resource = "api_key"
	Warm        Resource = "warm_sandbox"
	Secret      Resource = "secret"
	CapVer      Resource = "capability"
	Binding     Resource = "binding"
	Session     Resource = "session"
	User        Resource = "user"
	OrgMember   Resource = "org_member"
	Challenge   Resource = "auth_challenge"
	AuthSession Resource = "auth_session"
)

// NotFound is the error for a missing record.
func NotFound(res Resource, cause error) error {
	e := errdefs.NotFound(string(res)+"_not_found", "%s not found", res)
	if cause != nil {
		return e.WithCause(cause)
	}
	return e
}

// VersionConflict is the error for a failed optimistic version check.
func VersionConflict(res Resource, id string, version int64) error {
	return errdefs.Conflict(string(res)+"_version_conflict",
		"%s %s was changed concurrently (version %d is stale); read it again and retry", res, id, version).WithCause(store.ErrStale)
}

// Exists is the error for a uniqueness violation.
func Exists(res Resource, cause error) error {
	return errdefs.Conflict(string(res)+"_exists", "a %s with this id or name already exists", res).WithCause(cause)
}

// ReferenceMissing is the error for a reference to a missing parent, or a
// delete of a record others still reference.
func ReferenceMissing(res Resource, cause error) error {
	return errdefs.FailedPrecondition(string(res)+"_reference_missing",
		"the %s refers to a record that does not exist", res).WithCause(cause)
}

// Invalid is the error for a row the database's own checks refused.
func Invalid(res Resource, cause error) error {
	return errdefs.InvalidArgument("invalid_"+string(res), "the %s is missing a required field or has an invalid one", res).WithCause(cause)
}

// Required returns an invalid-argument error naming the first empty field.
// nameValues alternates field names and values.
func Required(res Resource, nameValues ...string) error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] == "" {
			return errdefs.InvalidArgument("invalid_"+string(res), "%s %s is required", res, nameValues[i])
		}
	}
	return nil
}

// EncodeStrings keeps nil apart from empty: nil is no document (NULL) and
// anything else, empty included, a JSON array.
func EncodeStrings(ss []string) (*string, error) {
	if ss == nil {
		return nil, nil
	}
	b, err := json.Marshal(ss)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// DecodeStrings reads what EncodeStrings wrote.
func DecodeStrings(v *string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	ss := []string{}
	if err := json.Unmarshal([]byte(*v), &ss); err != nil {
		return nil, err
	}
	return ss, nil
}

// Listings use keyset pagination on (created_at, id).

// Cursor is a listing position: the created_at and id of the last row of
// the previous page. On the wire it is base64url("micros:id"), the same in
// every dialect.
type Cursor struct {
	At time.Time
	ID string
}

func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At.UnixMicro(), 10) + ":" + c.ID))
}

// ParsePage validates a page and decodes its cursor. ok is false for the
// first page.
func ParsePage(p store.Page) (c Cursor, ok bool, limit int, err error) {
	limit = p.EffectiveLimit()
	if p.Cursor == "" {
		return Cursor{}, false, limit, nil
	}
	bad := errdefs.InvalidArgument("invalid_cursor", "the page cursor is malformed")
	raw, err := base64.RawURLEncoding.DecodeString(p.Cursor)
	if err != nil {
		return Cursor{}, false, 0, bad.WithCause(err)
	}
	at, id, found := strings.Cut(string(raw), ":")
	if !found || id == "" {
		return Cursor{}, false, 0, bad
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return Cursor{}, false, 0, bad.WithCause(err)
	}
	return Cursor{At: time.UnixMicro(n).UTC(), ID: id}, true, limit, nil
}

// NextCursor trims a page fetched with limit+1 rows to limit and returns
// the cursor for the next page, "" when this page is the last.
func NextCursor[T any](rows []T, limit int, key func(T) (time.Time, string)) ([]T, string) {
	if len(rows) <= limit {
		return rows, ""
	}
	rows = rows[:limit]
	at, id := key(rows[limit-1])
	return rows, Cursor{At: at, ID: id}.String()
}
