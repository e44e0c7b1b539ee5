package access_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/uuid"

	iam "github.com/paddockhq/paddock/internal/access"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// creds are every kind of credential one user holds: an API key, a
// session, preview tokens each of them made, SSH keys registered with
// each, and an SSH key scoped to the org without an API key (as older
// servers registered them).
type creds struct {
	key, session                string
	keyPreview, sessionPreview  string
	keySSH, sessionSSH, bareSSH store.SSHKey
	keyPrincipal, sessPrincipal iam.Principal
}

const port = 3000

func (w *world) creds(name string) creds {
	w.t.Helper()
	ctx := context.Background()
	var c creds
	c.key = w.key(name, iam.KeySpec{})
	c.session = w.session(name)
	c.keyPrincipal, c.sessPrincipal = w.principal(c.key), w.principal(c.session)
	c.keyPreview, _ = w.sessions.IssuePreviewToken(c.keyPrincipal, w.rtDev, port, time.Hour)
	c.sessionPreview, _ = w.sessions.IssuePreviewToken(c.sessPrincipal, w.rtDev, port, time.Hour)
	c.keySSH = w.sshKey(c.keyPrincipal)
	c.sessionSSH = w.sshKey(c.sessPrincipal)
	u := w.users[name]
	c.bareSSH = store.SSHKey{ID: uuid.NewString(), UserID: u.ID, Fingerprint: "SHA256:" + uuid.NewString(), PublicKey: "ssh-ed25519 " + uuid.NewString(),
		OrgID: w.acme.ID, Role: "member", CreatedAt: time.Now()}
	must(w.t, w.st.CreateSSHKey(ctx, c.bareSSH))
	return c
}

// sshKey registers a made-up public key with p.
func (w *world) sshKey(p iam.Principal) store.SSHKey {
	w.t.Helper()
	k, err := w.sshKeys(p).Add(context.Background(), iam.SSHKeySpec{PublicKey: "ssh-ed25519 " + uuid.NewString(), Fingerprint: "SHA256:" + uuid.NewString(), Name: "laptop"})
	must(w.t, err)
	return k
}

// sshKeys is p's user's SSH keys, which p must be able to keep.
func (w *world) sshKeys(p iam.Principal) iam.UserSSHKeys {
	w.t.Helper()
	keys, err := w.svc.SSHKeysOf(context.Background(), p)
	must(w.t, err)
	return keys
}

// reach is what each credential gets at runtime rt: "" for through, else
// the refusal's reason.
func (w *world) reach(c creds, rt store.Runtime) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	try := func(name string, p iam.Principal, err error) {
		if err == nil {
			err = w.path.Authorize(ctx, p, iam.Member, rt)
		}
		out[name] = reason(err)
		if err != nil && out[name] == "" {
			out[name] = code(err)
		}
	}
	p, err := w.svc.Authenticate(ctx, c.key)
	try("key", p, err)
	p, err = w.svc.Authenticate(ctx, c.session)
	try("session", p, err)
	p, _, err = w.svc.PreviewToken(ctx, c.keyPreview, rt, port)
	try("key preview", p, err)
	p, _, err = w.svc.PreviewToken(ctx, c.sessionPreview, rt, port)
	try("session preview", p, err)
	for name, k := range map[string]store.SSHKey{"key ssh": c.keySSH, "session ssh": c.sessionSSH, "bare ssh": c.bareSSH} {
		p, _, err = w.svc.SSHKey(ctx, k.Fingerprint, k.PublicKey)
		try(name, p, err)
	}
	return out
}

func wantReach(t *testing.T, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %q, want %q", name, got[name], w)
		}
	}
}

