package sshgw

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/ssh"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Who may connect. The client's key names its user (the store finds it by
// fingerprint); the SSH user name names the runtime: its id, or a prefix of
// at least 12 of the id's hex characters without dashes (as `paddock`
// shows ids), which must match exactly one runtime. The user needs the
// member role in the runtime's org and must see its workspace, decided as
// for the API (auth.OrgAccess):
//
//   - a key registered with a sign-in session acts with the user's own
//     memberships: the identity passed to OrgAccess is the user with a
//     SessionID ("ssh:<key id>"), which OrgAccess reads as "this user's
//     memberships, whatever org";
//   - a key registered with an API key keeps that key's scope: its org,
//     its workspace if narrowed, and its role lowered to the user's role
//     now; like an API key it stops working when the user leaves the org
//     and does not come back when they rejoin.
//
// Every refusal is the same authentication failure to the client, so it
// never learns whether a runtime exists; the log says why, with the
// client's address and the key's fingerprint, never the key.

// minPrefixHex is the fewest hex characters of a runtime id a user name
// may give.
const minPrefixHex = 12

// errRefused is every refusal the client sees.
var errRefused = errors.New("ssh: permission denied")

// Permissions extensions set on an authenticated connection.
const (
	extKeyID       = "paddock-key-id"
	extFingerprint = "paddock-fingerprint"
	extUserID      = "paddock-user-id"
	extRuntimeID   = "paddock-runtime-id"
)

// grant is what an accepted key may do: open sessions into one runtime.
type grant struct {
	keyID       string
	fingerprint string
	userID      string
	runtimeID   string
}

func (g grant) permissions() *ssh.Permissions {
	return &ssh.Permissions{Extensions: map[string]string{
		extKeyID: g.keyID, extFingerprint: g.fingerprint, extUserID: g.userID, extRuntimeID: g.runtimeID,
	}}
}

func grantOf(p *ssh.Permissions) grant {
	if p == nil {
		return grant{}
	}
	e := p.Extensions
	return grant{keyID: e[extKeyID], fingerprint: e[extFingerprint], userID: e[extUserID], runtimeID: e[extRuntimeID]}
}

// refusal is why a key was refused, for the log.
type refusal string

const (
	refusedUnknownKey   refusal = "unknown_key"
	refusedNoRuntime    refusal = "unknown_runtime"
	refusedAmbiguous    refusal = "ambiguous_runtime"
	refusedOutOfScope   refusal = "key_scoped_to_another_org"
	refusedNotMember    refusal = "not_a_member"
	refusedRejoined     refusal = "key_older_than_membership"
	refusedRoleTooLow   refusal = "role_too_low"
	refusedNoWorkspace  refusal = "workspace_not_visible"
	refusedBadUserName  refusal = "malformed_user_name"
	refusedKeyMismatch  refusal = "key_mismatch"
	refusedLookupFailed refusal = "lookup_failed"
	// refusedRegisteringKey: the API key that registered the SSH key no
	// longer works.
	refusedRegisteringKey refusal = "registering_key_invalid"
)

