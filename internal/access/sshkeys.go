package access

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// SSH keys: a user's public keys for the SSH gateway. A key authenticates
// its user (SSHKey). One registered with an API key keeps that key's scope
// (its org, its workspace if narrowed, its role as a ceiling), so a
// narrowed or read-only key cannot make itself a wider credential; one
// registered with a sign-in session acts with the user's memberships, as
// the session does.

// UserSSHKeys are the SSH keys of one principal's user, as that
// principal may keep them: every one when it speaks as its user, only
// those it registered when it is a key someone else made for its user
// (OwnUser).
type UserSSHKeys struct {
	s   *Service
	p   Principal
	own bool
}

// SSHKeysOf is p's user's SSH keys, after the one check that p has a user
// of its own to keep them (400 no_user otherwise): a door asks it before
// it reads the rest of the request.
func (s *Service) SSHKeysOf(ctx context.Context, p Principal) (UserSSHKeys, error) {
	own, err := s.OwnUser(ctx, p, "SSH keys")
	return UserSSHKeys{s: s, p: p, own: own}, err
}

// List lists a page of the keys.
func (k UserSSHKeys) List(ctx context.Context, page store.Page) ([]store.SSHKey, string, error) {
	ks, next, err := k.s.store.ListSSHKeys(ctx, k.p.UserID, page)
	if err != nil {
		return nil, "", err
	}
	if !k.own {
		// A key made for its user by someone else sees what it
		// registered, not the user's other keys.
		ks = slices.DeleteFunc(ks, func(sk store.SSHKey) bool { return sk.APIKeyID != k.p.KeyID })
	}
	return ks, next, nil
}

// SSHKeySpec is a public key to register: its authorized_keys form and
// fingerprint, as the gateway parses them, its comment, and the name asked
// for ("" takes the comment, where it would do as a name).
type SSHKeySpec struct {
	PublicKey, Fingerprint, Comment, Name string
}

// Add registers a public key.
func (k UserSSHKeys) Add(ctx context.Context, spec SSHKeySpec) (store.SSHKey, error) {
	name := spec.Name
	if name == "" {
		name = spec.Comment
	}
	if len(name) > MaxKeyNameLen || strings.ContainsFunc(name, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		if spec.Name != "" {
			return store.SSHKey{}, errdefs.InvalidArgument("invalid_name", "an SSH key's name is at most %d characters on one line", MaxKeyNameLen)
		}
		name = "" // a comment that would not do as a name is left out
	}
	p := k.p
	sk := store.SSHKey{ID: uuid.NewString(), UserID: p.UserID, Name: name, Fingerprint: spec.Fingerprint, PublicKey: spec.PublicKey, CreatedAt: k.s.now()}
	if p.SessionID == "" {
		// An API key: the SSH key may do what this key may, no more.
		if !p.Role.AtLeast(auth.RoleMember) {
			return store.SSHKey{}, errdefs.PermissionDenied("role_too_low", "SSH needs the member role, and this key is a %s's", p.Role)
		}
		sk.OrgID, sk.WorkspaceID, sk.Role, sk.APIKeyID = p.OrgID, p.WorkspaceID, string(p.Role), p.KeyID
	}
	return sk, k.s.store.CreateSSHKey(ctx, sk)
}

// Delete deletes key id (only one the principal registered, for a key
// someone else made for its user). Connections it opened end at the
// gateway's next check.
func (k UserSSHKeys) Delete(ctx context.Context, id string) error {
	errNotFound := errdefs.NotFound("ssh_key_not_found", "ssh key not found")
	if !store.IsID(id) {
		return errNotFound
	}
	if !k.own {
		sk, err := k.s.store.GetSSHKey(ctx, id)
		if errdefs.IsNotFound(err) || (err == nil && sk.APIKeyID != k.p.KeyID) {
			return errNotFound
		}
		if err != nil {
			return err
		}
	}
	return k.s.store.DeleteSSHKey(ctx, k.p.UserID, id)
}
