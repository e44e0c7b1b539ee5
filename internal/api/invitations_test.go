package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/server/servertest"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/testenv"
	"github.com/paddockhq/paddock/pkg/client"
)

// invitees is the world of the invitation tests: org acme with an owner,
// an admin, a member and a viewer, each with a key; org other with bob, an
// existing user of another org, and his key there.
type invitees struct {
	env                     *servertest.Env
	clock                   *testenv.Clock
	owner, admin, mem, view client.CreatedKey
	bob                     client.CreatedKey
}

func newInvitees(t *testing.T, opts servertest.Options) invitees {
	t.Helper()
	clock := testenv.NewClock(time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC))
	opts.Now = clock.Now
	env := servertest.New(t, opts)
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "acme"})
	env.Must(t, 201, "POST", "/api/v1/orgs", client.CreateOrgRequest{Name: "other"})
	env.Must(t, 201, "POST", "/api/v1/org/acme/ws", client.CreateWorkspaceRequest{Name: "dev"})
	w := invitees{env: env, clock: clock}
	for _, m := range []struct {
		org, who, role string
		key            *client.CreatedKey
	}{
		{"acme", "olga@example.com", "owner", &w.owner},
		{"acme", "ann@example.com", "admin", &w.admin},
		{"acme", "mel@example.com", "member", &w.mem},
		{"acme", "vic@example.com", "viewer", &w.view},
		{"other", "bob@example.com", "member", &w.bob},
	} {
		// The installation admin adds directly.
		env.Must(t, 201, "POST", "/api/v1/org/"+m.org+"/members", client.AddOrgMemberRequest{Member: m.who, Role: m.role})
		*m.key = keyFor2(t, env, m.org, client.CreateKeyRequest{Member: m.who})
	}
	return w
}

// invite has key invite member to acme with role, and returns the
// invitation.
func (w invitees) invite(t *testing.T, key, member, role string) client.Invitation {
	t.Helper()
	var inv client.Invitation
	w.env.MustKey(t, key, 202, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: member, Role: role}).Decode(t, &inv)
	if inv.ID == "" || inv.State != client.InvitationPending || inv.Org != "acme" || inv.Invitee() != strings.ToLower(member) {
		t.Fatalf("invitation %+v", inv)
	}
	return inv
}

// mine lists key's pending invitations.
func (w invitees) mine(t *testing.T, key string) []client.Invitation {
	t.Helper()
	var l client.List[client.Invitation]
	w.env.MustKey(t, key, 200, "GET", "/api/v1/invitations", nil).Decode(t, &l)
	return l.Items
}

// pending lists acme's pending invitations.
func (w invitees) pending(t *testing.T) []client.Invitation {
	t.Helper()
	var l client.List[client.Invitation]
	w.env.MustKey(t, w.owner.Key, 200, "GET", "/api/v1/org/acme/invitations", nil).Decode(t, &l)
	return l.Items
}

// roleIn is the role of who in acme, "" when not a member.
func (w invitees) roleIn(t *testing.T, who string) string {
	t.Helper()
	r := w.env.Do(t, "GET", "/api/v1/org/acme/members", nil)
	var l client.List[client.OrgMember]
	r.Decode(t, &l)
	for _, m := range l.Items {
		if m.Member == who {
			return m.Role
		}
	}
	return ""
}

func accept(w invitees, t *testing.T, key, id string) servertest.Response {
	t.Helper()
	return w.env.DoKey(t, key, "POST", "/api/v1/invitations/"+id+"/accept", nil)
}

