package access_test

import (
	"context"
	"testing"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/store"
)

// access is what p may do in acme.
func (w *world) access(p iam.Principal) auth.Access {
	w.t.Helper()
	sc, err := w.svc.Authorize(context.Background(), p, iam.Viewer, iam.Target{Org: "acme"})
	must(w.t, err)
	return sc.Access
}

// TestLastOwner: an org keeps an owner: its last one can be neither
// demoted nor removed; with two, either goes. Only an owner touches an
// owner or grants the role.
func TestLastOwner(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	owner := w.access(w.principal(w.session("owner")))
	admin := w.access(w.principal(w.session("admin")))
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"demote the last owner", func() error { _, err := w.svc.SetOrgMemberRole(ctx, owner, "owner@example.com", "admin"); return err }, "last_owner"},
		{"remove the last owner", func() error { _, err := w.svc.RemoveOrgMember(ctx, owner, "owner@example.com"); return err }, "last_owner"},
		{"an admin grants owner", func() error { _, err := w.svc.SetOrgMemberRole(ctx, admin, "member@example.com", "owner"); return err }, "owner_only"},
		{"an admin removes an owner", func() error { _, err := w.svc.RemoveOrgMember(ctx, admin, "owner@example.com"); return err }, "owner_only"},
		{"an owner makes another", func() error { _, err := w.svc.SetOrgMemberRole(ctx, owner, "admin@example.com", "owner"); return err }, ""},
		{"now the first may step down", func() error { _, err := w.svc.SetOrgMemberRole(ctx, owner, "owner@example.com", "admin"); return err }, ""},
		{"and the second is the last", func() error { _, err := w.svc.RemoveOrgMember(ctx, owner, "admin@example.com"); return err }, "last_owner"},
		{"no such role", func() error { _, err := w.svc.SetOrgMemberRole(ctx, owner, "member@example.com", "boss"); return err }, "invalid_role"},
		{"no such member", func() error { _, err := w.svc.RemoveOrgMember(ctx, owner, "outsider@example.com"); return err }, "member_not_found"},
	}
	for _, s := range steps {
		if got := code(s.do()); got != s.want {
			t.Fatalf("%s: got %q, want %q", s.name, got, s.want)
		}
	}
}

