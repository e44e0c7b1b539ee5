package storetest

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func normSSHKey(k store.SSHKey) store.SSHKey {
	k.CreatedAt = ts(k.CreatedAt)
	return k
}

// sshKey builds (without storing) a key of u with a unique fingerprint.
func (f *fixture) sshKey(u store.User) store.SSHKey {
	id := uuid.NewString()
	return store.SSHKey{
		ID: id, UserID: u.ID, Name: f.name("laptop"),
		Fingerprint: "SHA256:" + strings.ReplaceAll(id, "-", ""),
		PublicKey:   "ssh-ed25519 AAAA" + strings.ReplaceAll(id, "-", ""),
		CreatedAt:   f.next(),
	}
}

func testSSHKeys(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o := f.org()
	w := f.workspace(o)
	alice, bob := f.user(nil), f.user(nil)

	plain := f.sshKey(alice)
	scoped := f.sshKey(alice)
	scoped.OrgID, scoped.Role = o.ID, "member"
	narrowed := f.sshKey(alice)
	narrowed.OrgID, narrowed.WorkspaceID, narrowed.Role = o.ID, w.ID, "viewer"
	bobs := f.sshKey(bob)

	dup := f.sshKey(bob)
	dup.Fingerprint = plain.Fingerprint
	noUser := f.sshKey(alice)
	noUser.UserID = ""
	unknownUser := f.sshKey(alice)
	unknownUser.UserID = uuid.NewString()
	noRole := f.sshKey(alice)
	noRole.OrgID = o.ID
	wsOnly := f.sshKey(alice)
	wsOnly.WorkspaceID, wsOnly.Role = w.ID, "member"
	badRole := f.sshKey(alice)
	badRole.OrgID, badRole.Role = o.ID, "root"

	creates := []struct {
		name     string
		key      store.SSHKey
		wantErr  error
		wantCode string
	}{
		{"unscoped", plain, nil, ""},
		{"org scoped", scoped, nil, ""},
		{"workspace scoped", narrowed, nil, ""},
		{"another user's", bobs, nil, ""},
		{"duplicate fingerprint", dup, errdefs.ErrConflict, "ssh_key_exists"},
		{"missing user", noUser, errdefs.ErrInvalidArgument, "invalid_ssh_key"},
		{"unknown user", unknownUser, errdefs.ErrFailedPrecondition, "ssh_key_reference_missing"},
		{"org without role", noRole, errdefs.ErrInvalidArgument, "invalid_ssh_key"},
		{"workspace without org", wsOnly, errdefs.ErrInvalidArgument, "invalid_ssh_key"},
		{"unknown role", badRole, errdefs.ErrInvalidArgument, "invalid_ssh_key"},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			err := s.CreateSSHKey(ctx, tc.key)
			if tc.wantErr != nil {
				wantCode(t, err, tc.wantErr, tc.wantCode)
				return
			}
			must(t, err)
			got, err := s.GetSSHKey(ctx, tc.key.ID)
			must(t, err)
			equal(t, "GetSSHKey", got, normSSHKey(tc.key))
			got, err = s.GetSSHKeyByFingerprint(ctx, tc.key.Fingerprint)
			must(t, err)
			equal(t, "GetSSHKeyByFingerprint", got, normSSHKey(tc.key))
		})
	}

	t.Run("list", func(t *testing.T) { testListSSHKeys(t, f, alice, plain, scoped, narrowed) })

	t.Run("unknown", func(t *testing.T) {
		_, err := s.GetSSHKey(ctx, uuid.NewString())
		wantCode(t, err, errdefs.ErrNotFound, "ssh_key_not_found")
		_, err = s.GetSSHKeyByFingerprint(ctx, "SHA256:nothing")
		wantCode(t, err, errdefs.ErrNotFound, "ssh_key_not_found")
	})

	t.Run("delete", func(t *testing.T) { testDeleteSSHKey(t, f, alice, bob, plain) })
	t.Run("deleting the user deletes its keys", func(t *testing.T) { testDeleteSSHKeyUser(t, f, alice, scoped, bobs) })
}

// testListSSHKeys lists alice's keys, plain, scoped and narrowed, in one
// page and in two.
func testListSSHKeys(t *testing.T, f *fixture, alice store.User, plain, scoped, narrowed store.SSHKey) {
	s, ctx := f.s, f.ctx
	ks, next, err := s.ListSSHKeys(ctx, alice.ID, store.Page{})
	must(t, err)
	equal(t, "cursor", next, "")
	equal(t, "alice's keys", ids(ks, func(k store.SSHKey) string { return k.ID }), []string{plain.ID, scoped.ID, narrowed.ID})
	page, next, err := s.ListSSHKeys(ctx, alice.ID, store.Page{Limit: 2})
	must(t, err)
	equal(t, "first page", ids(page, func(k store.SSHKey) string { return k.ID }), []string{plain.ID, scoped.ID})
	page, next, err = s.ListSSHKeys(ctx, alice.ID, store.Page{Limit: 2, Cursor: next})
	must(t, err)
	equal(t, "second page", ids(page, func(k store.SSHKey) string { return k.ID }), []string{narrowed.ID})
	equal(t, "last cursor", next, "")
	none, _, err := s.ListSSHKeys(ctx, uuid.NewString(), store.Page{})
	must(t, err)
	equal(t, "keys of nobody", len(none), 0)
}

// testDeleteSSHKey deletes alice's plain key, which bob cannot.
func testDeleteSSHKey(t *testing.T, f *fixture, alice, bob store.User, plain store.SSHKey) {
	s, ctx := f.s, f.ctx
	// Only its user deletes a key; to anyone else it does not exist.
	wantCode(t, s.DeleteSSHKey(ctx, bob.ID, plain.ID), errdefs.ErrNotFound, "ssh_key_not_found")
	must(t, s.DeleteSSHKey(ctx, alice.ID, plain.ID))
	wantKind(t, s.DeleteSSHKey(ctx, alice.ID, plain.ID), errdefs.ErrNotFound)
	_, err := s.GetSSHKey(ctx, plain.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	// Its fingerprint is free again.
	again := plain
	again.ID, again.UserID = uuid.NewString(), bob.ID
	must(t, s.CreateSSHKey(ctx, again))
}

// testDeleteSSHKeyUser deletes alice, whose keys (scoped among them) go
// with her while bob's (bobs) stay.
func testDeleteSSHKeyUser(t *testing.T, f *fixture, alice store.User, scoped, bobs store.SSHKey) {
	s, ctx := f.s, f.ctx
	must(t, s.DeleteUser(ctx, alice.ID))
	_, err := s.GetSSHKey(ctx, scoped.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	ks, _, err := s.ListSSHKeys(ctx, alice.ID, store.Page{})
	must(t, err)
	equal(t, "keys left", len(ks), 0)
	_, err = s.GetSSHKey(ctx, bobs.ID)
	must(t, err)
}