// TestInviteMakesNoUserAndAnswersAlike: an org admin's add of an address
// no user has and of an existing user of another org answer the same 202
// invitation; no user is made, nobody joins; a workspace add of either is
// the same 404.
func TestInviteMakesNoUserAndAnswersAlike(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	shape := func(r servertest.Response, address string) map[string]any {
		t.Helper()
		if r.Status != 202 {
			t.Fatalf("invite %s: %d %s", address, r.Status, r.Body)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatal(err)
		}
		if m["email"] != address {
			t.Fatalf("invitation to %s: %s", address, r.Body)
		}
		delete(m, "id")
		m["email"] = "<address>"
		return m
	}
	known := shape(env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "bob@example.com"}), "bob@example.com")
	unknown := shape(env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "nobody@example.com"}), "nobody@example.com")
	kb, _ := json.Marshal(known)
	ub, _ := json.Marshal(unknown)
	if string(kb) != string(ub) {
		t.Fatalf("answers differ:\nknown   %s\nunknown %s", kb, ub)
	}
	wantError(t, env.Do(t, "GET", "/api/v1/users/nobody@example.com", nil), 404, "user_not_found")
	var users client.List[client.User]
	env.Must(t, 200, "GET", "/api/v1/users", nil).Decode(t, &users)
	if len(users.Items) != 5 {
		t.Fatalf("%d users, want the 5 the installation admin made: %+v", len(users.Items), users.Items)
	}
	if r := w.roleIn(t, "bob@example.com"); r != "" {
		t.Fatalf("bob joined acme as %s without accepting", r)
	}
	if got := w.pending(t); len(got) != 2 {
		t.Fatalf("pending: %+v", got)
	}

	// A workspace add of someone not in the org: the same answer for both,
	// and still no user.
	kr := env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "bob@example.com"})
	ur := env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "nobody@example.com"})
	wantError(t, kr, 404, "member_not_found")
	wantError(t, ur, 404, "member_not_found")
	var ke, ue client.Error
	kr.Decode(t, &ke)
	ur.Decode(t, &ue)
	if strings.ReplaceAll(ke.Message, "bob@", "X@") != strings.ReplaceAll(ue.Message, "nobody@", "X@") {
		t.Fatalf("workspace answers differ: %q, %q", ke.Message, ue.Message)
	}
	wantError(t, env.Do(t, "GET", "/api/v1/users/nobody@example.com", nil), 404, "user_not_found")

	// Twice, and a member: refused. By user id: refused, as before.
	wantError(t, env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "NOBODY@example.com"}), 409, "already_invited")
	wantError(t, env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "mel@example.com"}), 409, "member_exists")
	wantError(t, env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: w.bob.UserID}), 400, "invalid_member")
	wantError(t, env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "bob"}), 400, "invalid_member")
}

