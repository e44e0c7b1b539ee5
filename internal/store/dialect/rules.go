package dialect

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// The checks, defaults and encodings of tenancy, seats, secrets, egress
// and leases that every dialect makes the same way.

// More records of the store.
const (
	Member Resource = "member"
	Egress Resource = "egress decision"
	Lease  Resource = "lease"
)

// InUse turns a classified error of deleting a record of res that others
// still reference (errdefs.ErrFailedPrecondition) into code <res>_in_use;
// any other error is returned as it is.
func InUse(res Resource, err error) error {
	if errors.Is(err, errdefs.ErrFailedPrecondition) {
		return errdefs.FailedPrecondition(string(res)+"_in_use",
			"the %s is still referenced by other records; delete them first", res).WithCause(err)
	}
	return err
}

// WorkspaceMemberExists turns a classified error of adding a workspace member that
// is already one (errdefs.ErrConflict) into code member_exists; any other
// error is returned as it is.
func WorkspaceMemberExists(err error) error {
	if errdefs.IsConflict(err) {
		return errdefs.Conflict("member_exists", "the user is already a member of this workspace").WithCause(err)
	}
	return err
}

// CheckMemberLimit refuses a negative member limit (0 means none).
func CheckMemberLimit(limit int) error {
	if limit < 0 {
		return errdefs.InvalidArgument("invalid_member_limit", "a member limit must not be negative (0 means none)")
	}
	return nil
}

// EncodeHosts encodes a secret's hosts as a JSON array, nil as [], so they
// read back as a list, empty when none.
func EncodeHosts(hosts []string) (string, error) {
	if hosts == nil {
		hosts = []string{}
	}
	b, err := json.Marshal(hosts)
	return string(b), err
}

// DecodeHosts reads what EncodeHosts wrote.
func DecodeHosts(v string) ([]string, error) {
	var hosts []string
	err := json.Unmarshal([]byte(v), &hosts)
	return hosts, err
}

// EgressLimit is the number of decisions one read of a sandbox's egress
// returns: limit, or store.MaxLimit when limit is not in 1..MaxLimit.
func EgressLimit(limit int) int {
	if limit <= 0 || limit > store.MaxLimit {
		return store.MaxLimit
	}
	return limit
}

// WarmTimes are a new warm sandbox's created and updated times: created
// defaults to now(), and updated to created.
func WarmTimes(w store.WarmSandbox, now func() time.Time) (created, updated time.Time) {
	created = w.CreatedAt
	if created.IsZero() {
		created = now()
	}
	updated = w.UpdatedAt
	if updated.IsZero() {
		updated = created
	}
	return created, updated
}

// CheckAcquire checks the arguments of acquiring a lease: a name, a holder
// and a positive ttl.
func CheckAcquire(name, holder string, ttl time.Duration) error {
	if err := Required(Lease, "name", name, "holder", holder); err != nil {
		return err
	}
	if ttl <= 0 {
		return errdefs.InvalidArgument("invalid_lease", "a lease's ttl must be positive, not %s", ttl)
	}
	return nil
}
