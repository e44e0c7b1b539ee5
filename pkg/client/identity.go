package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Identity: wallet sign-in, the caller, users, org members and API keys.
//
// A wallet signs in in two steps, neither of which needs a credential:
// AuthChallenge returns a message, the wallet signs it (EIP-191
// personal_sign), and CreateSession trades the signature for a session
// token. SignIn does both around a signing function, so the SDK needs no
// cryptography of its own. The token is a bearer credential like an API
// key: pass it to New.

// AuthChallenge asks for a single-use sign-in challenge for the wallet
// address: the message to sign and the nonce that names it.
func (c *Client) AuthChallenge(ctx context.Context, address string) (AuthChallenge, error) {
	return call[AuthChallenge](ctx, c, http.MethodPost, routeOf("/api/auth/challenge"), nil, AuthChallengeRequest{Address: address})
}

// CreateSession answers a challenge with its signature and opens a
// session. Refusals are unauthenticated, with codes "invalid_challenge"
// (unknown or used nonce), "challenge_expired", "wrong_signer" and
// "unknown_wallet" (no user has the address).
func (c *Client) CreateSession(ctx context.Context, req AuthSessionRequest) (AuthSession, error) {
	return call[AuthSession](ctx, c, http.MethodPost, routeOf("/api/auth/session"), nil, req)
}

// SignIn signs in with the wallet address: it asks for a challenge, has
// sign sign its message (personal_sign, returning the 0x-prefixed 65-byte
// hex signature) and opens a session. A client of the session is
// New(baseURL, session.Token).
func (c *Client) SignIn(ctx context.Context, address string, sign func(message string) (signature string, err error)) (AuthSession, error) {
	ch, err := c.AuthChallenge(ctx, address)
	if err != nil {
		return AuthSession{}, err
	}
	sig, err := sign(ch.Message)
	if err != nil {
		return AuthSession{}, fmt.Errorf("paddock: sign the challenge: %w", err)
	}
	return c.CreateSession(ctx, AuthSessionRequest{Nonce: ch.Nonce, Signature: sig})
}

// SignOut ends the session whose token the client was made with. The
// token is refused from then on.
func (c *Client) SignOut(ctx context.Context) error {
	return c.callDiscard(ctx, http.MethodDelete, routeOf("/api/auth/session"), nil, nil)
}

// Me returns who the caller is: its credential, its user, its key's scope
// and its memberships.
func (c *Client) Me(ctx context.Context) (Me, error) {
	return call[Me](ctx, c, http.MethodGet, routeOf("/api/v1/me"), nil, nil)
}

// CreateUser creates a user; it needs an installation admin key.
func (c *Client) CreateUser(ctx context.Context, req CreateUserRequest) (User, error) {
	return call[User](ctx, c, http.MethodPost, routeOf("/api/v1/users"), nil, req)
}

// ListUsers lists one page of the installation's users; it needs an
// installation admin key.
func (c *Client) ListUsers(ctx context.Context, opts ListOptions) (List[User], error) {
	return call[List[User]](ctx, c, http.MethodGet, routeOf("/api/v1/users"), opts.query(), nil)
}

// GetUser returns a user by id, email or wallet address; it needs an
// installation admin key.
func (c *Client) GetUser(ctx context.Context, user string) (User, error) {
	return call[User](ctx, c, http.MethodGet, routeOf("/api/v1/users", user), nil, nil)
}

// UpdateUser changes the fields of a user (by id, email or wallet address)
// that req sets; it needs an installation admin key.
func (c *Client) UpdateUser(ctx context.Context, user string, req UpdateUserRequest) (User, error) {
	return call[User](ctx, c, http.MethodPatch, routeOf("/api/v1/users", user), nil, req)
}

// DeleteUser deletes a user (by id, email or wallet address); it needs an
// installation admin key.
func (c *Client) DeleteUser(ctx context.Context, user string) error {
	return c.callDiscard(ctx, http.MethodDelete, routeOf("/api/v1/users", user), nil, nil)
}

// ListInstallationKeys lists one page of the installation-wide keys (of
// no org: the installation admin's); it needs an installation admin key.
func (c *Client) ListInstallationKeys(ctx context.Context, opts ListOptions) (List[APIKey], error) {
	return call[List[APIKey]](ctx, c, http.MethodGet, routeOf("/api/v1/keys"), opts.query(), nil)
}

// CreateInstallationKey makes an installation admin key named name; it
// needs an installation admin key. The plaintext is in the answer only.
func (c *Client) CreateInstallationKey(ctx context.Context, name string) (CreatedKey, error) {
	return call[CreatedKey](ctx, c, http.MethodPost, routeOf("/api/v1/keys"), nil, CreateInstallationKeyRequest{Name: name})
}

// RevokeInstallationKey revokes any key of the installation by its id; it
// needs an installation admin key.
func (c *Client) RevokeInstallationKey(ctx context.Context, keyID string) error {
	return c.callDiscard(ctx, http.MethodDelete, routeOf("/api/v1/keys", keyID), nil, nil)
}