// TestInvitationAccepted: the invitee lists the invitation and accepts it,
// and is a member with the invited role; the org's list no longer has it.
// An address no user had is accepted once the installation admin makes
// the user, here with a wallet sign-in.
func TestInvitationAccepted(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	inv := w.invite(t, w.admin.Key, "bob@example.com", "admin")
	if inv.Inviter != "ann@example.com" || inv.Role != "admin" || !inv.ExpiresAt.Equal(inv.CreatedAt.Add(api.DefaultInvitationTTL)) {
		t.Fatalf("invitation %+v", inv)
	}
	if got := w.mine(t, w.bob.Key); len(got) != 1 || got[0].ID != inv.ID || got[0].Org != "acme" {
		t.Fatalf("bob's invitations: %+v", got)
	}
	var m client.OrgMember
	r := accept(w, t, w.bob.Key, inv.ID)
	if r.Status != 200 {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	r.Decode(t, &m)
	if m.Role != "admin" || m.UserID != w.bob.UserID || w.roleIn(t, "bob@example.com") != "admin" {
		t.Fatalf("bob after accepting: %+v, role %q", m, w.roleIn(t, "bob@example.com"))
	}
	if got := w.mine(t, w.bob.Key); len(got) != 0 {
		t.Fatalf("bob's invitations after accepting: %+v", got)
	}
	if got := w.pending(t); len(got) != 0 {
		t.Fatalf("acme's pending after accepting: %+v", got)
	}
	wantError(t, accept(w, t, w.bob.Key, inv.ID), 409, "invitation_decided")

	// A wallet no user has: pending until the installation admin makes the
	// user, who signs in and accepts.
	addr, sign := mustWallet(t, otherKey)
	winv := w.invite(t, w.admin.Key, addr, "viewer")
	env.Must(t, 201, "POST", "/api/v1/users", client.CreateUserRequest{Wallet: addr})
	var ch client.AuthChallenge
	env.Must(t, 201, "POST", "/api/auth/challenge", client.AuthChallengeRequest{Address: addr}).Decode(t, &ch)
	var sess client.AuthSession
	env.MustKey(t, "", 201, "POST", "/api/auth/session", client.AuthSessionRequest{Nonce: ch.Nonce, Signature: sign(ch.Message)}).Decode(t, &sess)
	if got := w.mine(t, sess.Token); len(got) != 1 || got[0].ID != winv.ID {
		t.Fatalf("the new user's invitations: %+v", got)
	}
	env.MustKey(t, sess.Token, 200, "POST", "/api/v1/invitations/"+winv.ID+"/accept", nil)
	if r := w.roleIn(t, strings.ToLower(addr)); r != "viewer" {
		t.Fatalf("the new user's role: %q", r)
	}
	env.MustKey(t, sess.Token, 200, "GET", "/api/v1/org/acme/members", nil)
}

// TestInvitationDeclinedRevokedExpired: each ends the invitation, and an
// accept after it is refused; nobody joins.
func TestInvitationDeclinedRevokedExpired(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env

	t.Run("declined", func(t *testing.T) {
		inv := w.invite(t, w.admin.Key, "bob@example.com", "member")
		var d client.Invitation
		env.MustKey(t, w.bob.Key, 200, "POST", "/api/v1/invitations/"+inv.ID+"/decline", nil).Decode(t, &d)
		if d.State != client.InvitationDeclined || d.DecidedAt == nil {
			t.Fatalf("declined: %+v", d)
		}
		wantError(t, accept(w, t, w.bob.Key, inv.ID), 409, "invitation_decided")
		if w.roleIn(t, "bob@example.com") != "" || len(w.pending(t)) != 0 {
			t.Fatal("a declined invitation made a member, or stayed pending")
		}
	})
	t.Run("revoked", func(t *testing.T) {
		inv := w.invite(t, w.admin.Key, "bob@example.com", "member")
		env.MustKey(t, w.admin.Key, 204, "DELETE", "/api/v1/org/acme/invitations/"+inv.ID, nil)
		wantError(t, accept(w, t, w.bob.Key, inv.ID), 409, "invitation_decided")
		wantError(t, env.DoKey(t, w.admin.Key, "DELETE", "/api/v1/org/acme/invitations/"+inv.ID, nil), 409, "invitation_decided")
		if len(w.mine(t, w.bob.Key)) != 0 || w.roleIn(t, "bob@example.com") != "" {
			t.Fatal("a revoked invitation is still offered, or made a member")
		}
	})
	t.Run("expired", func(t *testing.T) {
		inv := w.invite(t, w.admin.Key, "bob@example.com", "member")
		w.clock.Advance(api.DefaultInvitationTTL)
		wantError(t, accept(w, t, w.bob.Key, inv.ID), 409, "invitation_expired")
		wantError(t, env.DoKey(t, w.bob.Key, "POST", "/api/v1/invitations/"+inv.ID+"/decline", nil), 409, "invitation_expired")
		wantError(t, env.DoKey(t, w.admin.Key, "DELETE", "/api/v1/org/acme/invitations/"+inv.ID, nil), 409, "invitation_expired")
		if len(w.mine(t, w.bob.Key)) != 0 || len(w.pending(t)) != 0 || w.roleIn(t, "bob@example.com") != "" {
			t.Fatal("an expired invitation is still offered, or made a member")
		}
		// A new one replaces it.
		again := w.invite(t, w.admin.Key, "bob@example.com", "member")
		env.MustKey(t, w.bob.Key, 200, "POST", "/api/v1/invitations/"+again.ID+"/accept", nil)
	})
}

// TestInvitationIsItsInviteesOnly: another user, a narrowed key and a
// credential without a user neither see nor decide someone's invitation:
// 404 as for one that does not exist. Another org's admin cannot revoke it.
func TestInvitationIsItsInviteesOnly(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	inv := w.invite(t, w.admin.Key, "carl@example.com", "member")
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "carl@example.com", Role: "member"})
	carl := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "carl@example.com"})

	for _, key := range []string{w.bob.Key, w.mem.Key, w.admin.Key} {
		if got := w.mine(t, key); len(got) != 0 {
			t.Fatalf("someone else sees carl's invitation: %+v", got)
		}
		wantError(t, accept(w, t, key, inv.ID), 404, "invitation_not_found")
		wantError(t, env.DoKey(t, key, "POST", "/api/v1/invitations/"+inv.ID+"/decline", nil), 404, "invitation_not_found")
	}
	wantError(t, accept(w, t, w.bob.Key, "00000000-0000-0000-0000-000000000000"), 404, "invitation_not_found")
	wantError(t, env.DoKey(t, carl.Key, "DELETE", "/api/v1/org/acme/invitations/"+inv.ID, nil), 404, "org_not_found")
	wantError(t, env.Do(t, "GET", "/api/v1/invitations", nil), 400, "no_user")

	// A key narrowed to a workspace speaks for its user there only.
	env.Must(t, 201, "POST", "/api/v1/org/other/ws", client.CreateWorkspaceRequest{Name: "lab"})
	env.Must(t, 201, "POST", "/api/v1/org/other/ws/lab/members", client.AddMemberRequest{Member: "carl@example.com"})
	narrowed := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "carl@example.com", Workspace: "lab"})
	if got := w.mine(t, narrowed.Key); len(got) != 0 {
		t.Fatalf("a narrowed key sees invitations: %+v", got)
	}
	wantError(t, accept(w, t, narrowed.Key, inv.ID), 404, "invitation_not_found")

	// Carl himself.
	if got := w.mine(t, carl.Key); len(got) != 1 || got[0].ID != inv.ID {
		t.Fatalf("carl's invitations: %+v", got)
	}
	env.MustKey(t, carl.Key, 200, "POST", "/api/v1/invitations/"+inv.ID+"/accept", nil)
}