// authorize decides whether the key with fingerprint and public key pub
// (authorized_keys form) may open sessions into the runtime user names.
// A refusal is a reason and no error; err is a failure to decide.
func (g *Gateway) authorize(ctx context.Context, user, fingerprint, pub string) (grant, refusal, error) {
	k, err := g.store.GetSSHKeyByFingerprint(ctx, fingerprint)
	if errdefs.IsNotFound(err) {
		return grant{}, refusedUnknownKey, nil
	}
	if err != nil {
		return grant{}, refusedLookupFailed, err
	}
	if subtle.ConstantTimeCompare([]byte(k.PublicKey), []byte(pub)) != 1 {
		return grant{}, refusedKeyMismatch, nil
	}
	rt, why, err := g.runtimeNamed(ctx, user)
	if why != "" || err != nil {
		return grant{}, why, err
	}
	org, err := g.store.GetOrg(ctx, rt.OrgID)
	if err != nil {
		return grant{}, refusedLookupFailed, err
	}
	id := auth.Identity{UserID: k.UserID, SessionID: "ssh:" + k.ID}
	if k.OrgID != "" {
		if k.OrgID != rt.OrgID {
			return grant{}, refusedOutOfScope, nil
		}
		if k.APIKeyID != "" {
			// It lives no longer than the API key that registered it:
			// revoked, expired, or its holder or maker gone.
			if _, err := auth.Reverify(ctx, g.store, time.Now, "key:"+k.APIKeyID); err != nil {
				if _, public := errdefs.Public(err); public {
					return grant{}, refusedRegisteringKey, nil
				}
				return grant{}, refusedLookupFailed, err
			}
		}
		m, err := g.store.GetOrgMember(ctx, org.ID, k.UserID)
		if errdefs.IsNotFound(err) {
			return grant{}, refusedNotMember, nil
		}
		if err != nil {
			return grant{}, refusedLookupFailed, err
		}
		if m.CreatedAt.After(k.CreatedAt) {
			// The user left the org and joined again since: a key of
			// the old membership does not come back with the new one.
			return grant{}, refusedRejoined, nil
		}
		id = auth.Identity{
			UserID: k.UserID, KeyID: "ssh:" + k.ID, OrgID: k.OrgID, WorkspaceID: k.WorkspaceID,
			Role: auth.MinRole(auth.Role(k.Role), auth.Role(m.Role)),
		}
	}
	acc, ok, err := auth.OrgAccess(ctx, g.store, id, org)
	switch {
	case err != nil:
		return grant{}, refusedLookupFailed, err
	case !ok:
		return grant{}, refusedNotMember, nil
	case !acc.Role.AtLeast(auth.RoleMember):
		return grant{}, refusedRoleTooLow, nil
	case !acc.SeesWorkspace(rt.WorkspaceID):
		return grant{}, refusedNoWorkspace, nil
	}
	return grant{keyID: k.ID, fingerprint: fingerprint, userID: k.UserID, runtimeID: rt.ID}, "", nil
}

// runtimeNamed finds the runtime an SSH user name means.
func (g *Gateway) runtimeNamed(ctx context.Context, user string) (store.Runtime, refusal, error) {
	prefix, ok := RuntimePrefix(user)
	if !ok {
		return store.Runtime{}, refusedBadUserName, nil
	}
	if len(prefix) == 36 {
		rt, err := g.store.GetRuntime(ctx, prefix)
		switch {
		case errdefs.IsNotFound(err):
			return rt, refusedNoRuntime, nil
		case err != nil:
			return rt, refusedLookupFailed, err
		}
		return rt, "", nil
	}
	rts, err := g.store.FindRuntimesByIDPrefix(ctx, prefix, 2)
	switch {
	case err != nil:
		return store.Runtime{}, refusedLookupFailed, err
	case len(rts) == 0:
		return store.Runtime{}, refusedNoRuntime, nil
	case len(rts) > 1:
		return store.Runtime{}, refusedAmbiguous, nil
	}
	return rts[0], "", nil
}

// RuntimePrefix turns an SSH user name into the runtime id, or id prefix,
// it names: a whole UUID as it is (lowercased), or 12 to 32 hex characters
// with the UUID's dashes put back. ok is false for anything else.
func RuntimePrefix(user string) (prefix string, ok bool) {
	user = strings.ToLower(user)
	if len(user) == 36 {
		if _, err := uuid.Parse(user); err != nil {
			return "", false
		}
		return user, true
	}
	if len(user) < minPrefixHex || len(user) > 32 {
		return "", false
	}
	var b strings.Builder
	for i, c := range user {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b.WriteByte('-')
		}
		b.WriteRune(c)
	}
	return b.String(), true
}

// UserName is the SSH user name that names runtime id: its first 12 hex
// characters.
func UserName(runtimeID string) string {
	s := strings.ReplaceAll(runtimeID, "-", "")
	return truncate(s, minPrefixHex)
}