// TestLeaveAndRejoin: every credential of a member who leaves the org
// stops working (the store revokes their API keys); on rejoining, those
// made for the old membership (an API key, the preview tokens and SSH
// keys it made, an org-scoped SSH key) stay dead, while a session and
// what it made act with the user's memberships as they are now.
func TestLeaveAndRejoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		defer w.close()
		ctx := context.Background()
		c := w.creds("member")
		wantReach(t, w.reach(c, w.rtDev), map[string]string{
			"key": "", "session": "", "key preview": "", "session preview": "", "key ssh": "", "session ssh": "", "bare ssh": "",
		})

		owner := w.principal(w.session("owner"))
		sc, err := w.svc.Authorize(ctx, owner, iam.Admin, iam.Target{Org: "acme"})
		must(t, err)
		_, err = w.svc.RemoveOrgMember(ctx, sc.Access, "member@example.com")
		must(t, err)
		wantReach(t, w.reach(c, w.rtDev), map[string]string{
			"key": "revoked", "session": "not_a_member", "key preview": "bad_preview_token", "session preview": "bad_preview_token",
			"key ssh": "registering_key_invalid", "session ssh": "not_a_member", "bare ssh": "not_a_member",
		})

		time.Sleep(time.Minute)
		w.join(w.acme, w.users["member"], "member")
		must(t, w.st.AddWorkspaceMember(ctx, store.WorkspaceMember{ID: uuid.NewString(), OrgID: w.acme.ID, WorkspaceID: w.dev.ID, UserID: w.users["member"].ID, CreatedAt: time.Now()}))
		wantReach(t, w.reach(c, w.rtDev), map[string]string{
			"key": "revoked", "session": "", "key preview": "bad_preview_token", "session preview": "",
			"key ssh": "registering_key_invalid", "session ssh": "", "bare ssh": "key_older_than_membership",
		})
	})
}

// TestMakerLeaves: a key an admin made for a member dies with the
// admin's membership, and is capped by the admin's role meanwhile.
func TestMakerLeaves(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	raw := w.key("admin", iam.KeySpec{Member: "loner@example.com"})
	p := w.principal(raw)
	if p.UserID != w.users["loner"].ID || p.MakerUserID != w.users["admin"].ID || p.Role != auth.RoleMember {
		t.Fatalf("principal %+v", p)
	}
	must(t, w.st.SetOrgMemberRole(ctx, w.acme.ID, w.users["admin"].ID, "viewer"))
	if p = w.principal(raw); p.Role != auth.RoleViewer {
		t.Fatalf("a key made by an admin now a viewer has role %s", p.Role)
	}
	w.leave(w.acme, w.users["admin"])
	if _, err := w.svc.Authenticate(ctx, raw); reason(err) != "revoked" {
		t.Fatalf("maker gone: %v", err)
	}
}

// TestKeyOlderThanMembership: a key not revoked with its holder's or its
// maker's membership still dies with it: one older than the membership
// its holder has now, one of a holder or a maker who is no member, is
// refused as not a member.
func TestKeyOlderThanMembership(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	past := func() time.Time { return time.Now().Add(-time.Hour) }
	for _, tc := range []struct {
		name     string
		now      func() time.Time
		holder   string
		maker    string
		wantWhy  string
		wantRole auth.Role
	}{
		{"made before the holder joined", past, "member", "", "not_a_member", ""},
		{"holder no member", time.Now, "outsider", "", "not_a_member", ""},
		{"maker no member", time.Now, "loner", "outsider", "not_a_member", ""},
		{"both members since", time.Now, "loner", "admin", "", auth.RoleMember},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := store.APIKey{Name: tc.name, Role: "admin", OrgID: w.acme.ID, UserID: w.users[tc.holder].ID}
			if tc.maker != "" {
				rec.MakerUserID = w.users[tc.maker].ID
			}
			raw, _, err := auth.Keys{Store: w.st, Now: tc.now}.Create(ctx, rec, "")
			must(t, err)
			p, err := w.svc.Authenticate(ctx, raw)
			if reason(err) != tc.wantWhy || p.Role != tc.wantRole {
				t.Fatalf("got %+v, %v; want %q, role %q", p, err, tc.wantWhy, tc.wantRole)
			}
		})
	}
	t.Run("maker joined after the key", func(t *testing.T) {
		late := w.user("late", 30)
		rec := store.APIKey{Name: "late", Role: "member", OrgID: w.acme.ID, UserID: w.users["loner"].ID, MakerUserID: late.ID}
		raw, _, err := auth.Keys{Store: w.st, Now: time.Now}.Create(ctx, rec, "")
		must(t, err)
		must(t, w.st.AddOrgMember(ctx, store.OrgMember{ID: uuid.NewString(), OrgID: w.acme.ID, UserID: late.ID, Role: "admin", CreatedAt: time.Now().Add(time.Minute)}))
		if _, err := w.svc.Authenticate(ctx, raw); reason(err) != "not_a_member" {
			t.Fatalf("got %v", err)
		}
	})
}