// TestInviteNeedsAnAdmin: a viewer and a member cannot invite, list or
// revoke invitations (403); an admin cannot invite as owner.
func TestInviteNeedsAnAdmin(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	inv := w.invite(t, w.admin.Key, "bob@example.com", "member")
	for _, key := range []string{w.view.Key, w.mem.Key} {
		wantError(t, env.DoKey(t, key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "zed@example.com"}), 403, "role_too_low")
		wantError(t, env.DoKey(t, key, "GET", "/api/v1/org/acme/invitations", nil), 403, "role_too_low")
		wantError(t, env.DoKey(t, key, "DELETE", "/api/v1/org/acme/invitations/"+inv.ID, nil), 403, "role_too_low")
	}
	wantError(t, env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "zed@example.com", Role: "owner"}), 403, "owner_only")
	if got := w.pending(t); len(got) != 1 {
		t.Fatalf("pending: %+v", got)
	}
}

// TestInvitationRoleCapAndVoid: the role is capped by the inviter's role
// at acceptance; an inviter who is no longer an admin, or has left, takes
// their invitations along.
func TestInvitationRoleCapAndVoid(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env

	t.Run("capped by the inviter's role now", func(t *testing.T) {
		env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "otto@example.com", Role: "owner"})
		otto := keyFor(t, env, client.CreateKeyRequest{Member: "otto@example.com"})
		inv := w.invite(t, otto.Key, "bob@example.com", "owner")
		env.MustKey(t, w.owner.Key, 200, "PATCH", "/api/v1/org/acme/members/otto@example.com", client.SetRoleRequest{Role: "admin"})
		var m client.OrgMember
		env.MustKey(t, w.bob.Key, 200, "POST", "/api/v1/invitations/"+inv.ID+"/accept", nil).Decode(t, &m)
		if m.Role != "admin" || w.roleIn(t, "bob@example.com") != "admin" {
			t.Fatalf("bob invited as owner by an owner now an admin: %+v", m)
		}
	})
	t.Run("an inviter no longer an admin", func(t *testing.T) {
		inv := w.invite(t, w.admin.Key, "dan@example.com", "member")
		inv2 := w.invite(t, w.admin.Key, "eve@example.com", "member")
		env.MustKey(t, w.owner.Key, 200, "PATCH", "/api/v1/org/acme/members/ann@example.com", client.SetRoleRequest{Role: "member"})
		for _, who := range []string{"dan@example.com", "eve@example.com"} {
			env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: who})
		}
		dan := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "dan@example.com"})
		eve := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "eve@example.com"})
		wantError(t, accept(w, t, dan.Key, inv.ID), 409, "invitation_decided")
		wantError(t, env.DoKey(t, eve.Key, "POST", "/api/v1/invitations/"+inv2.ID+"/decline", nil), 409, "invitation_decided")
		if got := w.pending(t); len(got) != 0 {
			t.Fatalf("pending after the inviter's demotion: %+v", got)
		}
		// Made admin again, then removed: the same.
		env.MustKey(t, w.owner.Key, 200, "PATCH", "/api/v1/org/acme/members/ann@example.com", client.SetRoleRequest{Role: "admin"})
		ann := keyFor(t, env, client.CreateKeyRequest{Member: "ann@example.com"})
		inv3 := w.invite(t, ann.Key, "dan@example.com", "member")
		env.MustKey(t, w.owner.Key, 204, "DELETE", "/api/v1/org/acme/members/ann@example.com", nil)
		wantError(t, accept(w, t, dan.Key, inv3.ID), 409, "invitation_decided")
		if w.roleIn(t, "dan@example.com") != "" {
			t.Fatal("dan joined on a void invitation")
		}
	})
	t.Run("void when the store changed under it", func(t *testing.T) {
		env.Must(t, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "ina@example.com", Role: "admin"})
		ina := keyFor(t, env, client.CreateKeyRequest{Member: "ina@example.com"})
		inv := w.invite(t, ina.Key, "fay@example.com", "member")
		env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "fay@example.com"})
		fay := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "fay@example.com"})
		var acme client.Org
		env.Must(t, 200, "GET", "/api/v1/org/acme", nil).Decode(t, &acme)
		// Another way than this API's handlers (they revoke too).
		if err := env.Store.SetOrgMemberRole(t.Context(), acme.ID, ina.UserID, "viewer"); err != nil {
			t.Fatal(err)
		}
		wantError(t, accept(w, t, fay.Key, inv.ID), 409, "invitation_void")
		if w.roleIn(t, "fay@example.com") != "" || len(w.pending(t)) != 0 {
			t.Fatal("a void invitation made a member, or stayed pending")
		}
	})
}