// ListOrgMembers lists one page of org's members and their roles.
func (c *Client) ListOrgMembers(ctx context.Context, org string, opts ListOptions) (List[OrgMember], error) {
	return call[List[OrgMember]](ctx, c, http.MethodGet, orgRoute(org, "members"), opts.query(), nil)
}

// AddOrgMember adds a user to org with a role, or invites them; it needs
// an admin (an owner to grant owner). An org admin invites whoever holds
// the email or wallet address (the answer is the same whether or not a
// user has it), unless the installation allows direct adds of existing
// users; the installation admin adds directly.
func (c *Client) AddOrgMember(ctx context.Context, org string, req AddOrgMemberRequest) (AddedMember, error) {
	var out AddedMember
	r := orgRoute(org, "members")
	body, err := json.Marshal(req)
	if err != nil {
		return out, fmt.Errorf("paddock: encode POST %s: %w", r.path, err)
	}
	resp, err := c.open(ctx, http.MethodPost, r, nil, bytes.NewReader(body), "application/json", "application/json")
	if err != nil {
		return out, err
	}
	defer closeBody(resp)
	if resp.StatusCode == http.StatusAccepted {
		out.Invitation = new(Invitation)
		return out, decodeJSON(resp, http.MethodPost, r.path, out.Invitation)
	}
	out.Member = new(OrgMember)
	return out, decodeJSON(resp, http.MethodPost, r.path, out.Member)
}

// ListOrgInvitations lists one page of org's pending invitations, newest
// first; it needs an admin.
func (c *Client) ListOrgInvitations(ctx context.Context, org string, opts ListOptions) (List[Invitation], error) {
	return call[List[Invitation]](ctx, c, http.MethodGet, orgRoute(org, "invitations"), opts.query(), nil)
}

// RevokeInvitation revokes org's pending invitation by its id; it needs an
// admin.
func (c *Client) RevokeInvitation(ctx context.Context, org, invitationID string) error {
	return c.callDiscard(ctx, http.MethodDelete, orgRoute(org, "invitations", invitationID), nil, nil)
}

// ListInvitations lists one page of the caller's pending invitations (to
// its user's email or wallet address), newest first. Only the user's own
// credential sees them: a sign-in session, or a key the user or the
// installation admin made; a key narrowed to a workspace, or one an org
// admin made for the user, sees none.
func (c *Client) ListInvitations(ctx context.Context, opts ListOptions) (List[Invitation], error) {
	return call[List[Invitation]](ctx, c, http.MethodGet, routeOf("/api/v1/invitations"), opts.query(), nil)
}

// AcceptInvitation accepts one of the caller's invitations: its user
// becomes a member of the org, with the invited role capped by the
// inviter's.
func (c *Client) AcceptInvitation(ctx context.Context, invitationID string) (OrgMember, error) {
	return call[OrgMember](ctx, c, http.MethodPost, routeOf("/api/v1/invitations", invitationID, "accept"), nil, nil)
}

// DeclineInvitation declines one of the caller's invitations.
func (c *Client) DeclineInvitation(ctx context.Context, invitationID string) (Invitation, error) {
	return call[Invitation](ctx, c, http.MethodPost, routeOf("/api/v1/invitations", invitationID, "decline"), nil, nil)
}

// SetOrgMemberRole changes the role of org's member (a user id, email or
// wallet address); it needs an admin (an owner to grant or take owner).
func (c *Client) SetOrgMemberRole(ctx context.Context, org, member string, req SetRoleRequest) (OrgMember, error) {
	return call[OrgMember](ctx, c, http.MethodPatch, orgRoute(org, "members", member), nil, req)
}

// RemoveOrgMember removes a member (a user id, email or wallet address)
// from org.
func (c *Client) RemoveOrgMember(ctx context.Context, org, member string) error {
	return c.callDiscard(ctx, http.MethodDelete, orgRoute(org, "members", member), nil, nil)
}

// ListKeys lists one page of org's keys: the caller's own, or all of them
// for an admin.
func (c *Client) ListKeys(ctx context.Context, org string, opts ListOptions) (List[APIKey], error) {
	return call[List[APIKey]](ctx, c, http.MethodGet, orgRoute(org, "keys"), opts.query(), nil)
}

// CreateKey makes a key in org. The plaintext is in the answer only.
func (c *Client) CreateKey(ctx context.Context, org string, req CreateKeyRequest) (CreatedKey, error) {
	return call[CreatedKey](ctx, c, http.MethodPost, orgRoute(org, "keys"), nil, req)
}

// RevokeKey revokes org's key keyID: the caller's own, or any for an
// admin.
func (c *Client) RevokeKey(ctx context.Context, org, keyID string) error {
	return c.callDiscard(ctx, http.MethodDelete, orgRoute(org, "keys", keyID), nil, nil)
}

// AddedMember is what adding a member did: made a membership (a direct
// add, 201) or an invitation that the invitee accepts (202). Exactly one is
// set.
type AddedMember struct {
	Member     *OrgMember
	Invitation *Invitation
}
