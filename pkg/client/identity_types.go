package client

import "time"

// Roles in an org, lowest first: a viewer reads; a member operates
// runtimes (start, pause, exec, files, terminal, prompts); an admin
// manages projects, runtime configuration, capabilities, members, keys and
// secrets; an owner also manages billing settings (member limits) and
// owners.
const (
	RoleViewer = "viewer"
	RoleMember = "member"
	RoleAdmin  = "admin"
	RoleOwner  = "owner"
)

// User is a person or a machine with access: an email address, a wallet
// address, or both.
type User struct {
	ID        string    `json:"id"`
	Email     string    `json:"email,omitempty"`
	Wallet    string    `json:"wallet,omitempty"`
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateUserRequest creates a user (installation admin only); it needs an
// email or a wallet address.
type CreateUserRequest struct {
	Email  string `json:"email,omitempty"`
	Wallet string `json:"wallet,omitempty"`
	Name   string `json:"name,omitempty"`
}

// UpdateUserRequest changes a user's fields; absent ones stay, "" clears
// (a user keeps an email or a wallet).
type UpdateUserRequest struct {
	Email  *string `json:"email,omitempty"`
	Wallet *string `json:"wallet,omitempty"`
	Name   *string `json:"name,omitempty"`
}

// Membership is one org a caller belongs to, and its role there.
type Membership struct {
	OrgID string `json:"org_id"`
	Org   string `json:"org"`
	Role  string `json:"role"`
}

// Me is who the caller is: the credential, the user behind it (none for
// the installation admin's keys), what a key is scoped to, and the user's
// memberships.
type Me struct {
	Credential   string       `json:"credential"` // "key:<id>" or "session:<id>"
	Installation bool         `json:"installation_admin"`
	User         *User        `json:"user,omitempty"`
	Key          *APIKey      `json:"key,omitempty"`
	Memberships  []Membership `json:"memberships"`
}

// OrgMember is a user's membership of an org.
type OrgMember struct {
	ID        string    `json:"id"`
	OrgID     string    `json:"org_id"`
	UserID    string    `json:"user_id"`
	Member    string    `json:"member"` // the user's handle
	Role      string    `json:"role"`
	User      User      `json:"user"`
	CreatedAt time.Time `json:"created_at"`
}

// AddOrgMemberRequest adds a user to an org with a role. Member is an
// email address or a wallet address (a user id only for the installation
// admin). An org admin's request invites whoever holds the address, unless
// the installation allows direct adds; the installation admin adds
// directly, and makes a user of an address no user has yet. Only an owner
// grants owner.
type AddOrgMemberRequest struct {
	Member string `json:"member"`
	Role   string `json:"role"`
}

// AddedMember is what adding a member did: made a membership (a direct
// add, 201) or an invitation that the invitee accepts (202). Exactly one is
// set.
type AddedMember struct {
	Member     *OrgMember
	Invitation *Invitation
}

// Invitation states.
const (
	InvitationPending  = "pending"
	InvitationAccepted = "accepted"
	InvitationDeclined = "declined"
	InvitationRevoked  = "revoked"
	InvitationExpired  = "expired"
)

// Invitation is an offer of an org membership to whoever holds an email or
// a wallet address. The role the invitee gets is at most the inviter's
// when they accept; an inviter who left the org or is no longer an admin
// there leaves it void.
type Invitation struct {
	ID     string `json:"id"`
	OrgID  string `json:"org_id"`
	Org    string `json:"org"`
	Email  string `json:"email,omitempty"`
	Wallet string `json:"wallet,omitempty"`
	Role   string `json:"role"`
	// InvitedBy is the inviter's user id, Inviter their email or wallet
	// address.
	InvitedBy string `json:"invited_by"`
	Inviter   string `json:"inviter"`
	// State is pending, accepted, declined, revoked or expired.
	State     string     `json:"state"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
}

// Invitee is who an invitation is for: its email, else its wallet
// address.
func (i Invitation) Invitee() string {
	if i.Email != "" {
		return i.Email
	}
	return i.Wallet
}

// SetRoleRequest changes a member's role.
type SetRoleRequest struct {
	Role string `json:"role"`
}

// APIKey describes a key; the key itself is shown once, at creation.
type APIKey struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Prefix      string     `json:"prefix"`
	Role        string     `json:"role"`
	OrgID       string     `json:"org_id,omitempty"`
	UserID      string     `json:"user_id,omitempty"`
	WorkspaceID string     `json:"workspace_id,omitempty"`
	CreatedBy   string     `json:"created_by,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

// CreateKeyRequest makes a key in an org. Member names its holder (an
// email, a wallet address or a user id; default: the caller); Role is at
// most the holder's and the caller's (default: the holder's); Workspace
// narrows it to one workspace; it expires at ExpiresAt, or after
// ExpiresIn (a duration such as "720h"), or never.
type CreateKeyRequest struct {
	Name      string     `json:"name,omitempty"`
	Member    string     `json:"member,omitempty"`
	Role      string     `json:"role,omitempty"`
	Workspace string     `json:"workspace,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	ExpiresIn string     `json:"expires_in,omitempty"`
}

// CreatedKey is a new key and its plaintext, shown this once.
type CreatedKey struct {
	APIKey
	Key string `json:"key"`
}

// AuthChallengeRequest asks for a wallet sign-in challenge.
type AuthChallengeRequest struct {
	Address string `json:"address"`
}

// AuthChallenge is a single-use nonce and the message to sign with the
// wallet (EIP-191 personal_sign) before ExpiresAt.
type AuthChallenge struct {
	Nonce     string    `json:"nonce"`
	Address   string    `json:"address"`
	Message   string    `json:"message"`
	ExpiresAt time.Time `json:"expires_at"`
}

// AuthSessionRequest answers a challenge: its nonce and the signature of
// its message (0x-prefixed, 65 bytes hex).
type AuthSessionRequest struct {
	Nonce     string `json:"nonce"`
	Signature string `json:"signature"`
}

// AuthSession is a signed-in session: Token (a PASETO v4.local token) is
// sent as `Authorization: Bearer …` until ExpiresAt or until it is
// revoked.
type AuthSession struct {
	Token     string    `json:"token"`
	SessionID string    `json:"session_id"`
	User      User      `json:"user"`
	ExpiresAt time.Time `json:"expires_at"`
}
