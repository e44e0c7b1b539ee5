package access

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/store"
)

// Store is what the service uses of the store: the identity records it
// keeps (users, members, API keys, sign-in sessions, invitations, SSH
// keys), the orgs, workspaces and runtimes a request names, and
// transactions for the changes that must hold together.
type Store interface {
	store.Transactor

	CreateUser(ctx context.Context, u store.User) error
	GetUser(ctx context.Context, id string) (store.User, error)
	GetUserByEmail(ctx context.Context, email string) (store.User, error)
	GetUserByWallet(ctx context.Context, wallet string) (store.User, error)
	ListUsers(ctx context.Context, page store.Page) ([]store.User, string, error)
	UpdateUser(ctx context.Context, u store.User) error
	DeleteUser(ctx context.Context, id string) error

	AddOrgMember(ctx context.Context, m store.OrgMember) error
	GetOrgMember(ctx context.Context, orgID, userID string) (store.OrgMember, error)
	ListOrgMembers(ctx context.Context, orgID string, page store.Page) ([]store.OrgMember, string, error)
	ListUserOrgs(ctx context.Context, userID string) ([]store.OrgMember, error)
	IsWorkspaceMember(ctx context.Context, workspaceID, userID string) (bool, error)
	ListMemberWorkspaces(ctx context.Context, orgID, userID string) ([]string, error)

	CreateAPIKey(ctx context.Context, k store.APIKey) error
	GetAPIKey(ctx context.Context, id string) (store.APIKey, error)
	GetAPIKeyByHash(ctx context.Context, hash string) (store.APIKey, error)
	CountAPIKeys(ctx context.Context) (int, error)
	ListAPIKeys(ctx context.Context, f store.APIKeyFilter, page store.Page) ([]store.APIKey, string, error)
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (store.APIKey, error)

	GetAuthSession(ctx context.Context, id string) (store.AuthSession, error)

	GetInvitation(ctx context.Context, id string) (store.Invitation, error)
	ListInvitations(ctx context.Context, f store.InvitationFilter, page store.Page) ([]store.Invitation, string, error)
	DecideInvitation(ctx context.Context, id, state string, at time.Time) error

	CreateSSHKey(ctx context.Context, k store.SSHKey) error
	GetSSHKey(ctx context.Context, id string) (store.SSHKey, error)
	GetSSHKeyByFingerprint(ctx context.Context, fingerprint string) (store.SSHKey, error)
	ListSSHKeys(ctx context.Context, userID string, page store.Page) ([]store.SSHKey, string, error)
	DeleteSSHKey(ctx context.Context, userID, id string) error

	GetOrg(ctx context.Context, id string) (store.Org, error)
	GetOrgByName(ctx context.Context, name string) (store.Org, error)
	GetWorkspaceByName(ctx context.Context, orgID, name string) (store.Workspace, error)
	GetRuntime(ctx context.Context, id string) (store.Runtime, error)
	FindRuntimesByIDPrefix(ctx context.Context, prefix string, limit int) ([]store.Runtime, error)
}

// memberTx is what a change of a member's role or membership does in the
// transaction that keeps the org an owner (keepingAnOwner).
type memberTx interface {
	SetOrgMemberRole(ctx context.Context, orgID, userID, role string) error
	RemoveOrgMember(ctx context.Context, orgID, userID string, at time.Time) error
	RevokeInvitationsBy(ctx context.Context, orgID, inviterID string, at time.Time) (int, error)
}
