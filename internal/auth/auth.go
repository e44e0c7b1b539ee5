// Package auth says who a caller is and what it may do.
//
// A caller presents either an API key or a session token from a wallet
// sign-in, as `Authorization: Bearer …`:
//
//   - An API key is "pdk_" followed by 48 hex characters (24 random bytes);
//     the prefix makes keys recognizable in logs and by secret scanners.
//     Only its SHA-256 is stored. A key belongs to a user and is scoped to
//     one org, optionally narrowed to one workspace, with a role no higher
//     than the user's own; or it is installation-wide (no org, no user):
//     the installation admin's, the bootstrap identity.
//   - A session token is a PASETO v4.local token the server sealed for a
//     user who proved a wallet address (wallet.go); it acts with the user's
//     own memberships.
//
// Access (access.go) is decided per request from the identity and the
// store's memberships as they are now, so a lowered role, a removed
// member, a revoked key or an expired one takes effect on the next
// request.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// KeyPrefix starts every API key.
const KeyPrefix = "pdk_"

const keyHexLen = 48

// Identity is the verified caller.
type Identity struct {
	// KeyID is the key presented; SessionID the session, for a session
	// token. Exactly one is set.
	KeyID     string
	SessionID string
	// UserID is the holder: "" for an installation-wide key and for org
	// keys made before there were users.
	UserID string
	// MakerUserID is, for a key, the user who made it for its holder (an
	// admin), or made the key it was made with: such a key speaks for its
	// holder in its org only, not as the user. "" for a key the holder
	// made, or the installation admin did, and for sessions.
	MakerUserID string
	// Installation marks the installation admin: every org, every role,
	// and creating orgs and granting credits besides.
	Installation bool
	// OrgID is a key's org ("" for the installation admin and for
	// sessions, which reach every org the user is a member of).
	OrgID string
	// WorkspaceID is the one workspace a key is narrowed to ("" for all).
	WorkspaceID string
	// Role is a key's ceiling; a session's is the user's role in each
	// org.
	Role Role
}

// Credential names the credential for logs, audit and the keys it makes:
// "key:<id>" or "session:<id>".
func (id Identity) Credential() string {
	if id.SessionID != "" {
		return "session:" + id.SessionID
	}
	return "key:" + id.KeyID
}

// Principal is who per-user limits count against: the user, or the key
// for keys without one.
func (id Identity) Principal() string {
	if id.UserID != "" {
		return "user:" + id.UserID
	}
	return id.Credential()
}

type ctxKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the identity on ctx.
func FromContext(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(ctxKey{}).(Identity)
	return id, ok
}

// NewKey returns a fresh plaintext key.
func NewKey() string {
	b := make([]byte, keyHexLen/2)
	_, _ = rand.Read(b) // never fails on Linux (crypto/rand panics instead)
	return KeyPrefix + hex.EncodeToString(b)
}

// WellFormed reports whether key has the shape of a paddock key.
func WellFormed(key string) bool {
	if !strings.HasPrefix(key, KeyPrefix) || len(key) != len(KeyPrefix)+keyHexLen {
		return false
	}
	_, err := hex.DecodeString(key[len(KeyPrefix):])
	return err == nil
}

// Hash is the stored form of key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Keys verifies and creates keys against a store.
type Keys struct {
	Store store.Queries
	Now   func() time.Time
}

// Create stores a new key made from spec (name, role, org, user,
// workspace, expiry, creator) and returns its plaintext, shown once. If
// plaintext is non-empty it is used instead of a random key (bootstrap
// from configuration); it must be well formed. Create checks nothing about
// who may make such a key; callers do.
func (k Keys) Create(ctx context.Context, spec store.APIKey, plaintext string) (string, store.APIKey, error) {
	if plaintext == "" {
		plaintext = NewKey()
	} else if !WellFormed(plaintext) {
		return "", store.APIKey{}, errdefs.InvalidArgument("invalid_api_key", "an API key is %q followed by %d hex characters", KeyPrefix, keyHexLen)
	}
	rec := spec
	rec.ID = uuid.NewString()
	rec.Hash = Hash(plaintext)
	rec.Prefix = plaintext[:len(KeyPrefix)+6]
	rec.CreatedAt = k.Now().UTC().Truncate(time.Microsecond)
	rec.RevokedAt = time.Time{}
	if err := k.Store.CreateAPIKey(ctx, rec); err != nil {
		return "", rec, err
	}
	return plaintext, rec, nil
}

