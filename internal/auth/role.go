package auth

import (
	"slices"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Role is what a member of an org may do there. Each includes the ones
// below it:
//
//   - viewer reads;
//   - member operates runtimes (start, pause, exec, files, terminal,
//     prompts);
//   - admin manages projects, runtimes' configuration and capabilities,
//     members, keys and secrets;
//   - owner also manages billing settings (member limits) and owners.
//
// Creating orgs and granting credits is the installation admin's alone.
type Role string

// Roles, lowest first.
const (
	RoleViewer Role = "viewer"
	RoleMember Role = "member"
	RoleAdmin  Role = "admin"
	RoleOwner  Role = "owner"
)

// Roles lists every role, lowest first.
var Roles = []Role{RoleViewer, RoleMember, RoleAdmin, RoleOwner}

func (r Role) rank() int {
	for i, x := range Roles {
		if x == r {
			return i + 1
		}
	}
	return 0
}

// Valid reports whether r is a role.
func (r Role) Valid() bool { return r.rank() > 0 }

// AtLeast reports whether r includes min.
func (r Role) AtLeast(min Role) bool { return r.Valid() && r.rank() >= min.rank() }

// MinRole is the lower of a and b.
func MinRole(a, b Role) Role {
	if a.rank() <= b.rank() {
		return a
	}
	return b
}

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Valid() {
		return r, nil
	}
	return "", errdefs.InvalidArgument("invalid_role", "role %q must be one of owner, admin, member, viewer", s)
}

// Access is what one identity may do in one org (internal/access decides
// it).
type Access struct {
	Org  store.Org
	Role Role
	// Workspaces are the ids of the org's workspaces the identity may
	// see; nil means every one.
	Workspaces []string
}

// SeesWorkspace reports whether the identity may see workspace id.
func (a Access) SeesWorkspace(id string) bool {
	return a.Workspaces == nil || slices.Contains(a.Workspaces, id)
}