// TestDemotedAdminsInvitationsGo: an admin who is no longer one takes
// their pending invitations along; one accepted is capped by the
// inviter's role then.
func TestDemotedAdminsInvitationsGo(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	owner := w.access(w.principal(w.session("owner")))
	adminP := w.principal(w.session("admin"))
	a, b := w.user("a", 40), w.user("b", 41)
	for _, u := range []store.User{a, b} {
		if _, err := w.svc.AddOrgMember(ctx, adminP, w.access(adminP), u.Email, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	// a accepts while the inviter is an admin: an admin.
	m, err := w.svc.AcceptInvitation(ctx, w.principal(w.session("a")), mustInvitation(t, w, "a").ID)
	must(t, err)
	if m.Role != "admin" {
		t.Fatalf("accepted as %s", m.Role)
	}
	inv := mustInvitation(t, w, "b")
	_, err = w.svc.SetOrgMemberRole(ctx, owner, "admin@example.com", "member")
	must(t, err)
	if _, err := w.svc.AcceptInvitation(ctx, w.principal(w.session("b")), inv.ID); code(err) != "invitation_decided" {
		t.Fatalf("an invitation of an admin demoted since: %v", err)
	}
}

// mustInvitation is name's one pending invitation.
func mustInvitation(t *testing.T, w *world, name string) iam.Invitation {
	t.Helper()
	is, _, err := w.svc.MyInvitations(context.Background(), w.principal(w.session(name)), store.Page{})
	must(t, err)
	if len(is) != 1 {
		t.Fatalf("%s has %d invitations", name, len(is))
	}
	return is[0]
}

// TestAddOrgMember: the installation admin adds directly (and makes a
// user of a new address); an org admin invites by address only, and
// learns nothing of who has it; a member adds nobody (the route's need);
// direct adds, where allowed, add at once.
func TestAddOrgMember(t *testing.T) {
	for _, direct := range []bool{false, true} {
		w := newWorld(t, func(c *iam.Config) { c.DirectAdd = direct })
		ctx := context.Background()
		admin := w.principal(w.session("admin"))
		for _, tc := range []struct {
			name    string
			by      iam.Principal
			handle  string
			role    string
			want    string
			invites bool
		}{
			{"installation, a new address", w.installation, "new@example.com", "", "", false},
			{"admin, an unknown address", admin, "nobody@example.com", "member", "", true},
			{"admin, a user id", admin, w.users["outsider"].ID, "member", "invalid_member", false},
			{"admin, an existing member", admin, "viewer@example.com", "member", "member_exists", false},
			{"admin, owner role", admin, "someone@example.com", "owner", "owner_only", false},
			{"admin, a known address", admin, "outsider@example.com", "viewer", "", !direct},
		} {
			added, err := w.svc.AddOrgMember(ctx, tc.by, w.access(tc.by), tc.handle, tc.role)
			if code(err) != tc.want || (err == nil && (added.Invitation != nil) != tc.invites) {
				t.Errorf("direct %v, %s: got %+v, %v", direct, tc.name, added, err)
			}
		}
		w.close()
	}
}

// TestCreateKeyRules: a key's role is at most its holder's and its
// maker's; members make keys for themselves only; a narrowed key below
// admin needs its holder in the workspace.
func TestCreateKeyRules(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	member := w.principal(w.session("member"))
	admin := w.principal(w.session("admin"))
	viewerKey := w.principal(w.key("viewer", iam.KeySpec{}))
	for _, tc := range []struct {
		name     string
		by       iam.Principal
		spec     iam.KeySpec
		want     string
		wantRole string
	}{
		{"a member, its own", member, iam.KeySpec{}, "", "member"},
		{"a member, above itself", member, iam.KeySpec{Role: "admin"}, "role_too_high", ""},
		{"a member, for another", member, iam.KeySpec{Member: "viewer@example.com"}, "role_too_low", ""},
		{"a member, for nobody", member, iam.KeySpec{Member: "ghost@example.com"}, "role_too_low", ""},
		{"an admin, for a viewer", admin, iam.KeySpec{Member: "viewer@example.com"}, "", "viewer"},
		{"an admin, for a viewer, as admin", admin, iam.KeySpec{Member: "viewer@example.com", Role: "admin"}, "role_too_high", ""},
		{"an admin, for nobody", admin, iam.KeySpec{Member: "ghost@example.com"}, "member_not_found", ""},
		{"a viewer's key makes a viewer's", viewerKey, iam.KeySpec{}, "", "viewer"},
		{"narrowed, holder in it", member, iam.KeySpec{Workspace: "dev"}, "", "member"},
		{"narrowed, holder not in it", admin, iam.KeySpec{Member: "loner@example.com", Workspace: "dev"}, "not_a_workspace_member", ""},
		{"narrowed, out of sight", member, iam.KeySpec{Workspace: "ops"}, "workspace_not_found", ""},
		{"expiry both ways", member, iam.KeySpec{ExpiresIn: "1h", ExpiresAt: new(w.acme.CreatedAt)}, "invalid_expiry", ""},
		{"expiry past", member, iam.KeySpec{ExpiresIn: "-1h"}, "invalid_expiry", ""},
		{"installation, no holder", w.installation, iam.KeySpec{}, "member_required", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acc := w.access(tc.by)
			_, k, err := w.svc.CreateKey(ctx, tc.by, acc, tc.spec)
			if code(err) != tc.want || (err == nil && k.Role != tc.wantRole) {
				t.Fatalf("got %q role %q, want %q role %q", code(err), k.Role, tc.want, tc.wantRole)
			}
		})
	}
}

// TestUsers: users are made with an address, found by id, email or
// wallet, changed (a new wallet says so) and deleted.
func TestUsers(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	for _, tc := range []struct {
		spec iam.UserSpec
		want string
	}{
		{iam.UserSpec{Name: "no address"}, "missing_identity"},
		{iam.UserSpec{Email: "not an email"}, "invalid_email"},
		{iam.UserSpec{Wallet: "0x12"}, "invalid_wallet_address"},
		{iam.UserSpec{Email: "a@example.com", Name: "two\nlines"}, "invalid_name"},
		{iam.UserSpec{Email: "Zed@Example.com", Name: "Zed"}, ""},
	} {
		if _, err := w.svc.CreateUser(ctx, tc.spec); code(err) != tc.want {
			t.Errorf("%+v: got %v, want %q", tc.spec, err, tc.want)
		}
	}
	u, err := w.svc.UserByHandle(ctx, "zed@example.com", false)
	must(t, err)
	if u.Email != "zed@example.com" {
		t.Fatalf("stored %q", u.Email)
	}
	addr := w.wallets["outsider"].addr
	for _, h := range []string{w.users["outsider"].ID, "outsider@example.com", addr} {
		if got, err := w.svc.UserByHandle(ctx, h, false); err != nil || got.ID != w.users["outsider"].ID {
			t.Errorf("%s: %+v %v", h, got, err)
		}
	}
	if _, err := w.svc.UserByHandle(ctx, "nobody", false); code(err) != "invalid_member" {
		t.Errorf("a bare name: %v", err)
	}
	empty, name := "", "Z"
	if _, _, err := w.svc.UpdateUser(ctx, u.ID, iam.UserChange{Email: &empty, Name: &empty}); code(err) != "missing_identity" {
		t.Errorf("clearing the last address: %v", err)
	}
	_, changed, err := w.svc.UpdateUser(ctx, u.ID, iam.UserChange{Name: &name})
	if err != nil || changed {
		t.Errorf("a new name: %v, wallet changed %v", err, changed)
	}
	fresh := "0x0000000000000000000000000000000000000001"
	if _, changed, err = w.svc.UpdateUser(ctx, u.ID, iam.UserChange{Wallet: &fresh}); err != nil || !changed {
		t.Errorf("a new wallet: %v, wallet changed %v", err, changed)
	}
	if _, err := w.svc.DeleteUser(ctx, "zed@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.UserByHandle(ctx, u.ID, false); code(err) != "user_not_found" {
		t.Errorf("deleted: %v", err)
	}
}

// TestSSHKeyScope: an SSH key registered with an API key keeps its scope
// (org, workspace, role); one registered with a session is the user's; a
// viewer's key registers none; the installation admin has no user.
func TestSSHKeyScope(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	narrowed := w.principal(w.key("member", iam.KeySpec{Workspace: "dev"}))
	k := w.sshKey(narrowed)
	if k.OrgID != w.acme.ID || k.WorkspaceID != w.dev.ID || k.Role != "member" || k.APIKeyID != narrowed.KeyID {
		t.Fatalf("registered with a narrowed key: %+v", k)
	}
	p, _, err := w.svc.SSHKey(ctx, k.Fingerprint, k.PublicKey)
	must(t, err)
	if p.WorkspaceID != w.dev.ID || p.OrgID != w.acme.ID {
		t.Fatalf("principal %+v", p)
	}
	if _, _, err := w.svc.SSHKey(ctx, k.Fingerprint, "ssh-ed25519 other"); reason(err) != "key_mismatch" {
		t.Fatalf("another public key under the fingerprint: %v", err)
	}
	s := w.sshKey(w.principal(w.session("member")))
	if s.OrgID != "" || s.Role != "" {
		t.Fatalf("registered with a session: %+v", s)
	}
	for _, tc := range []struct {
		name string
		p    iam.Principal
		want string
	}{
		{"a viewer's key", w.principal(w.key("viewer", iam.KeySpec{})), "role_too_low"},
		{"the installation admin", w.installation, "no_user"},
	} {
		keys, err := w.svc.SSHKeysOf(ctx, tc.p)
		if err == nil {
			_, err = keys.Add(ctx, iam.SSHKeySpec{PublicKey: "ssh-ed25519 x", Fingerprint: "SHA256:x"})
		}
		if code(err) != tc.want {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// A key someone else made for the user sees and deletes only what it
	// registered.
	made := w.principal(w.key("admin", iam.KeySpec{Member: "member@example.com"}))
	mk := w.sshKey(made)
	ks, _, err := w.sshKeys(made).List(ctx, store.Page{})
	must(t, err)
	if len(ks) != 1 || ks[0].ID != mk.ID {
		t.Fatalf("a key made for the user lists %d keys", len(ks))
	}
	if err := w.sshKeys(made).Delete(ctx, s.ID); code(err) != "ssh_key_not_found" {
		t.Fatalf("deleting the user's own key with one made for them: %v", err)
	}
}

// TestSSHKeyByID: a connection's key, checked again by its id, is the
// principal SSHKey gives; once deleted it is refused as unknown_key, and
// once its registering key is revoked as that.
func TestSSHKeyByID(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	session := w.principal(w.session("member"))
	keyed := w.principal(w.key("member", iam.KeySpec{}))
	for _, k := range []store.SSHKey{w.sshKey(session), w.sshKey(keyed)} {
		want, _, err := w.svc.SSHKey(ctx, k.Fingerprint, k.PublicKey)
		must(t, err)
		got, gk, err := w.svc.SSHKeyByID(ctx, k.ID)
		if err != nil || got != want || gk.ID != k.ID {
			t.Fatalf("SSHKeyByID(%s) = %+v, %v; want %+v", k.ID, got, err, want)
		}
	}
	k := w.sshKey(session)
	must(t, w.sshKeys(session).Delete(ctx, k.ID))
	if _, _, err := w.svc.SSHKeyByID(ctx, k.ID); reason(err) != "unknown_key" {
		t.Fatalf("a deleted key: %v; want unknown_key", err)
	}
	k = w.sshKey(keyed)
	sc, err := w.svc.Authorize(ctx, keyed, iam.Member, iam.Target{Org: "acme"})
	must(t, err)
	must(t, w.svc.RevokeKey(ctx, keyed, sc.Access, keyed.KeyID))
	if _, _, err := w.svc.SSHKeyByID(ctx, k.ID); reason(err) != "registering_key_invalid" {
		t.Fatalf("a key registered with a revoked key: %v; want registering_key_invalid", err)
	}
}

// TestInvitationAcceptance: the role an invitation gives is capped by its
// inviter's role when it is accepted; an inviter who is no longer an
// admin, however that came about, takes the invitation along; a key
// narrowed to a workspace sees no invitations of its user, nor accepts
// one.
func TestInvitationAcceptance(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	owner := w.access(w.principal(w.session("owner")))
	otto := w.user("otto", 40)
	w.join(w.acme, otto, "owner")
	ottoP := w.principal(w.session("otto"))
	a, b := w.user("a", 41), w.user("b", 42)
	_, err := w.svc.AddOrgMember(ctx, ottoP, w.access(ottoP), a.Email, "owner")
	must(t, err)
	adminP := w.principal(w.session("admin"))
	_, err = w.svc.AddOrgMember(ctx, adminP, w.access(adminP), b.Email, "member")
	must(t, err)

	// An owner now an admin gives an admin.
	_, err = w.svc.SetOrgMemberRole(ctx, owner, otto.Email, "admin")
	must(t, err)
	m, err := w.svc.AcceptInvitation(ctx, w.principal(w.session("a")), mustInvitation(t, w, "a").ID)
	if err != nil || m.Role != "admin" {
		t.Fatalf("invited as owner by an owner now an admin: %+v, %v", m, err)
	}

	// An admin made a viewer behind the service's back: the invitation is
	// void, and leaves the pending list.
	inv := mustInvitation(t, w, "b")
	must(t, w.st.SetOrgMemberRole(ctx, w.acme.ID, w.users["admin"].ID, "viewer"))
	if _, err := w.svc.AcceptInvitation(ctx, w.principal(w.session("b")), inv.ID); code(err) != "invitation_void" {
		t.Fatalf("an invitation of an inviter no longer an admin: %v", err)
	}
	if _, err := w.st.GetOrgMember(ctx, w.acme.ID, b.ID); err == nil {
		t.Fatal("b joined on a void invitation")
	}
	if is, _, err := w.svc.ListOrgInvitations(ctx, w.acme.ID, store.Page{}); err != nil || len(is) != 0 {
		t.Fatalf("pending after a void acceptance: %+v, %v", is, err)
	}
}

// TestNarrowedKeySeesNoInvitations: a key narrowed to a workspace speaks
// for its user there only: it neither lists nor accepts the user's
// invitations, which the user's session and org-wide key see.
func TestNarrowedKeySeesNoInvitations(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	oa := w.user("oa", 40)
	w.join(w.other, oa, "admin")
	oaP := w.principal(w.session("oa"))
	sc, err := w.svc.Authorize(ctx, oaP, iam.Admin, iam.Target{Org: "other"})
	must(t, err)
	_, err = w.svc.AddOrgMember(ctx, oaP, sc.Access, "member@example.com", "member")
	must(t, err)
	narrowed := w.principal(w.key("member", iam.KeySpec{Workspace: "dev"}))
	for name, p := range map[string]iam.Principal{"session": w.principal(w.session("member")), "org-wide key": w.principal(w.key("member", iam.KeySpec{})), "narrowed key": narrowed} {
		is, _, err := w.svc.MyInvitations(ctx, p, store.Page{})
		if want := map[bool]int{true: 0, false: 1}[name == "narrowed key"]; err != nil || len(is) != want {
			t.Errorf("%s: %d invitations (%v), want %d", name, len(is), err, want)
		}
	}
	inv := mustInvitation(t, w, "member")
	if _, err := w.svc.AcceptInvitation(ctx, narrowed, inv.ID); code(err) != "invitation_not_found" {
		t.Fatalf("a narrowed key accepts: %v", err)
	}
}

// TestListKeys: below admin, a principal lists its own keys of the org;
// an admin lists every one.
func TestListKeys(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	holders := map[string]string{}
	for _, name := range []string{"admin", "member", "loner", "viewer"} {
		holders[w.principal(w.key(name, iam.KeySpec{})).KeyID] = name
	}
	for _, tc := range []struct {
		name string
		want int
	}{{"member", 1}, {"viewer", 1}, {"admin", 4}} {
		p := w.principal(w.session(tc.name))
		ks, _, err := w.svc.ListKeys(ctx, p, w.access(p), store.Page{})
		must(t, err)
		for _, k := range ks {
			if tc.want == 1 && holders[k.ID] != tc.name {
				t.Errorf("%s lists %s's key", tc.name, holders[k.ID])
			}
		}
		if len(ks) != tc.want {
			t.Errorf("%s lists %d keys, want %d", tc.name, len(ks), tc.want)
		}
	}
}

// TestNarrowedKeyAddsNoOrgMember: where direct adds are allowed, an
// admin adds a user of the installation to a workspace, and so to the org;
// through a key narrowed to a workspace it may not, as that would reach
// past the workspace.
func TestNarrowedKeyAddsNoOrgMember(t *testing.T) {
	w := newWorld(t, func(c *iam.Config) { c.DirectAdd = true })
	defer w.close()
	ctx := context.Background()
	narrowed := w.principal(w.key("admin", iam.KeySpec{Workspace: "ops"}))
	sc, err := w.svc.Authorize(ctx, narrowed, iam.Admin, iam.Target{Org: "acme", Workspace: "ops"})
	must(t, err)
	if _, err := w.svc.WorkspaceJoiner(ctx, narrowed, sc.Access, "outsider@example.com"); code(err) != "key_narrowed_to_workspace" {
		t.Fatalf("a narrowed key adds an org member: %v", err)
	}
	if _, err := w.st.GetOrgMember(ctx, w.acme.ID, w.users["outsider"].ID); err == nil {
		t.Fatal("the outsider joined the org")
	}
	admin := w.principal(w.session("admin"))
	u, err := w.svc.WorkspaceJoiner(ctx, admin, w.access(admin), "outsider@example.com")
	if err != nil || u.ID != w.users["outsider"].ID {
		t.Fatalf("an admin's session: %+v, %v", u, err)
	}
	if _, err := w.st.GetOrgMember(ctx, w.acme.ID, u.ID); err != nil {
		t.Fatalf("the outsider is not a member after a direct add: %v", err)
	}
}