// TestDirectAdd: where the installation allows it, an org admin adds an
// existing user at once (201); an address no user has is still an
// invitation, and still makes no user.
func TestDirectAdd(t *testing.T) {
	w := newInvitees(t, servertest.Options{Members: config.Members{DirectAdd: true}})
	env := w.env
	var m client.OrgMember
	env.MustKey(t, w.admin.Key, 201, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "bob@example.com", Role: "member"}).Decode(t, &m)
	if m.UserID != w.bob.UserID || w.roleIn(t, "bob@example.com") != "member" {
		t.Fatalf("direct add: %+v", m)
	}
	w.invite(t, w.admin.Key, "nobody@example.com", "member")
	wantError(t, env.Do(t, "GET", "/api/v1/users/nobody@example.com", nil), 404, "user_not_found")

	// A workspace add of an existing user joins them to the org too.
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "cy@example.com"})
	env.MustKey(t, w.admin.Key, 201, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "cy@example.com"})
	if w.roleIn(t, "cy@example.com") != "member" {
		t.Fatal("cy did not join acme through its workspace")
	}
	wantError(t, env.DoKey(t, w.admin.Key, "POST", "/api/v1/org/acme/ws/dev/members", client.AddMemberRequest{Member: "none@example.com"}), 404, "member_not_found")
	wantError(t, env.Do(t, "GET", "/api/v1/users/none@example.com", nil), 404, "user_not_found")
}

