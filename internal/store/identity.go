package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Identity
//
// Vocabulary:
//
//   - User: a person or a machine that holds keys or signs in. A user has
//     an email address, a wallet address, or both (stored lowercase, each
//     unique). Users migrated from the old free-text workspace member
//     labels that were not email addresses keep the label as Name and have
//     neither.
//   - OrgMember: a user's membership of an org, with a role: owner, admin,
//     member or viewer. Removing it removes the user's workspace
//     memberships in that org and revokes the user's keys there.
//   - WorkspaceMember (see the credits section): a user's membership of a
//     workspace; what a workspace's member limit counts.
//   - APIKey: a credential of a user scoped to an org (optionally narrowed
//     to one workspace) with a role, or an installation-wide key (no org,
//     no user), the installation admin's.
//   - AuthChallenge: a single-use nonce for a wallet sign-in, and the
//     message to sign.
//   - AuthSession: a wallet sign-in; its id is inside the session token.
// ---------------------------------------------------------------------------

// User is a person or a machine with access.
type User struct {
	ID        string
	Email     string // lowercase; "" when none
	Wallet    string // lowercase 0x-prefixed hex address; "" when none
	Name      string
	CreatedAt time.Time
}

// Handle is how the user is shown: the email, else the wallet, else the
// name.
func (u User) Handle() string {
	switch {
	case u.Email != "":
		return u.Email
	case u.Wallet != "":
		return u.Wallet
	}
	return u.Name
}

// OrgMember is a user's membership of an org. Listings fill User.
type OrgMember struct {
	ID        string
	OrgID     string
	UserID    string
	Role      string
	CreatedAt time.Time
	User      User
}

// APIKeyFilter selects keys in a listing; empty fields match all.
type APIKeyFilter struct {
	OrgID  string
	UserID string
	// Installation selects the installation-wide keys (no org) only.
	Installation bool
}

// AuthChallenge is a pending wallet sign-in.
type AuthChallenge struct {
	Nonce     string
	Wallet    string // lowercase address the message names
	Message   string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// AuthSession is a signed-in session: a wallet sign-in (UserID, no KeyID),
// or a console sign-in with an API key (KeyID, and UserID the key's
// holder, "" for an installation-wide key), which acts as that key.
type AuthSession struct {
	ID     string
	UserID string
	// KeyID is the API key a console sign-in presented; "" for a wallet
	// sign-in.
	KeyID     string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt time.Time // zero while valid
}

// IdentityQueries are the operations on users, memberships, API keys,
// wallet sign-ins, invitations and SSH keys.
type IdentityQueries interface {
	InvitationQueries // invitation.go
	SSHQueries        // ssh.go

	// CreateUser inserts u; an email or wallet another user has is
	// ErrConflict (codes email_taken, wallet_taken).
	CreateUser(ctx context.Context, u User) error
	GetUser(ctx context.Context, id string) (User, error)
	GetUserByEmail(ctx context.Context, email string) (User, error)
	GetUserByWallet(ctx context.Context, wallet string) (User, error)
	// ListUsers lists every user, oldest first.
	ListUsers(ctx context.Context, page Page) ([]User, string, error)
	// UpdateUser writes u's email, wallet and name (conflicts as in
	// CreateUser). A changed wallet ends the user's sessions.
	UpdateUser(ctx context.Context, u User) error
	// DeleteUser deletes a user with its memberships, keys and sessions.
	DeleteUser(ctx context.Context, id string) error

	// AddOrgMember inserts m; a user already in the org is ErrConflict
	// (code member_exists).
	AddOrgMember(ctx context.Context, m OrgMember) error
	GetOrgMember(ctx context.Context, orgID, userID string) (OrgMember, error)
	// ListOrgMembers lists an org's members in the order they joined.
	ListOrgMembers(ctx context.Context, orgID string, page Page) ([]OrgMember, string, error)
	// ListUserOrgs lists the memberships of a user (User left empty).
	ListUserOrgs(ctx context.Context, userID string) ([]OrgMember, error)
	SetOrgMemberRole(ctx context.Context, orgID, userID, role string) error
	// RemoveOrgMember removes the membership, the user's workspace
	// memberships in the org, and revokes at at the user's keys in the org
	// and those the user made there for others, in one transaction.
	RemoveOrgMember(ctx context.Context, orgID, userID string, at time.Time) error
	// CountOrgOwners counts the owners of an org.
	CountOrgOwners(ctx context.Context, orgID string) (int, error)
	// IsWorkspaceMember reports whether userID is a member of
	// workspaceID.
	IsWorkspaceMember(ctx context.Context, workspaceID, userID string) (bool, error)
	// ListMemberWorkspaces lists the ids of the workspaces of orgID that
	// userID is a member of.
	ListMemberWorkspaces(ctx context.Context, orgID, userID string) ([]string, error)

	CreateAPIKey(ctx context.Context, k APIKey) error
	GetAPIKey(ctx context.Context, id string) (APIKey, error)
	GetAPIKeyByHash(ctx context.Context, hash string) (APIKey, error)
	CountAPIKeys(ctx context.Context) (int, error)
	// ListAPIKeys lists keys, newest first; revoked ones too.
	ListAPIKeys(ctx context.Context, f APIKeyFilter, page Page) ([]APIKey, string, error)
	// RevokeAPIKey marks a key revoked at at; revoking a revoked key keeps
	// the first time. It returns the stored key.
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (APIKey, error)

	// CreateAuthChallenge inserts c and deletes challenges expired before
	// c.CreatedAt.
	CreateAuthChallenge(ctx context.Context, c AuthChallenge) error
	GetAuthChallenge(ctx context.Context, nonce string) (AuthChallenge, error)
	// ConsumeAuthChallenge deletes the challenge if it has not expired at
	// at; a used, expired or unknown nonce is ErrNotFound. Exactly one of
	// concurrent callers succeeds.
	ConsumeAuthChallenge(ctx context.Context, nonce string, at time.Time) error
	CreateAuthSession(ctx context.Context, s AuthSession) error
	GetAuthSession(ctx context.Context, id string) (AuthSession, error)
	// RevokeAuthSession marks a session revoked at at (the first time
	// stays).
	RevokeAuthSession(ctx context.Context, id string, at time.Time) error
}