// CreateInstallation stores a new installation-wide key: the installation
// admin's.
func (k Keys) CreateInstallation(ctx context.Context, name, plaintext string) (string, store.APIKey, error) {
	return k.Create(ctx, store.APIKey{Name: name, Role: string(RoleAdmin)}, plaintext)
}

// errBadKey and errBadSession are every refusal of a presented key or
// token: the caller learns nothing about which keys exist. Why is logged,
// with the client's address.
var (
	errBadKey     = errdefs.Unauthenticated("invalid_api_key", "the API key is malformed, unknown, expired or revoked")
	errBadSession = errdefs.Unauthenticated("invalid_session", "the session token is malformed, unknown, expired or revoked")
)

// Refusal is why a credential was refused, for the log: never the
// credential itself.
type Refusal struct {
	// Reason is malformed, unknown, expired, revoked or not_a_member (the
	// holder, or the admin who made the key, left the org).
	Reason string
	KeyID  string // the key's id when it was found
}

func (r *Refusal) Error() string { return "credentials refused: " + r.Reason }

// refuse returns the public error for a key wrapping why.
func refuse(reason, keyID string) error {
	return errBadKey.WithCause(&Refusal{Reason: reason, KeyID: keyID})
}

// Verify returns the identity a presented key carries: refused when it is
// malformed, unknown, expired or revoked, or when its holder is no longer
// a member of its org.
func (k Keys) Verify(ctx context.Context, presented string) (Identity, error) {
	if !WellFormed(presented) {
		return Identity{}, refuse("malformed", "")
	}
	h := Hash(presented)
	rec, err := k.Store.GetAPIKeyByHash(ctx, h)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return Identity{}, refuse("unknown", "")
		}
		return Identity{}, err
	}
	// The lookup was by hash; compare again in constant time for form.
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(h)) != 1 {
		return Identity{}, refuse("unknown", "")
	}
	return k.check(ctx, rec)
}

// check returns the identity a stored key carries now: refused when it is
// revoked or expired, or its holder or maker left its org.
func (k Keys) check(ctx context.Context, rec store.APIKey) (Identity, error) {
	now := k.Now()
	switch {
	case !rec.RevokedAt.IsZero():
		return Identity{}, refuse("revoked", rec.ID)
	case !rec.ExpiresAt.IsZero() && !now.Before(rec.ExpiresAt):
		return Identity{}, refuse("expired", rec.ID)
	}
	id := Identity{KeyID: rec.ID, UserID: rec.UserID, MakerUserID: rec.MakerUserID, OrgID: rec.OrgID, WorkspaceID: rec.WorkspaceID, Role: Role(rec.Role)}
	if rec.OrgID == "" {
		id.Installation = true
		return id, nil
	}
	// A key never carries more than its holder has now, nor more than
	// the admin who made it for the holder; it dies with either's
	// membership, and does not come back with a later one.
	for _, u := range []string{rec.UserID, rec.MakerUserID} {
		if u == "" {
			continue
		}
		m, err := k.Store.GetOrgMember(ctx, rec.OrgID, u)
		if err == nil && m.CreatedAt.After(rec.CreatedAt) {
			err = errdefs.ErrNotFound
		}
		if errdefs.IsNotFound(err) {
			return Identity{}, refuse("not_a_member", rec.ID)
		}
		if err != nil {
			return Identity{}, err
		}
		id.Role = MinRole(id.Role, Role(m.Role))
	}
	return id, nil
}

// Reverify returns the identity a credential named by Identity.Credential
// ("key:<id>", "session:<id>") carries now, refused exactly as presenting
// it again would be: what a credential made (a preview token, an SSH key)
// lives no longer than the credential itself.
func Reverify(ctx context.Context, q store.Queries, now func() time.Time, cred string) (Identity, error) {
	kind, id, _ := strings.Cut(cred, ":")
	switch kind {
	case "key":
		rec, err := q.GetAPIKey(ctx, id)
		if errdefs.IsNotFound(err) {
			return Identity{}, refuse("unknown", id)
		}
		if err != nil {
			return Identity{}, err
		}
		return Keys{Store: q, Now: now}.check(ctx, rec)
	case "session":
		sess, err := q.GetAuthSession(ctx, id)
		switch {
		case errdefs.IsNotFound(err):
			return Identity{}, refuseSession("unknown")
		case err != nil:
			return Identity{}, err
		case !sess.RevokedAt.IsZero():
			return Identity{}, refuseSession("revoked")
		case !now().Before(sess.ExpiresAt):
			return Identity{}, refuseSession("expired")
		}
		return Identity{SessionID: sess.ID, UserID: sess.UserID}, nil
	}
	return Identity{}, refuse("malformed", "")
}