// TestInvitationNotByAKeyMadeForTheInvitee: a key an admin of another org
// made for the invitee speaks for them in that org only: it neither sees
// nor decides their invitations (404, as for a missing one), nor does a
// key made with it; the invitee's own key does.
func TestInvitationNotByAKeyMadeForTheInvitee(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	inv := w.invite(t, w.admin.Key, "bob@example.com", "admin")
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "oz@example.com", Role: "admin"})
	oz := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "oz@example.com"})
	var forBob, made client.CreatedKey
	env.MustKey(t, oz.Key, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Member: "bob@example.com"}).Decode(t, &forBob)
	env.MustKey(t, forBob.Key, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Name: "mine now"}).Decode(t, &made)
	for _, key := range []string{forBob.Key, made.Key} {
		if got := w.mine(t, key); len(got) != 0 {
			t.Fatalf("a key made for bob by another sees his invitations: %+v", got)
		}
		wantError(t, accept(w, t, key, inv.ID), 404, "invitation_not_found")
		wantError(t, env.DoKey(t, key, "POST", "/api/v1/invitations/"+inv.ID+"/decline", nil), 404, "invitation_not_found")
	}
	if r := w.roleIn(t, "bob@example.com"); r != "" {
		t.Fatalf("bob joined acme as %s through a key another made", r)
	}

	// The same for a key made by an org key with no user (made before
	// there were users), and for one made with that.
	var other client.Org
	env.Must(t, 200, "GET", "/api/v1/org/other", nil).Decode(t, &other)
	old, _, err := auth.Keys{Store: env.Store, Now: w.clock.Now}.Create(t.Context(), store.APIKey{Name: "old", Role: "admin", OrgID: other.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	var byOld, madeWith client.CreatedKey
	env.MustKey(t, old, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Member: "bob@example.com"}).Decode(t, &byOld)
	env.MustKey(t, byOld.Key, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Name: "mine now"}).Decode(t, &madeWith)
	for _, key := range []string{byOld.Key, madeWith.Key} {
		if got := w.mine(t, key); len(got) != 0 {
			t.Fatalf("a key an org key made for bob sees his invitations: %+v", got)
		}
		wantError(t, accept(w, t, key, inv.ID), 404, "invitation_not_found")
	}

	// Bob's own, made with the key the installation admin made him: his.
	var own client.CreatedKey
	env.MustKey(t, w.bob.Key, 201, "POST", "/api/v1/org/other/keys", client.CreateKeyRequest{Name: "laptop"}).Decode(t, &own)
	if got := w.mine(t, own.Key); len(got) != 1 || got[0].ID != inv.ID {
		t.Fatalf("bob's own key: %+v", got)
	}
	env.MustKey(t, own.Key, 200, "POST", "/api/v1/invitations/"+inv.ID+"/accept", nil)
}