// TestHolderRoleCaps: a key's role is at most its holder's now.
func TestHolderRoleCaps(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	raw := w.key("member", iam.KeySpec{})
	must(t, w.st.SetOrgMemberRole(context.Background(), w.acme.ID, w.users["member"].ID, "viewer"))
	if p := w.principal(raw); p.Role != auth.RoleViewer {
		t.Fatalf("a member's key after the member became a viewer: %s", p.Role)
	}
}

// TestRevocation: a revoked key, an ended session and a deleted SSH key
// stop working at once, with what they made.
func TestRevocation(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	c := w.creds("member")
	sc, err := w.svc.Authorize(ctx, c.keyPrincipal, iam.Member, iam.Target{Org: "acme"})
	must(t, err)
	must(t, w.svc.RevokeKey(ctx, c.keyPrincipal, sc.Access, c.keyPrincipal.KeyID))
	must(t, w.sessions.SignOut(ctx, c.sessPrincipal))
	must(t, w.sshKeys(c.sessPrincipal).Delete(ctx, c.bareSSH.ID))
	wantReach(t, w.reach(c, w.rtDev), map[string]string{
		"key": "revoked", "session": "revoked", "key preview": "bad_preview_token", "session preview": "bad_preview_token",
		"key ssh": "registering_key_invalid", "session ssh": "", "bare ssh": "unknown_key",
	})
}

