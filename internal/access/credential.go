package access

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Credentials. Every refusal carries an auth.Refusal that says why, for
// the door's log; the caller learns nothing about which keys exist.

// errBadKey is every refusal of a presented key.
var errBadKey = errdefs.Unauthenticated("invalid_api_key", "the API key is malformed, unknown, expired or revoked")

// refuse returns the public error for a key wrapping why.
func refuse(reason, keyID string) error {
	return errBadKey.WithCause(&auth.Refusal{Reason: reason, KeyID: keyID})
}

// Authenticate returns the principal a bearer credential carries: a
// session token (auth.IsSessionToken) or an API key. A malformed key is
// refused before any lookup.
func (s *Service) Authenticate(ctx context.Context, cred string) (Principal, error) {
	if auth.IsSessionToken(cred) {
		if s.signin == nil {
			return Principal{}, errdefs.Unauthenticated("invalid_session", "this server does not issue session tokens")
		}
		id, err := s.signin.Verify(ctx, cred)
		if err != nil {
			return Principal{}, err
		}
		return s.session(ctx, id)
	}
	return s.VerifyKey(ctx, cred)
}

// session returns what a live session carries now: a wallet session its
// user (id as it is), a console session opened with a key that key,
// checked again as if presented (checkKey: revoked, expired, its holder
// gone), with the session.
func (s *Service) session(ctx context.Context, id Principal) (Principal, error) {
	if id.KeyID == "" {
		return id, nil
	}
	rec, err := s.store.GetAPIKey(ctx, id.KeyID)
	if errdefs.IsNotFound(err) {
		return Principal{}, refuse("unknown", id.KeyID)
	}
	if err != nil {
		return Principal{}, err
	}
	p, err := s.checkKey(ctx, rec)
	if err != nil {
		return Principal{}, err
	}
	p.Console = id.Console
	return p, nil
}

// VerifyKey returns the principal a presented API key carries: refused
// when it is malformed, unknown, expired or revoked, or when its holder is
// no longer a member of its org.
func (s *Service) VerifyKey(ctx context.Context, presented string) (Principal, error) {
	if !auth.WellFormed(presented) {
		return Principal{}, refuse("malformed", "")
	}
	h := auth.Hash(presented)
	rec, err := s.store.GetAPIKeyByHash(ctx, h)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return Principal{}, refuse("unknown", "")
		}
		return Principal{}, err
	}
	// The lookup was by hash; compare again in constant time for form.
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(h)) != 1 {
		return Principal{}, refuse("unknown", "")
	}
	return s.checkKey(ctx, rec)
}

// checkKey returns the principal a stored key carries now: refused when it
// is revoked or expired, or its holder or maker left its org.
func (s *Service) checkKey(ctx context.Context, rec store.APIKey) (Principal, error) {
	switch {
	case !rec.RevokedAt.IsZero():
		return Principal{}, refuse("revoked", rec.ID)
	case !rec.ExpiresAt.IsZero() && !s.clock().Before(rec.ExpiresAt):
		return Principal{}, refuse("expired", rec.ID)
	}
	p := Principal{KeyID: rec.ID, UserID: rec.UserID, MakerUserID: rec.MakerUserID, OrgID: rec.OrgID, WorkspaceID: rec.WorkspaceID, Role: auth.Role(rec.Role)}
	if rec.OrgID == "" {
		p.Installation = true
		return p, nil
	}
	// A key never carries more than its holder has now, nor more than
	// the admin who made it for the holder; it dies with either's
	// membership, and does not come back with a later one.
	for _, u := range []string{rec.UserID, rec.MakerUserID} {
		if u == "" {
			continue
		}
		m, err := s.memberSince(ctx, rec.OrgID, u, rec.CreatedAt)
		if errdefs.IsNotFound(err) {
			return Principal{}, refuse("not_a_member", rec.ID)
		}
		if err != nil {
			return Principal{}, err
		}
		p.Role = auth.MinRole(p.Role, auth.Role(m.Role))
	}
	return p, nil
}

// memberSince is user's membership of org when it began no later than
// since, when a credential of it was made: a user who left and joined
// again since has a membership the credential never belonged to, and is
// not found. This is the one place that rule lives, for API keys, the
// preview tokens and SSH keys they made, and SSH keys of their own.
func (s *Service) memberSince(ctx context.Context, orgID, userID string, since time.Time) (store.OrgMember, error) {
	m, err := s.store.GetOrgMember(ctx, orgID, userID)
	if err == nil && m.CreatedAt.After(since) {
		return store.OrgMember{}, errRejoined
	}
	return m, err
}

