package dialect

import (
	"strings"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Identity: the checks every dialect makes of users, sign-ins, keys and
// invitations, and the conflicts it names. Emails and wallets are stored
// lowercase.

// The identity records named only here.
const (
	SSHKey     Resource = "ssh_key"
	Invitation Resource = "invitation"
)

// CheckUser validates u and lowercases its email and wallet.
func CheckUser(u store.User) (store.User, error) {
	if err := Required(User, "id", u.ID); err != nil {
		return store.User{}, err
	}
	u.Email, u.Wallet = strings.ToLower(u.Email), strings.ToLower(u.Wallet)
	if u.Email == "" && u.Wallet == "" && u.Name == "" {
		return store.User{}, errdefs.InvalidArgument("invalid_user", "a user needs an email address, a wallet or a name")
	}
	return u, nil
}

// EmailTaken is the refusal of a user whose email address another user has.
func EmailTaken(cause error) error {
	return errdefs.Conflict("email_taken", "another user has this email address").WithCause(cause)
}

// WalletTaken is the refusal of a user whose wallet another user has.
func WalletTaken(cause error) error {
	return errdefs.Conflict("wallet_taken", "another user has this wallet").WithCause(cause)
}

// MemberExists is the refusal of a second membership of a user in an org.
func MemberExists(cause error) error {
	return errdefs.Conflict("member_exists", "the user is already a member of this org").WithCause(cause)
}

// CheckAuthChallenge validates a new wallet sign-in challenge.
func CheckAuthChallenge(c store.AuthChallenge) error {
	if err := Required(Challenge, "nonce", c.Nonce, "wallet", c.Wallet, "message", c.Message); err != nil {
		return err
	}
	if c.ExpiresAt.IsZero() {
		return Required(Challenge, "expiry", "")
	}
	return nil
}

// CheckAuthSession validates a new sign-in session.
func CheckAuthSession(s store.AuthSession) error {
	if err := Required(AuthSession, "id", s.ID); err != nil {
		return err
	}
	if s.KeyID == "" {
		// A wallet session is its user's; a key's session may have none
		// (an installation-wide key).
		if err := Required(AuthSession, "user id", s.UserID); err != nil {
			return err
		}
	}
	if s.ExpiresAt.IsZero() {
		return Required(AuthSession, "expiry", "")
	}
	return nil
}

// CheckAPIKey validates a new key: an empty OrgID makes an
// installation-wide key, and a key narrowed to a workspace needs an org.
func CheckAPIKey(k store.APIKey) error {
	if err := Required(APIKey, "id", k.ID, "hash", k.Hash, "role", k.Role); err != nil {
		return err
	}
	if k.WorkspaceID != "" && k.OrgID == "" {
		return errdefs.InvalidArgument("invalid_api_key", "a key narrowed to a workspace needs the workspace's org")
	}
	return nil
}

// CheckAPIKeyFilter refuses a listing of installation-wide keys of an org.
func CheckAPIKeyFilter(f store.APIKeyFilter) error {
	if f.Installation && f.OrgID != "" {
		return errdefs.InvalidArgument("invalid_api_key_filter", "installation-wide keys belong to no org; give an org or ask for installation keys, not both")
	}
	return nil
}

// CheckSSHKey validates a new SSH key: its scope is none, or an org and a
// role, and optionally a workspace of that org.
func CheckSSHKey(k store.SSHKey) error {
	err := Required(SSHKey, "id", k.ID, "user id", k.UserID, "fingerprint", k.Fingerprint, "public key", k.PublicKey)
	if err != nil {
		return err
	}
	if (k.WorkspaceID != "" && k.OrgID == "") || (k.OrgID == "") != (k.Role == "") {
		return errdefs.InvalidArgument("invalid_ssh_key", "an SSH key's scope is an org and a role, and optionally a workspace of that org")
	}
	return nil
}

// SSHKeyExists is the refusal of a public key registered already.
func SSHKeyExists(cause error) error {
	return errdefs.Conflict("ssh_key_exists", "this public key is already registered").WithCause(cause)
}

// CheckInvitation validates a new invitation, whose CreatedAt the caller
// has set, and lowercases its address.
func CheckInvitation(inv store.Invitation) (store.Invitation, error) {
	err := Required(Invitation, "id", inv.ID, "org id", inv.OrgID, "role", inv.Role, "inviter id", inv.InviterID)
	if err != nil {
		return store.Invitation{}, err
	}
	inv.Email, inv.Wallet = strings.ToLower(inv.Email), strings.ToLower(inv.Wallet)
	if (inv.Email == "") == (inv.Wallet == "") {
		return store.Invitation{}, errdefs.InvalidArgument("invalid_invitation", "an invitation is to an email address or a wallet address, exactly one")
	}
	if !inv.ExpiresAt.After(inv.CreatedAt) {
		return store.Invitation{}, errdefs.InvalidArgument("invalid_invitation", "an invitation expires after it is made")
	}
	return inv, nil
}

// AlreadyInvited is the refusal of a second pending invitation of an org
// to one address.
func AlreadyInvited(cause error) error {
	return errdefs.Conflict("already_invited", "this address already has a pending invitation to the org").WithCause(cause)
}

// CheckInvitationState refuses a state a pending invitation cannot move to.
func CheckInvitationState(state string) error {
	switch state {
	case store.InvitationAccepted, store.InvitationDeclined, store.InvitationRevoked, store.InvitationExpired:
		return nil
	}
	return errdefs.InvalidArgument("invalid_invitation", "%q is not a state an invitation moves to", state)
}

// InvitationDecided is the refusal to decide an invitation no longer
// pending.
func InvitationDecided() error {
	return errdefs.Conflict("invitation_decided", "the invitation is no longer pending")
}