// TestRevokeKeyRules: a member revokes its own keys, an admin any of the
// org's; a key out of reach is not found.
func TestRevokeKeyRules(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	adminKey := w.principal(w.key("admin", iam.KeySpec{}))
	memberKey := w.principal(w.key("member", iam.KeySpec{}))
	acc := func(p iam.Principal) auth.Access {
		sc, err := w.svc.Authorize(ctx, p, iam.Member, iam.Target{Org: "acme"})
		must(t, err)
		return sc.Access
	}
	for _, tc := range []struct {
		name string
		by   iam.Principal
		key  string
		want string
	}{
		{"a member, an admin's key", memberKey, adminKey.KeyID, "key_not_found"},
		{"not a key id", memberKey, "nope", "invalid_key_id"},
		{"another org's", w.installation, memberKey.KeyID, "key_not_found"},
		{"an admin, a member's key", adminKey, memberKey.KeyID, ""},
		{"a member, its own", memberKey, memberKey.KeyID, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := auth.Access{Org: w.other, Role: auth.RoleOwner}
			if tc.by.OrgID != "" {
				a = acc(tc.by)
			}
			if got := code(w.svc.RevokeKey(ctx, tc.by, a, tc.key)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestResolve: a runtime is named by its id or by 12 to 32 hex digits of
// it that match it alone; a path URL names it in its org and workspace.
func TestResolve(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	a := w.runtime(w.dev, "abcdef01-2345-4678-8000-000000000001")
	w.runtime(w.dev, "abcdef01-2345-4678-8000-000000000002")
	for _, tc := range []struct {
		name, want, why string
	}{
		{a.ID, a.ID, ""},
		{"ABCDEF01-2345-4678-8000-000000000001", a.ID, ""},
		{"abcdef0123454678800000000000001", "", "unknown_runtime"},
		{"abcdef01234546788000000000000001", a.ID, ""},
		{"abcdef012345", "", "ambiguous_runtime"},
		{iam.ShortID(w.rtOps.ID), w.rtOps.ID, ""},
		{"000000000000", "", "unknown_runtime"},
		{"abcdef01234", "", "malformed_runtime_name"},
		{"abcdef01234g", "", "malformed_runtime_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, err := w.path.Resolve(ctx, tc.name)
			if rt.ID != tc.want || reason(err) != tc.why || (tc.why != "" && code(err) != "runtime_not_found") {
				t.Fatalf("got %q, %v; want %q, %q", rt.ID, err, tc.want, tc.why)
			}
		})
	}
	for _, tc := range []struct{ org, ws, id, want string }{
		{"acme", "dev", a.ID, a.ID},
		{"acme", "ops", a.ID, ""},
		{"other", "dev", a.ID, ""},
		{"nope", "dev", a.ID, ""},
		{"acme", "dev", "not-a-uuid", ""},
	} {
		rt, err := w.path.ResolveIn(ctx, tc.org, tc.ws, tc.id)
		if rt.ID != tc.want || (tc.want == "" && code(err) != "runtime_not_found") {
			t.Errorf("%s/%s/%s: got %q, %v", tc.org, tc.ws, tc.id, rt.ID, err)
		}
	}
}

// TestExpiry: sessions, preview tokens, API keys and invitations end when
// their time is up, on the clock.
func TestExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, func(c *iam.Config) { c.InvitationTTL = 3 * time.Hour })
		defer w.close()
		w.signin.SessionTTL = time.Hour
		ctx := context.Background()
		sess := w.session("member")
		p := w.principal(sess)
		ttl, err := w.sessions.PreviewTTL("10m")
		must(t, err)
		preview, _ := w.sessions.IssuePreviewToken(p, w.rtDev, port, ttl)
		key := w.key("member", iam.KeySpec{ExpiresIn: "2h"})
		admin := w.principal(w.session("admin"))
		sc, err := w.svc.Authorize(ctx, admin, iam.Admin, iam.Target{Org: "acme"})
		must(t, err)
		fresh := w.user("fresh", 20)
		added, err := w.svc.AddOrgMember(ctx, admin, sc.Access, fresh.Email, "member")
		must(t, err)
		if added.Invitation == nil || added.Invitation.State != store.InvitationPending {
			t.Fatalf("added %+v", added)
		}
		freshSession := w.principal(w.session("fresh"))
		w.signin.SessionTTL = 0 // the default: outlives the steps below

		step := func(d time.Duration, want map[string]string) {
			t.Helper()
			time.Sleep(d)
			got := map[string]string{}
			_, _, err := w.svc.PreviewToken(ctx, preview, w.rtDev, port)
			got["preview"] = code(err)
			_, err = w.svc.Authenticate(ctx, sess)
			got["session"] = code(err)
			_, err = w.svc.Authenticate(ctx, key)
			got["key"] = code(err)
			is, _, err := w.svc.MyInvitations(ctx, freshSession, store.Page{})
			must(t, err)
			got["invitation"] = "pending"
			if len(is) == 0 {
				got["invitation"] = "gone"
			}
			wantReach(t, got, want)
		}
		step(10*time.Minute-time.Second, map[string]string{"preview": "", "session": "", "key": "", "invitation": "pending"})
		step(time.Second, map[string]string{"preview": "invalid_preview_token", "session": ""})
		step(50*time.Minute, map[string]string{"session": "invalid_session", "key": ""})
		step(time.Hour, map[string]string{"key": "invalid_api_key", "invitation": "pending"})
		step(time.Hour, map[string]string{"invitation": "gone"})
		_, err = w.svc.AcceptInvitation(ctx, freshSession, added.Invitation.ID)
		if code(err) != "invitation_expired" {
			t.Fatalf("accepting an expired invitation: %v", err)
		}
	})
}

