package auth

import (
	"context"
	"slices"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Access is what one identity may do in one org.
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

// OrgAccess returns what id may do in org; ok is false when id may not
// see org at all (which answers 404, as if it did not exist).
//
// The installation admin is an owner everywhere. A key is confined to its
// org, and to its workspace if narrowed; its role is its own, already
// lowered to its holder's (Keys.Verify). A session has the user's
// memberships. Owners and admins see every workspace of their org;
// members and viewers only those they are members of.
func OrgAccess(ctx context.Context, q store.Queries, id Identity, org store.Org) (acc Access, ok bool, err error) {
	acc = Access{Org: org, Role: id.Role}
	switch {
	case id.Installation:
		acc.Role = RoleOwner
		return acc, true, nil
	case id.SessionID != "":
		m, err := q.GetOrgMember(ctx, org.ID, id.UserID)
		if errdefs.IsNotFound(err) {
			return acc, false, nil
		}
		if err != nil {
			return acc, false, err
		}
		acc.Role = Role(m.Role)
	case id.OrgID != org.ID:
		return acc, false, nil
	}
	if !acc.Role.Valid() {
		return acc, false, nil
	}
	if id.UserID != "" && !acc.Role.AtLeast(RoleAdmin) {
		ws, err := q.ListMemberWorkspaces(ctx, org.ID, id.UserID)
		if err != nil {
			return acc, false, err
		}
		acc.Workspaces = ws
		if acc.Workspaces == nil {
			acc.Workspaces = []string{}
		}
	}
	if id.WorkspaceID != "" {
		if acc.SeesWorkspace(id.WorkspaceID) {
			acc.Workspaces = []string{id.WorkspaceID}
		} else {
			acc.Workspaces = []string{}
		}
	}
	return acc, true, nil
}