// TestRevokeInvitation: an admin revokes the org's own invitations only:
// another org's is 404 invitation_not_found, as a missing one; one to the
// owner role is an owner's to revoke (403 owner_only for an admin).
func TestRevokeInvitation(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "oz@example.com", Role: "admin"})
	oz := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "oz@example.com"})
	var theirs client.Invitation
	env.MustKey(t, oz.Key, 202, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "carl@example.com"}).Decode(t, &theirs)
	wantError(t, env.DoKey(t, w.admin.Key, "DELETE", "/api/v1/org/acme/invitations/"+theirs.ID, nil), 404, "invitation_not_found")
	wantError(t, env.DoKey(t, w.admin.Key, "DELETE", "/api/v1/org/acme/invitations/not-an-id", nil), 404, "invitation_not_found")
	var l client.List[client.Invitation]
	env.MustKey(t, oz.Key, 200, "GET", "/api/v1/org/other/invitations", nil).Decode(t, &l)
	if len(l.Items) != 1 || l.Items[0].ID != theirs.ID || l.Items[0].State != client.InvitationPending {
		t.Fatalf("other's invitations after acme's admin tried to revoke one: %+v", l.Items)
	}

	owner := w.invite(t, w.owner.Key, "bob@example.com", "owner")
	wantError(t, env.DoKey(t, w.admin.Key, "DELETE", "/api/v1/org/acme/invitations/"+owner.ID, nil), 403, "owner_only")
	if got := w.pending(t); len(got) != 1 || got[0].ID != owner.ID {
		t.Fatalf("pending after an admin tried to revoke an owner's invitation: %+v", got)
	}
	env.MustKey(t, w.owner.Key, 204, "DELETE", "/api/v1/org/acme/invitations/"+owner.ID, nil)
	member := w.invite(t, w.owner.Key, "bob@example.com", "member")
	env.MustKey(t, w.admin.Key, 204, "DELETE", "/api/v1/org/acme/invitations/"+member.ID, nil)
}

// TestInviterHasNoUser: a key with no user (an org key made before there
// were users) cannot invite: an invitation needs a user who invites.
func TestInviterHasNoUser(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	var acme client.Org
	env.Must(t, 200, "GET", "/api/v1/org/acme", nil).Decode(t, &acme)
	keys := auth.Keys{Store: env.Store, Now: w.clock.Now}
	plain, _, err := keys.Create(t.Context(), store.APIKey{Name: "old", Role: "admin", OrgID: acme.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, env.DoKey(t, plain, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "zed@example.com"}), 403, "inviter_has_no_user")
	if got := w.pending(t); len(got) != 0 {
		t.Fatalf("pending: %+v", got)
	}
}

// TestTooManyInvitations: an org has at most MaxPendingInvitations
// pending; past it an invitation is 429 too_many_invitations, until one is
// revoked or expires.
func TestTooManyInvitations(t *testing.T) {
	w := newInvitees(t, servertest.Options{})
	env := w.env
	var acme client.Org
	env.Must(t, 200, "GET", "/api/v1/org/acme", nil).Decode(t, &acme)
	now := w.clock.Now()
	err := env.Store.InTx(t.Context(), func(q store.Queries) error {
		for n := range api.MaxPendingInvitations - 1 {
			inv := store.Invitation{
				ID: uuid.NewString(), OrgID: acme.ID, Email: fmt.Sprintf("p%d@example.com", n), Role: "member",
				InviterID: w.admin.UserID, State: store.InvitationPending, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
			}
			if err := q.CreateInvitation(t.Context(), inv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	last := w.invite(t, w.admin.Key, "last@example.com", "member")
	wantError(t, env.DoKey(t, w.owner.Key, "POST", "/api/v1/org/acme/members", client.AddOrgMemberRequest{Member: "more@example.com"}), 429, "too_many_invitations")
	// Another org is not bound by acme's.
	env.Must(t, 201, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "oz@example.com", Role: "admin"})
	oz := keyFor2(t, env, "other", client.CreateKeyRequest{Member: "oz@example.com"})
	env.MustKey(t, oz.Key, 202, "POST", "/api/v1/org/other/members", client.AddOrgMemberRequest{Member: "more@example.com"})

	env.MustKey(t, w.admin.Key, 204, "DELETE", "/api/v1/org/acme/invitations/"+last.ID, nil)
	w.invite(t, w.admin.Key, "more@example.com", "member")
	w.clock.Advance(time.Hour) // the first ones expire
	w.invite(t, w.admin.Key, "later@example.com", "member")
}