// errRejoined is a membership younger than the credential asking: not
// found, as no membership.
var errRejoined = fmt.Errorf("%w: the membership began after the credential was made", errdefs.ErrNotFound)

// Reverify returns the principal a credential named by
// Principal.Credential ("key:<id>", "session:<id>") carries now, refused
// exactly as presenting it again would be: what a credential made (a
// preview token, an SSH key) lives no longer than the credential itself.
func (s *Service) Reverify(ctx context.Context, cred string) (Principal, error) {
	kind, id, _ := strings.Cut(cred, ":")
	switch kind {
	case "key":
		rec, err := s.store.GetAPIKey(ctx, id)
		if errdefs.IsNotFound(err) {
			return Principal{}, refuse("unknown", id)
		}
		if err != nil {
			return Principal{}, err
		}
		return s.checkKey(ctx, rec)
	case "session":
		sess, err := s.store.GetAuthSession(ctx, id)
		if errdefs.IsNotFound(err) {
			return Principal{}, auth.RefuseSession("unknown")
		}
		if err != nil {
			return Principal{}, err
		}
		id, err := auth.CheckSession(sess, s.clock())
		if err != nil {
			return Principal{}, err
		}
		return s.session(ctx, id)
	}
	return Principal{}, refuse("malformed", "")
}

// SSHKey returns the principal of a registered SSH key, found by its
// fingerprint and compared with the public key presented (authorized_keys
// form):
//
//   - a key registered with a sign-in session acts with the user's own
//     memberships (a principal with a SessionID "ssh:<key id>");
//   - a key registered with an API key keeps that key's scope: its org,
//     its workspace if narrowed, its role lowered to the user's now; it
//     lives no longer than that API key, and like one stops working when
//     the user leaves the org and does not come back when they rejoin.
//
// A refusal is a public error with an auth.Refusal cause naming why.
func (s *Service) SSHKey(ctx context.Context, fingerprint, pub string) (Principal, store.SSHKey, error) {
	k, err := s.store.GetSSHKeyByFingerprint(ctx, fingerprint)
	if errdefs.IsNotFound(err) {
		return Principal{}, k, refuse("unknown_key", "")
	}
	if err != nil {
		return Principal{}, k, err
	}
	if subtle.ConstantTimeCompare([]byte(k.PublicKey), []byte(pub)) != 1 {
		return Principal{}, k, refuse("key_mismatch", "")
	}
	if k.OrgID == "" {
		return Principal{UserID: k.UserID, SessionID: "ssh:" + k.ID}, k, nil
	}
	if k.APIKeyID != "" {
		// Revoked, expired, or its holder or maker gone.
		if _, err := s.Reverify(ctx, "key:"+k.APIKeyID); err != nil {
			if RefusalOf(err) != "" {
				return Principal{}, k, refuse("registering_key_invalid", k.APIKeyID)
			}
			return Principal{}, k, err
		}
	}
	m, err := s.memberSince(ctx, k.OrgID, k.UserID, k.CreatedAt)
	switch {
	case errors.Is(err, errRejoined):
		return Principal{}, k, refuse("key_older_than_membership", "")
	case errdefs.IsNotFound(err):
		return Principal{}, k, refuse("not_a_member", "")
	case err != nil:
		return Principal{}, k, err
	}
	return Principal{
		UserID: k.UserID, KeyID: "ssh:" + k.ID, OrgID: k.OrgID, WorkspaceID: k.WorkspaceID,
		Role: auth.MinRole(auth.Role(k.Role), auth.Role(m.Role)),
	}, k, nil
}

// SSHKeyByID is SSHKey for the registered key id, as a connection it
// opened is checked again: the principal it is now, or a refusal
// ("unknown_key" once it was deleted).
func (s *Service) SSHKeyByID(ctx context.Context, id string) (Principal, store.SSHKey, error) {
	k, err := s.store.GetSSHKey(ctx, id)
	if errdefs.IsNotFound(err) {
		return Principal{}, k, refuse("unknown_key", "")
	}
	if err != nil {
		return Principal{}, k, err
	}
	return s.SSHKey(ctx, k.Fingerprint, k.PublicKey)
}

// RefusalOf is why err refused a credential or an access, "" when it
// says not.
func RefusalOf(err error) string {
	var why *auth.Refusal
	if errors.As(err, &why) {
		return why.Reason
	}
	return ""
}