// TestWithoutSignIn: a service given no sign-in offers nothing of it (no
// SignIn without UseSignIn) and takes no session or preview token, 401
// alike with a bad one; API keys still authenticate.
func TestWithoutSignIn(t *testing.T) {
	w := newWorld(t)
	defer w.close()
	ctx := context.Background()
	c := w.creds("member")
	bare := iam.New(iam.Config{Store: w.st})
	if bare.PreviewTokens() {
		t.Fatal("a service without sign-in says it takes preview tokens")
	}
	if _, err := bare.Authenticate(ctx, c.session); code(err) != "invalid_session" || !errors.Is(err, errdefs.ErrUnauthenticated) {
		t.Fatalf("a session token without sign-in: %v", err)
	}
	if _, _, err := bare.PreviewToken(ctx, c.keyPreview, w.rtDev, port); code(err) != "invalid_preview_token" || !errors.Is(err, errdefs.ErrUnauthenticated) {
		t.Fatalf("a preview token without sign-in: %v", err)
	}
	if p, err := bare.Authenticate(ctx, c.key); err != nil || p.KeyID != c.keyPrincipal.KeyID {
		t.Fatalf("an API key without sign-in: %+v, %v", p, err)
	}
}

// busyKeys is a real store whose API key lookups by id answer as SQLite
// does when the database is busy, while busy is set.
type busyKeys struct {
	iam.Store
	busy bool
}

func (s *busyKeys) GetAPIKey(ctx context.Context, id string) (store.APIKey, error) {
	if s.busy {
		return store.APIKey{}, errdefs.Unavailable("store_busy", "the database is busy; retry")
	}
	return s.Store.GetAPIKey(ctx, id)
}

// TestBusyStoreIsNoRefusal: a store that does not answer is a failure to
// decide, never a refusal, when a key is checked again, or an SSH key's
// registering key, or a preview token's maker: a door that ends access on
// a refusal keeps it.
func TestBusyStoreIsNoRefusal(t *testing.T) {
	var st *busyKeys
	w := newWorld(t, func(c *iam.Config) { st = &busyKeys{Store: c.Store}; c.Store = st })
	defer w.close()
	ctx := context.Background()
	keyed := w.principal(w.key("member", iam.KeySpec{}))
	k := w.sshKey(keyed)
	st.busy = true
	_, err := w.svc.Reverify(ctx, keyed.Credential())
	if code(err) != "store_busy" || reason(err) != "" {
		t.Fatalf("Reverify on a busy store: %v (reason %q)", err, reason(err))
	}
	for name, check := range map[string]func() error{
		"SSHKey":     func() error { _, _, err := w.svc.SSHKey(ctx, k.Fingerprint, k.PublicKey); return err },
		"SSHKeyByID": func() error { _, _, err := w.svc.SSHKeyByID(ctx, k.ID); return err },
	} {
		if err := check(); code(err) != "store_busy" || reason(err) != "" {
			t.Errorf("%s on a busy store: %v (reason %q)", name, err, reason(err))
		}
	}
	// A preview token its maker's key made: the maker is checked again.
	tok, _ := w.sessions.IssuePreviewToken(keyed, w.rtDev, port, time.Hour)
	if _, _, err := w.svc.PreviewToken(ctx, tok, w.rtDev, port); code(err) != "store_busy" || reason(err) != "" {
		t.Errorf("PreviewToken on a busy store: %v (reason %q)", err, reason(err))
	}
	st.busy = false
	if _, _, err := w.svc.PreviewToken(ctx, tok, w.rtDev, port); err != nil {
		t.Fatalf("a preview token once the store answers: %v", err)
	}
	if _, _, err := w.svc.SSHKeyByID(ctx, k.ID); err != nil {
		t.Fatalf("once the store answers: %v", err)
	}
}
