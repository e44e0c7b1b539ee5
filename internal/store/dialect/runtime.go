package dialect

import (
	"errors"
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Runtimes, sandboxes and capabilities: the rules every dialect applies
// the same way around its statements.

// CheckRuntimeIDPrefix refuses a prefix FindRuntimesByIDPrefix does not
// take: shorter than 8 characters, or of anything but hex digits and
// dashes (so the prefix bounds a range of ids and is never a pattern).
func CheckRuntimeIDPrefix(prefix string) error {
	if len(prefix) < 8 || strings.Trim(prefix, "0123456789abcdef-") != "" {
		return errdefs.InvalidArgument("invalid_runtime_id", "%q is not a runtime id prefix", prefix)
	}
	return nil
}

// MissOrConflict explains why a versioned update of the row id of res
// matched no row, given whether the row exists: it is gone (not found) or
// its version moved on (a version conflict).
func MissOrConflict(res Resource, id string, version int64, exists bool) error {
	if !exists {
		return NotFound(res, nil)
	}
	return VersionConflict(res, id, version)
}

// CheckSandboxFilter refuses a filter without an org id. none is true
// when f matches no row at all (Workspaces empty but not nil: none of the
// org's workspaces); the listing then returns nothing once page is
// checked, which CheckSandboxFilter does too.
func CheckSandboxFilter(f store.SandboxFilter, page store.Page) (none bool, err error) {
	if f.OrgID == "" {
		return false, errdefs.InvalidArgument("invalid_sandbox_filter", "the sandbox filter needs an org id")
	}
	if f.Workspaces != nil && len(f.Workspaces) == 0 {
		_, _, _, err := ParsePage(page)
		return true, err
	}
	return false, nil
}

// SandboxByProviderID resolves GetSandboxByProviderID: exact finds the row
// of one provider id (its errors already the store's), and an id at least
// store.MinProviderIDPrefix long that matches no row is taken as a prefix,
// which prefixed resolves to the provider ids longer than it that start
// with it (two are enough to tell it is ambiguous).
func SandboxByProviderID(providerID string, exact func(string) (store.Sandbox, error),
	prefixed func(string) ([]string, error)) (store.Sandbox, error) {
	if providerID == "" {
		return store.Sandbox{}, NotFound(Sandbox, nil)
	}
	s, err := exact(providerID)
	if !errors.Is(err, errdefs.ErrNotFound) || len(providerID) < store.MinProviderIDPrefix {
		return s, err
	}
	ids, err := prefixed(providerID)
	if err != nil {
		return store.Sandbox{}, err
	}
	switch len(ids) {
	case 0:
		return store.Sandbox{}, NotFound(Sandbox, nil)
	case 1:
		return exact(ids[0])
	}
	return store.Sandbox{}, errdefs.Conflict("provider_id_ambiguous",
		"provider sandbox id prefix %q matches more than one sandbox; give more of it", providerID)
}

// CheckCapabilityVersion refuses a version without its id, org id, name,
// version, digest or bundle, and returns the contents to store: empty
// contents are stored as {}.
func CheckCapabilityVersion(v store.CapabilityVersion) (contents string, err error) {
	if err := Required(CapVer, "id", v.ID, "org id", v.OrgID, "name", v.Name, "version", v.Version, "digest", v.Digest); err != nil {
		return "", err
	}
	if len(v.Bundle) == 0 {
		return "", Required(CapVer, "bundle", "")
	}
	if len(v.Contents) == 0 {
		return "{}", nil
	}
	return string(v.Contents), nil
}
