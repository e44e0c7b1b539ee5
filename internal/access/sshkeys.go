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

// ListSSHKeys lists a page of p's user's SSH keys: those p registered,
// for a key that speaks for its user in its org only.
func (s *Service) ListSSHKeys(ctx context.Context, p Principal, page store.Page) ([]store.SSHKey, string, error) {
	own, err := s.OwnUser(ctx, p, "SSH keys")
	if err != nil {
		return nil, "", err
	}
	ks, next, err := s.store.ListSSHKeys(ctx, p.UserID, page)
	if err != nil {
		return nil, "", err
	}
	if !own {
		// A key made for its user by someone else sees what it
		// registered, not the user's other keys.
		ks = slices.DeleteFunc(ks, func(k store.SSHKey) bool { return k.APIKeyID != p.KeyID })
	}
	return ks, next, nil
}

// SSHKeySpec is a public key to register: its authorized_keys form and
// fingerprint, as the gateway parses them, its comment, and the name asked
// for ("" takes the comment, where it would do as a name).
type SSHKeySpec struct {
	PublicKey, Fingerprint, Comment, Name string
}

// AddSSHKey registers a public key for p's user.
func (s *Service) AddSSHKey(ctx context.Context, p Principal, spec SSHKeySpec) (store.SSHKey, error) {
	if _, err := s.OwnUser(ctx, p, "SSH keys"); err != nil {
		return store.SSHKey{}, err
	}
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
	k := store.SSHKey{ID: uuid.NewString(), UserID: p.UserID, Name: name, Fingerprint: spec.Fingerprint, PublicKey: spec.PublicKey, CreatedAt: s.now()}
	if p.SessionID == "" {
		// An API key: the SSH key may do what this key may, no more.
		if !p.Role.AtLeast(auth.RoleMember) {
			return store.SSHKey{}, errdefs.PermissionDenied("role_too_low", "SSH needs the member role, and this key is a %s's", p.Role)
		}
		k.OrgID, k.WorkspaceID, k.Role, k.APIKeyID = p.OrgID, p.WorkspaceID, string(p.Role), p.KeyID
	}
	return k, s.store.CreateSSHKey(ctx, k)
}

// DeleteSSHKey deletes p's user's SSH key id (only one p registered, for a
// key that speaks for its user in its org only). Connections it opened end
// at the gateway's next check.
func (s *Service) DeleteSSHKey(ctx context.Context, p Principal, id string) error {
	own, err := s.OwnUser(ctx, p, "SSH keys")
	if err != nil {
		return err
	}
	errNotFound := errdefs.NotFound("ssh_key_not_found", "ssh key not found")
	if !isUUID(id) {
		return errNotFound
	}
	if !own {
		k, err := s.store.GetSSHKey(ctx, id)
		if errdefs.IsNotFound(err) || (err == nil && k.APIKeyID != p.KeyID) {
			return errNotFound
		}
		if err != nil {
			return err
		}
	}
	return s.store.DeleteSSHKey(ctx, p.UserID, id)
}
