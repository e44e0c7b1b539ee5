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
//   - In a browser, the web console's cookie (ConsoleCookie) carries a
//     session token instead: a wallet's session, or one opened with an API
//     key, which acts as that key (Identity.Console names the session).
//
// This package holds the credentials' forms and crypto: key format and
// hash, wallet sign-in, session and preview tokens, roles. Which key a
// presented one is, and what any credential may do, is internal/access's
// to decide, per request, from the store's memberships as they are now,
// so a lowered role, a removed member, a revoked key or an expired one
// takes effect on the next request.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
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
	// KeyID is the key presented; SessionID the session, for a wallet
	// session token. Exactly one is set: a console session opened with
	// a key acts as that key (KeyID), never as its user.
	KeyID     string
	SessionID string
	// Console is the console session the credential came through (the
	// session a console cookie names): the key's session for a console
	// sign-in with a key, the wallet session for one with a wallet; ""
	// for a bearer credential of its own.
	Console string
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

// Presented names the credential as it was presented, for what it opens
// (streams, preview tokens) to end with: the console session when there
// is one ("session:<id>", which dies with its key too), else Credential.
func (id Identity) Presented() string {
	if id.Console != "" {
		return "session:" + id.Console
	}
	return id.Credential()
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

// KeyStore is where Keys stores the keys it creates.
type KeyStore interface {
	CreateAPIKey(ctx context.Context, k store.APIKey) error
}

// Keys creates keys in a store (internal/access verifies them).
type Keys struct {
	Store KeyStore
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

// errBadSession is every refusal of a presented session token: the
// caller learns nothing about which sessions exist. Why is logged, with
// the client's address.
var errBadSession = errdefs.Unauthenticated("invalid_session", "the session token is malformed, unknown, expired or revoked")

// Refusal is why a credential was refused, for the log: never the
// credential itself.
type Refusal struct {
	// Reason is malformed, unknown, expired, revoked or not_a_member (the
	// holder, or the admin who made the key, left the org).
	Reason string
	KeyID  string // the key's id when it was found
}

func (r *Refusal) Error() string { return "credentials refused: " + r.Reason }
