// Package auth issues and verifies API keys and carries the caller's
// identity on the request context.
//
// A key is "pdk_" followed by 48 hex characters (24 random bytes); the prefix
// makes keys recognizable in logs and by secret scanners. Only the SHA-256 of
// a key is stored. Identity is what a verified key says about its holder; the
// role and org scope slot in here as they grow.
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

// Roles.
const (
	RoleAdmin = "admin" // everything in the installation
)

// Identity is the verified caller.
type Identity struct {
	KeyID string
	Role  string
	OrgID string // "" = installation-wide
}

// CanSeeOrg reports whether the caller may see orgID at all. A resource the
// caller may not see answers 404, never 403.
func (id Identity) CanSeeOrg(orgID string) bool {
	return id.OrgID == "" || id.OrgID == orgID
}

// IsInstallationAdmin reports whether the caller administers the whole
// installation (creates orgs, grants credits).
func (id Identity) IsInstallationAdmin() bool {
	return id.Role == RoleAdmin && id.OrgID == ""
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

// Create stores a new key and returns its plaintext, shown once. If
// plaintext is non-empty it is used instead of a random key (bootstrap from
// configuration); it must be well formed.
func (k Keys) Create(ctx context.Context, name, role, orgID, plaintext string) (string, store.APIKey, error) {
	if plaintext == "" {
		plaintext = NewKey()
	} else if !WellFormed(plaintext) {
		return "", store.APIKey{}, errdefs.InvalidArgument("invalid_api_key", "an API key is %q followed by %d hex characters", KeyPrefix, keyHexLen)
	}
	rec := store.APIKey{
		ID:        uuid.NewString(),
		Name:      name,
		Hash:      Hash(plaintext),
		Prefix:    plaintext[:len(KeyPrefix)+6],
		Role:      role,
		OrgID:     orgID,
		CreatedAt: k.Now().UTC(),
	}
	if err := k.Store.CreateAPIKey(ctx, rec); err != nil {
		return "", rec, err
	}
	return plaintext, rec, nil
}

// Verify returns the identity a presented key carries.
func (k Keys) Verify(ctx context.Context, presented string) (Identity, error) {
	unauth := errdefs.Unauthenticated("invalid_api_key", "the API key is missing, malformed or unknown")
	if !WellFormed(presented) {
		return Identity{}, unauth
	}
	h := Hash(presented)
	rec, err := k.Store.GetAPIKeyByHash(ctx, h)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return Identity{}, unauth
		}
		return Identity{}, err
	}
	// The lookup was by hash; compare again in constant time for form.
	if subtle.ConstantTimeCompare([]byte(rec.Hash), []byte(h)) != 1 {
		return Identity{}, unauth
	}
	return Identity{KeyID: rec.ID, Role: rec.Role, OrgID: rec.OrgID}, nil
}
