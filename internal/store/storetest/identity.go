package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// user stores a user with a unique email address after edit (if any)
// changed it.
func (f *fixture) user(edit func(*store.User)) store.User {
	f.t.Helper()
	u := store.User{ID: uuid.NewString(), CreatedAt: f.next()}
	u.Email = f.name("user") + "@example.com"
	if edit != nil {
		edit(&u)
	}
	must(f.t, f.s.CreateUser(f.ctx, u))
	return u
}

// orgMember stores u's membership of o with role.
func (f *fixture) orgMember(o store.Org, u store.User, role string) store.OrgMember {
	f.t.Helper()
	m := store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: u.ID, Role: role, CreatedAt: f.next()}
	must(f.t, f.s.AddOrgMember(f.ctx, m))
	return m
}

// workspaceMember stores u's membership of w.
func (f *fixture) workspaceMember(w store.Workspace, u store.User) store.WorkspaceMember {
	f.t.Helper()
	m := store.WorkspaceMember{ID: uuid.NewString(), OrgID: w.OrgID, WorkspaceID: w.ID, UserID: u.ID, CreatedAt: f.next()}
	must(f.t, f.s.AddWorkspaceMember(f.ctx, m))
	return m
}

// apiKey stores a key of o (nil: installation-wide) after edit (if any)
// changed it.
func (f *fixture) apiKey(o *store.Org, edit func(*store.APIKey)) store.APIKey {
	f.t.Helper()
	plain := "pdk_" + uuid.NewString()
	k := store.APIKey{ID: uuid.NewString(), Name: f.name("key"), Hash: hashOf(plain), Prefix: plain[:8], Role: "admin", CreatedAt: f.next()}
	if o != nil {
		k.OrgID, k.Role = o.ID, "member"
	}
	if edit != nil {
		edit(&k)
	}
	must(f.t, f.s.CreateAPIKey(f.ctx, k))
	return k
}

func normUser(u store.User) store.User {
	u.CreatedAt = ts(u.CreatedAt)
	return u
}

func normOrgMember(m store.OrgMember) store.OrgMember {
	m.CreatedAt = ts(m.CreatedAt)
	m.User = normUser(m.User)
	return m
}

func normAuthSession(s store.AuthSession) store.AuthSession {
	s.CreatedAt, s.ExpiresAt, s.RevokedAt = ts(s.CreatedAt), ts(s.ExpiresAt), ts(s.RevokedAt)
	return s
}

// The wallet of testUsers' walleted user, as stored and in other case.
const wallet, walletUpper = "0x52908400098527886e0f7030069857d2e4169ee7", "0x52908400098527886E0F7030069857D2E4169EE7"

// userSet holds the users testUsers creates first, which its later
// subtests look up, list and update.
type userSet struct {
	f                            *fixture
	alice, walleted, both, named store.User
}

func testUsers(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	alice := store.User{ID: uuid.NewString(), Email: "alice@example.com", Name: "Alice", CreatedAt: f.next()}
	walleted := store.User{ID: uuid.NewString(), Wallet: wallet, CreatedAt: f.next()}
	both := store.User{ID: uuid.NewString(), Email: "both@example.com", Wallet: "0x8617e340b3d01fa5f11f306f4090fd50e238070d", CreatedAt: f.next()}
	named := store.User{ID: uuid.NewString(), Name: "bob", CreatedAt: f.next()}
	u := userSet{f: f, alice: alice, walleted: walleted, both: both, named: named}

	creates := []struct {
		name     string
		user     store.User
		wantErr  error
		wantCode string
	}{
		{"email", alice, nil, ""},
		{"wallet", walleted, nil, ""},
		{"email and wallet", both, nil, ""},
		{"name only", named, nil, ""},
		{"taken email", store.User{ID: uuid.NewString(), Email: alice.Email}, errdefs.ErrConflict, "email_taken"},
		{"taken email in other case", store.User{ID: uuid.NewString(), Email: "ALICE@Example.com"}, errdefs.ErrConflict, "email_taken"},
		{"taken wallet", store.User{ID: uuid.NewString(), Wallet: wallet}, errdefs.ErrConflict, "wallet_taken"},
		{"taken wallet in other case", store.User{ID: uuid.NewString(), Wallet: walletUpper}, errdefs.ErrConflict, "wallet_taken"},
		{"free email, taken wallet", store.User{ID: uuid.NewString(), Email: "new@example.com", Wallet: both.Wallet}, errdefs.ErrConflict, "wallet_taken"},
		{"duplicate id", store.User{ID: alice.ID, Email: "other@example.com"}, errdefs.ErrConflict, "user_exists"},
		{"same name twice", store.User{ID: uuid.NewString(), Name: "bob"}, nil, ""},
		{"nothing to show", store.User{ID: uuid.NewString()}, errdefs.ErrInvalidArgument, "invalid_user"},
		{"missing id", store.User{Email: "noid@example.com"}, errdefs.ErrInvalidArgument, "invalid_user"},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			err := s.CreateUser(ctx, tc.user)
			if tc.wantErr != nil {
				wantCode(t, err, tc.wantErr, tc.wantCode)
				return
			}
			must(t, err)
			got, err := s.GetUser(ctx, tc.user.ID)
			must(t, err)
			if tc.user.CreatedAt.IsZero() {
				tc.user.CreatedAt = got.CreatedAt
			}
			equal(t, "GetUser", got, normUser(tc.user))
		})
	}

	t.Run("lookups", u.lookups)
	t.Run("list", u.list)
	t.Run("update", u.update)
	t.Run("delete takes memberships, keys and sessions", func(t *testing.T) { testDeleteUser(t, f) })
	t.Run("one of concurrent creates with an email", func(t *testing.T) { testConcurrentUserCreates(t, f) })
}

func (u userSet) lookups(t *testing.T) {
	s, ctx := u.f.s, u.f.ctx
	alice, walleted, both := u.alice, u.walleted, u.both
	lookups := []struct {
		name string
		get  func() (store.User, error)
		want store.User
	}{
		{"by email", func() (store.User, error) { return s.GetUserByEmail(ctx, alice.Email) }, alice},
		{"by email in other case", func() (store.User, error) { return s.GetUserByEmail(ctx, "Alice@EXAMPLE.com") }, alice},
		{"by wallet", func() (store.User, error) { return s.GetUserByWallet(ctx, wallet) }, walleted},
		{"by wallet in other case", func() (store.User, error) { return s.GetUserByWallet(ctx, walletUpper) }, walleted},
		{"both by wallet", func() (store.User, error) { return s.GetUserByWallet(ctx, both.Wallet) }, both},
	}
	for _, l := range lookups {
		got, err := l.get()
		must(t, err)
		equal(t, l.name, got, normUser(l.want))
	}
	misses := []func() (store.User, error){
		func() (store.User, error) { return s.GetUser(ctx, uuid.NewString()) },
		func() (store.User, error) { return s.GetUser(ctx, "") },
		func() (store.User, error) { return s.GetUserByEmail(ctx, "nobody@example.com") },
		func() (store.User, error) { return s.GetUserByEmail(ctx, "") },
		func() (store.User, error) { return s.GetUserByWallet(ctx, "0x"+strings.Repeat("0", 40)) },
		func() (store.User, error) { return s.GetUserByWallet(ctx, "") },
	}
	for _, get := range misses {
		_, err := get()
		wantCode(t, err, errdefs.ErrNotFound, "user_not_found")
	}
}

func (u userSet) list(t *testing.T) {
	s, ctx := u.f.s, u.f.ctx
	alice, walleted, both, named := u.alice, u.walleted, u.both, u.named
	all, _, err := s.ListUsers(ctx, store.Page{Limit: store.MaxLimit})
	must(t, err)
	if len(all) != 5 {
		t.Fatalf("users = %d, want 5", len(all))
	}
	equal(t, "oldest first", all[:4], []store.User{normUser(alice), normUser(walleted), normUser(both), normUser(named)})
	for limit := 1; limit <= len(all)+1; limit++ {
		got := collectPages(t, func(p store.Page) ([]store.User, string, error) { return s.ListUsers(ctx, p) }, limit)
		equal(t, "paged users", got, all)
	}
}

func (us userSet) update(t *testing.T) {
	f, s, ctx := us.f, us.f.s, us.f.ctx
	named, walleted := us.named, us.walleted
	u := named
	u.Email, u.Wallet, u.Name = "Bob@Example.com", "0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "Bob B."
	u.CreatedAt = base // never rewritten
	must(t, s.UpdateUser(ctx, u))
	got, err := s.GetUser(ctx, named.ID)
	must(t, err)
	equal(t, "updated user", got, store.User{ID: named.ID, Email: "bob@example.com", Wallet: "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		Name: "Bob B.", CreatedAt: ts(named.CreatedAt)})

	// Clearing the email frees it for another user.
	u.Email = ""
	must(t, s.UpdateUser(ctx, u))
	freed := f.user(func(x *store.User) { x.Email = "bob@example.com" })
	u.Email = "bob@example.com"
	wantCode(t, s.UpdateUser(ctx, u), errdefs.ErrConflict, "email_taken")
	u.Email, u.Wallet = "", walleted.Wallet
	wantCode(t, s.UpdateUser(ctx, u), errdefs.ErrConflict, "wallet_taken")
	u.Wallet, u.Name = "", ""
	wantCode(t, s.UpdateUser(ctx, u), errdefs.ErrInvalidArgument, "invalid_user")
	wantCode(t, s.UpdateUser(ctx, store.User{ID: uuid.NewString(), Name: "ghost"}), errdefs.ErrNotFound, "user_not_found")
	// Writing a user's own email and wallet again is no conflict.
	must(t, s.UpdateUser(ctx, freed))
}

// testDeleteUser deletes a user of an org and checks that its memberships,
// keys and sessions go with it while another member's stay.
func testDeleteUser(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o := f.org()
	w := f.workspace(o)
	gone, stays := f.user(nil), f.user(nil)
	for _, u := range []store.User{gone, stays} {
		f.orgMember(o, u, "member")
		f.workspaceMember(w, u)
	}
	goneKey := f.apiKey(&o, func(k *store.APIKey) { k.UserID = gone.ID })
	staysKey := f.apiKey(&o, func(k *store.APIKey) { k.UserID = stays.ID })
	sess := store.AuthSession{ID: uuid.NewString(), UserID: gone.ID, CreatedAt: f.next(), ExpiresAt: f.next().Add(time.Hour)}
	must(t, s.CreateAuthSession(ctx, sess))

	must(t, s.DeleteUser(ctx, gone.ID))
	_, err := s.GetUser(ctx, gone.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	_, err = s.GetOrgMember(ctx, o.ID, gone.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	in, err := s.IsWorkspaceMember(ctx, w.ID, gone.ID)
	must(t, err)
	equal(t, "still a workspace member", in, false)
	_, err = s.GetAPIKey(ctx, goneKey.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	_, err = s.GetAuthSession(ctx, sess.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	seats, err := s.GetWorkspaceSeats(ctx, w.ID)
	must(t, err)
	equal(t, "seats", seats.Members, 1)

	_, err = s.GetOrgMember(ctx, o.ID, stays.ID)
	must(t, err)
	_, err = s.GetAPIKey(ctx, staysKey.ID)
	must(t, err)
	wantCode(t, s.DeleteUser(ctx, gone.ID), errdefs.ErrNotFound, "user_not_found")
}

// orgMemberSet holds the orgs, workspaces, users and memberships
// testOrgMembers creates first: a owns o and is a member of o2, b is a
// member of o, c of neither.
type orgMemberSet struct {
	f           *fixture
	o, o2       store.Org
	w1, w2, w3  store.Workspace
	a, b, c     store.User
	ma, mb, ma2 store.OrgMember
}

// withUser is m as a listing returns it, with its user u.
func withUser(m store.OrgMember, u store.User) store.OrgMember {
	m.User = u
	return normOrgMember(m)
}

func testOrgMembers(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	o, o2 := f.org(), f.org()
	w1, w2, w3 := f.workspace(o), f.workspace(o), f.workspace(o2)
	a := f.user(nil)
	b := f.user(func(u *store.User) { u.Email, u.Name = "", "b" })
	c := f.user(nil)
	ma := f.orgMember(o, a, "owner")
	mb := f.orgMember(o, b, "member")
	ma2 := f.orgMember(o2, a, "member")
	m := orgMemberSet{f: f, o: o, o2: o2, w1: w1, w2: w2, w3: w3, a: a, b: b, c: c, ma: ma, mb: mb, ma2: ma2}

	t.Run("add errors", m.addErrors)
	t.Run("get", m.get)
	t.Run("list", m.list)
	t.Run("roles", m.roles)

	for _, w := range []store.Workspace{w1, w2, w3} {
		f.workspaceMember(w, a)
	}
	f.workspaceMember(w1, b)

	t.Run("workspace membership", m.workspaceMembership)
	t.Run("remove", m.remove)
	t.Run("one of concurrent adds and removes", func(t *testing.T) { testConcurrentMembership(t, f) })
}

func (om orgMemberSet) addErrors(t *testing.T) {
	s, ctx := om.f.s, om.f.ctx
	o, a, c := om.o, om.a, om.c
	m := func(edit func(*store.OrgMember)) store.OrgMember {
		x := store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: c.ID, Role: "member"}
		edit(&x)
		return x
	}
	cases := []struct {
		name     string
		m        store.OrgMember
		wantErr  error
		wantCode string
	}{
		{"already a member", m(func(x *store.OrgMember) { x.UserID = a.ID }), errdefs.ErrConflict, "member_exists"},
		{"unknown org", m(func(x *store.OrgMember) { x.OrgID = uuid.NewString() }), errdefs.ErrFailedPrecondition, ""},
		{"unknown user", m(func(x *store.OrgMember) { x.UserID = uuid.NewString() }), errdefs.ErrFailedPrecondition, ""},
		{"unknown role", m(func(x *store.OrgMember) { x.Role = "emperor" }), errdefs.ErrInvalidArgument, ""},
		{"no role", m(func(x *store.OrgMember) { x.Role = "" }), errdefs.ErrInvalidArgument, ""},
		{"no id", m(func(x *store.OrgMember) { x.ID = "" }), errdefs.ErrInvalidArgument, ""},
	}
	for _, tc := range cases {
		err := s.AddOrgMember(ctx, tc.m)
		if tc.wantCode != "" {
			wantCode(t, err, tc.wantErr, tc.wantCode)
		} else {
			wantKind(t, err, tc.wantErr)
		}
	}
}

func (om orgMemberSet) get(t *testing.T) {
	s, ctx := om.f.s, om.f.ctx
	o, a, b, c, mb := om.o, om.a, om.b, om.c, om.mb
	got, err := s.GetOrgMember(ctx, o.ID, b.ID)
	must(t, err)
	equal(t, "GetOrgMember", got, withUser(mb, b))
	_, err = s.GetOrgMember(ctx, o.ID, c.ID)
	wantCode(t, err, errdefs.ErrNotFound, "org_member_not_found")
	_, err = s.GetOrgMember(ctx, uuid.NewString(), a.ID)
	wantKind(t, err, errdefs.ErrNotFound)
}

func (om orgMemberSet) list(t *testing.T) {
	s, ctx := om.f.s, om.f.ctx
	o, a, b, c := om.o, om.a, om.b, om.c
	ma, mb, ma2 := om.ma, om.mb, om.ma2
	got := collectPages(t, func(p store.Page) ([]store.OrgMember, string, error) { return s.ListOrgMembers(ctx, o.ID, p) }, 1)
	equal(t, "org members", got, []store.OrgMember{withUser(ma, a), withUser(mb, b)})
	none, next, err := s.ListOrgMembers(ctx, uuid.NewString(), store.Page{})
	must(t, err)
	equal(t, "members of an unknown org", len(none), 0)
	equal(t, "next", next, "")
	orgs, err := s.ListUserOrgs(ctx, a.ID)
	must(t, err)
	equal(t, "ListUserOrgs", orgs, []store.OrgMember{normOrgMember(ma), normOrgMember(ma2)})
	orgs, err = s.ListUserOrgs(ctx, c.ID)
	must(t, err)
	equal(t, "orgs of a user in none", len(orgs), 0)
}

func (om orgMemberSet) roles(t *testing.T) {
	s, ctx := om.f.s, om.f.ctx
	o, o2, b, c := om.o, om.o2, om.b, om.c
	owners := func(org store.Org) int {
		t.Helper()
		n, err := s.CountOrgOwners(ctx, org.ID)
		must(t, err)
		return n
	}
	equal(t, "owners", owners(o), 1)
	equal(t, "owners of o2", owners(o2), 0)
	must(t, s.SetOrgMemberRole(ctx, o.ID, b.ID, "owner"))
	equal(t, "owners after promotion", owners(o), 2)
	must(t, s.SetOrgMemberRole(ctx, o.ID, b.ID, "viewer"))
	equal(t, "owners after demotion", owners(o), 1)
	got, err := s.GetOrgMember(ctx, o.ID, b.ID)
	must(t, err)
	equal(t, "role", got.Role, "viewer")
	wantKind(t, s.SetOrgMemberRole(ctx, o.ID, b.ID, "emperor"), errdefs.ErrInvalidArgument)
	wantKind(t, s.SetOrgMemberRole(ctx, o.ID, b.ID, ""), errdefs.ErrInvalidArgument)
	wantCode(t, s.SetOrgMemberRole(ctx, o.ID, c.ID, "admin"), errdefs.ErrNotFound, "org_member_not_found")
	n, err := s.CountOrgOwners(ctx, uuid.NewString())
	must(t, err)
	equal(t, "owners of an unknown org", n, 0)
}

func (om orgMemberSet) workspaceMembership(t *testing.T) {
	s, ctx := om.f.s, om.f.ctx
	o, o2, a, b, c := om.o, om.o2, om.a, om.b, om.c
	w1, w2, w3 := om.w1, om.w2, om.w3
	cases := []struct {
		ws   store.Workspace
		user store.User
		want bool
	}{
		{w1, a, true}, {w2, a, true}, {w3, a, true}, {w1, b, true},
		{w2, b, false}, {w1, c, false}, {store.Workspace{ID: uuid.NewString()}, a, false},
	}
	for _, tc := range cases {
		got, err := s.IsWorkspaceMember(ctx, tc.ws.ID, tc.user.ID)
		must(t, err)
		if got != tc.want {
			t.Fatalf("IsWorkspaceMember(%s, %s) = %v, want %v", tc.ws.Name, tc.user.Handle(), got, tc.want)
		}
	}
	lists := []struct {
		org  store.Org
		user store.User
		want []string
	}{
		{o, a, []string{w1.ID, w2.ID}},
		{o2, a, []string{w3.ID}},
		{o, b, []string{w1.ID}},
		{o2, b, []string{}},
		{o, c, []string{}},
	}
	for _, tc := range lists {
		got, err := s.ListMemberWorkspaces(ctx, tc.org.ID, tc.user.ID)
		must(t, err)
		// None is empty, not nil: it narrows a SandboxFilter to nothing.
		equal(t, "ListMemberWorkspaces of "+tc.user.Handle(), got, tc.want)
	}
}

// remove removes a from o, first in a transaction that fails, and checks
// that a leaves o's workspaces and a's keys in o are revoked.
func (om orgMemberSet) remove(t *testing.T) {
	f, s, ctx := om.f, om.f.s, om.f.ctx
	o, o2, a, b, c := om.o, om.o2, om.a, om.b, om.c
	w1, w3 := om.w1, om.w3
	earlier := f.next()
	keyHere := f.apiKey(&o, func(k *store.APIKey) { k.UserID = a.ID })
	keyRevoked := f.apiKey(&o, func(k *store.APIKey) { k.UserID, k.RevokedAt = a.ID, earlier })
	keyElsewhere := f.apiKey(&o2, func(k *store.APIKey) { k.UserID = a.ID })
	keyOfB := f.apiKey(&o, func(k *store.APIKey) { k.UserID = b.ID })
	at := f.next()

	// A transaction that fails takes the removal back with it.
	errBoom := errors.New("boom")
	err := s.InTx(ctx, func(q store.Queries) error {
		if err := q.RemoveOrgMember(ctx, o.ID, a.ID, at); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("InTx error = %v, want %v", err, errBoom)
	}
	_, err = s.GetOrgMember(ctx, o.ID, a.ID)
	must(t, err)

	must(t, s.RemoveOrgMember(ctx, o.ID, a.ID, at))
	_, err = s.GetOrgMember(ctx, o.ID, a.ID)
	wantKind(t, err, errdefs.ErrNotFound)
	got, err := s.ListMemberWorkspaces(ctx, o.ID, a.ID)
	must(t, err)
	equal(t, "workspaces left in the org", got, []string{})
	got, err = s.ListMemberWorkspaces(ctx, o2.ID, a.ID)
	must(t, err)
	equal(t, "workspaces in the other org", got, []string{w3.ID})
	seats, err := s.GetWorkspaceSeats(ctx, w1.ID)
	must(t, err)
	equal(t, "seats of w1", seats.Members, 1)

	revoked := func(k store.APIKey) time.Time {
		t.Helper()
		got, err := s.GetAPIKey(ctx, k.ID)
		must(t, err)
		return got.RevokedAt
	}
	equal(t, "key in the org", revoked(keyHere), ts(at))
	equal(t, "key revoked before", revoked(keyRevoked), ts(earlier))
	equal(t, "key in the other org", revoked(keyElsewhere), time.Time{})
	equal(t, "other member's key", revoked(keyOfB), time.Time{})
	_, err = s.GetOrgMember(ctx, o2.ID, a.ID)
	must(t, err)
	_, err = s.GetOrgMember(ctx, o.ID, b.ID)
	must(t, err)

	wantCode(t, s.RemoveOrgMember(ctx, o.ID, a.ID, at), errdefs.ErrNotFound, "org_member_not_found")
	wantCode(t, s.RemoveOrgMember(ctx, o.ID, c.ID, at), errdefs.ErrNotFound, "org_member_not_found")
}

func testScopedAPIKeys(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	o, o2 := f.org(), f.org()
	w := f.workspace(o)
	u, v := f.user(nil), f.user(nil)

	install := f.apiKey(nil, nil)
	narrow := f.apiKey(&o, func(k *store.APIKey) {
		k.UserID, k.WorkspaceID, k.Role = u.ID, w.ID, "viewer"
		k.CreatedBy, k.ExpiresAt = "session:"+uuid.NewString(), base.Add(90*24*time.Hour)
	})
	elsewhere := f.apiKey(&o2, func(k *store.APIKey) { k.UserID, k.CreatedBy = u.ID, "key:"+narrow.ID })
	ofV := f.apiKey(&o, func(k *store.APIKey) { k.UserID, k.Role = v.ID, "owner" })
	legacy := f.apiKey(&o, func(k *store.APIKey) { k.Role = "admin" }) // an org key with no user
	newestFirst := []store.APIKey{legacy, ofV, elsewhere, narrow, install}

	t.Run("round trip", func(t *testing.T) {
		for _, k := range newestFirst {
			got, err := s.GetAPIKey(ctx, k.ID)
			must(t, err)
			equal(t, "GetAPIKey", got, normAPIKey(k))
			got, err = s.GetAPIKeyByHash(ctx, k.Hash)
			must(t, err)
			equal(t, "GetAPIKeyByHash", got, normAPIKey(k))
		}
		_, err := s.GetAPIKey(ctx, uuid.NewString())
		wantCode(t, err, errdefs.ErrNotFound, "api_key_not_found")
	})

	t.Run("create errors", func(t *testing.T) { testCreateAPIKeyErrors(t, f, o, w) })

	t.Run("list", func(t *testing.T) {
		pick := func(keep func(store.APIKey) bool) []store.APIKey {
			var out []store.APIKey
			for _, k := range newestFirst {
				if keep(k) {
					out = append(out, normAPIKey(k))
				}
			}
			return out
		}
		cases := []struct {
			name   string
			filter store.APIKeyFilter
			want   []store.APIKey
		}{
			{"all", store.APIKeyFilter{}, pick(func(store.APIKey) bool { return true })},
			{"org", store.APIKeyFilter{OrgID: o.ID}, pick(func(k store.APIKey) bool { return k.OrgID == o.ID })},
			{"user", store.APIKeyFilter{UserID: u.ID}, pick(func(k store.APIKey) bool { return k.UserID == u.ID })},
			{"org and user", store.APIKeyFilter{OrgID: o.ID, UserID: u.ID}, []store.APIKey{normAPIKey(narrow)}},
			{"installation", store.APIKeyFilter{Installation: true}, []store.APIKey{normAPIKey(install)}},
			{"unknown org", store.APIKeyFilter{OrgID: uuid.NewString()}, nil},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				for limit := 1; limit <= len(tc.want)+1; limit++ {
					got := collectPages(t, func(p store.Page) ([]store.APIKey, string, error) { return s.ListAPIKeys(ctx, tc.filter, p) }, limit)
					equal(t, "keys", got, tc.want)
				}
			})
		}
		_, _, err := s.ListAPIKeys(ctx, store.APIKeyFilter{OrgID: o.ID, Installation: true}, store.Page{})
		wantKind(t, err, errdefs.ErrInvalidArgument)
	})

	t.Run("revoke keeps the first time", func(t *testing.T) { testRevokeAPIKey(t, f, ofV, newestFirst) })
}

// testCreateAPIKeyErrors checks that a key of o naming an unknown user or
// workspace, or a workspace (w) without its org, is refused.
func testCreateAPIKeyErrors(t *testing.T, f *fixture, o store.Org, w store.Workspace) {
	s, ctx := f.s, f.ctx
	k := func(edit func(*store.APIKey)) store.APIKey {
		x := store.APIKey{ID: uuid.NewString(), Hash: hashOf(uuid.NewString()), Role: "member", OrgID: o.ID}
		edit(&x)
		return x
	}
	cases := []struct {
		name    string
		key     store.APIKey
		wantErr error
	}{
		{"unknown user", k(func(x *store.APIKey) { x.UserID = uuid.NewString() }), errdefs.ErrFailedPrecondition},
		{"unknown workspace", k(func(x *store.APIKey) { x.WorkspaceID = uuid.NewString() }), errdefs.ErrFailedPrecondition},
		{"workspace without org", k(func(x *store.APIKey) { x.OrgID, x.WorkspaceID = "", w.ID }), errdefs.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantKind(t, s.CreateAPIKey(ctx, tc.key), tc.wantErr) })
	}
}

// testRevokeAPIKey revokes ofV twice and checks that the first time stays,
// and that the revoked key still counts among all keys.
func testRevokeAPIKey(t *testing.T, f *fixture, ofV store.APIKey, newestFirst []store.APIKey) {
	s, ctx := f.s, f.ctx
	first, second := f.next(), f.next()
	got, err := s.RevokeAPIKey(ctx, ofV.ID, first)
	must(t, err)
	want := ofV
	want.RevokedAt = first
	equal(t, "revoked key", got, normAPIKey(want))
	got, err = s.RevokeAPIKey(ctx, ofV.ID, second)
	must(t, err)
	equal(t, "revoked again", got, normAPIKey(want))
	got, err = s.GetAPIKeyByHash(ctx, ofV.Hash)
	must(t, err)
	equal(t, "stored key", got, normAPIKey(want))
	_, err = s.RevokeAPIKey(ctx, uuid.NewString(), first)
	wantCode(t, err, errdefs.ErrNotFound, "api_key_not_found")
	n, err := s.CountAPIKeys(ctx)
	must(t, err)
	equal(t, "revoked keys still count", n, len(newestFirst))
}

// authChallenge stores a wallet's sign-in challenge created and expiring at
// the times given.
func (f *fixture) authChallenge(created, expires time.Time) store.AuthChallenge {
	f.t.Helper()
	c := store.AuthChallenge{
		Nonce: uuid.NewString(), Wallet: "0x52908400098527886e0f7030069857d2e4169ee7",
		Message: "sign in to paddock\nnonce: x", CreatedAt: created, ExpiresAt: expires,
	}
	must(f.t, f.s.CreateAuthChallenge(f.ctx, c))
	return c
}

func normAuthChallenge(c store.AuthChallenge) store.AuthChallenge {
	c.CreatedAt, c.ExpiresAt = ts(c.CreatedAt), ts(c.ExpiresAt)
	return c
}

func testAuthChallenges(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	t0 := base.Add(time.Hour)

	t.Run("consume once", func(t *testing.T) {
		c := f.authChallenge(t0, t0.Add(5*time.Minute))
		got, err := s.GetAuthChallenge(ctx, c.Nonce)
		must(t, err)
		equal(t, "GetAuthChallenge", got, normAuthChallenge(c))
		must(t, s.ConsumeAuthChallenge(ctx, c.Nonce, t0.Add(time.Minute)))
		wantCode(t, s.ConsumeAuthChallenge(ctx, c.Nonce, t0.Add(time.Minute)), errdefs.ErrNotFound, "auth_challenge_not_found")
		_, err = s.GetAuthChallenge(ctx, c.Nonce)
		wantKind(t, err, errdefs.ErrNotFound)
		wantKind(t, s.ConsumeAuthChallenge(ctx, uuid.NewString(), t0), errdefs.ErrNotFound)
	})

	t.Run("expired is not consumable", func(t *testing.T) {
		c := f.authChallenge(t0, t0.Add(5*time.Minute))
		wantKind(t, s.ConsumeAuthChallenge(ctx, c.Nonce, t0.Add(5*time.Minute)), errdefs.ErrNotFound)
		wantKind(t, s.ConsumeAuthChallenge(ctx, c.Nonce, t0.Add(time.Hour)), errdefs.ErrNotFound)
		_, err := s.GetAuthChallenge(ctx, c.Nonce) // still there until a create sweeps it
		must(t, err)
	})

	t.Run("concurrent consumers", func(t *testing.T) {
		c := f.authChallenge(t0, t0.Add(5*time.Minute))
		errs := race(16, func(int) error { return s.ConsumeAuthChallenge(ctx, c.Nonce, t0.Add(time.Minute)) })
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, errdefs.ErrNotFound):
				t.Fatalf("unexpected error: %v", err)
			}
		}
		equal(t, "winners", wins, 1)
	})

	t.Run("create sweeps expired", func(t *testing.T) {
		t1 := t0.Add(24 * time.Hour)
		old := f.authChallenge(t1, t1.Add(time.Minute))
		edge := f.authChallenge(t1, t1.Add(2*time.Minute))
		live := f.authChallenge(t1, t1.Add(10*time.Minute))
		f.authChallenge(t1.Add(2*time.Minute), t1.Add(7*time.Minute)) // edge expires exactly now
		for _, c := range []store.AuthChallenge{old, edge} {
			_, err := s.GetAuthChallenge(ctx, c.Nonce)
			wantKind(t, err, errdefs.ErrNotFound)
		}
		_, err := s.GetAuthChallenge(ctx, live.Nonce)
		must(t, err)
	})

	t.Run("concurrent creates sweep together", func(t *testing.T) { testConcurrentSweeps(t, f) })

	t.Run("create errors", func(t *testing.T) {
		c := f.authChallenge(t0, t0.Add(time.Hour))
		dup := c
		dup.CreatedAt = t0.Add(time.Second)
		wantKind(t, s.CreateAuthChallenge(ctx, dup), errdefs.ErrConflict)
		for _, edit := range []func(*store.AuthChallenge){
			func(x *store.AuthChallenge) { x.Nonce = "" },
			func(x *store.AuthChallenge) { x.Wallet = "" },
			func(x *store.AuthChallenge) { x.Message = "" },
			func(x *store.AuthChallenge) { x.ExpiresAt = time.Time{} },
		} {
			x := store.AuthChallenge{Nonce: uuid.NewString(), Wallet: "0xab", Message: "m", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
			edit(&x)
			wantKind(t, s.CreateAuthChallenge(ctx, x), errdefs.ErrInvalidArgument)
		}
	})
}

func testAuthSessions(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	u := f.user(nil)
	sess := store.AuthSession{ID: uuid.NewString(), UserID: u.ID, CreatedAt: f.next()}
	sess.ExpiresAt = sess.CreatedAt.Add(12 * time.Hour)
	must(t, s.CreateAuthSession(ctx, sess))

	got, err := s.GetAuthSession(ctx, sess.ID)
	must(t, err)
	equal(t, "GetAuthSession", got, normAuthSession(sess))

	first, second := f.next(), f.next()
	must(t, s.RevokeAuthSession(ctx, sess.ID, first))
	must(t, s.RevokeAuthSession(ctx, sess.ID, second))
	got, err = s.GetAuthSession(ctx, sess.ID)
	must(t, err)
	want := sess
	want.RevokedAt = first
	equal(t, "revoked session", got, normAuthSession(want))

	_, err = s.GetAuthSession(ctx, uuid.NewString())
	wantCode(t, err, errdefs.ErrNotFound, "auth_session_not_found")
	wantCode(t, s.RevokeAuthSession(ctx, uuid.NewString(), first), errdefs.ErrNotFound, "auth_session_not_found")

	bad := []struct {
		name    string
		sess    store.AuthSession
		wantErr error
	}{
		{"duplicate id", sess, errdefs.ErrConflict},
		{"unknown user", store.AuthSession{ID: uuid.NewString(), UserID: uuid.NewString(), ExpiresAt: sess.ExpiresAt}, errdefs.ErrFailedPrecondition},
		{"no expiry", store.AuthSession{ID: uuid.NewString(), UserID: u.ID}, errdefs.ErrInvalidArgument},
		{"no user", store.AuthSession{ID: uuid.NewString(), ExpiresAt: sess.ExpiresAt}, errdefs.ErrInvalidArgument},
		{"unknown key", store.AuthSession{ID: uuid.NewString(), KeyID: uuid.NewString(), ExpiresAt: sess.ExpiresAt}, errdefs.ErrFailedPrecondition},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) { wantKind(t, s.CreateAuthSession(ctx, tc.sess), tc.wantErr) })
	}
}

// testKeySessions: a console session opened with an API key keeps the
// key's id, with the key's holder as its user or none (an
// installation-wide key), and a new wallet of the holder leaves it alone
// while it ends the holder's wallet sessions.
func testKeySessions(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	ctx := f.ctx
	u := f.user(func(u *store.User) { u.Wallet = "0x" + strings.Repeat("ab", 20) })
	o := f.org()
	f.orgMember(o, u, "member")
	held := f.apiKey(&o, func(k *store.APIKey) { k.UserID = u.ID })
	inst := f.apiKey(nil, nil)

	open := func(userID, keyID string) store.AuthSession {
		t.Helper()
		sess := store.AuthSession{ID: uuid.NewString(), UserID: userID, KeyID: keyID, CreatedAt: f.next()}
		sess.ExpiresAt = sess.CreatedAt.Add(time.Hour)
		must(t, s.CreateAuthSession(ctx, sess))
		got, err := s.GetAuthSession(ctx, sess.ID)
		must(t, err)
		equal(t, "GetAuthSession", got, normAuthSession(sess))
		return sess
	}
	bykey := open(u.ID, held.ID)
	open("", inst.ID)
	wallet := open(u.ID, "")

	u.Wallet = "0x" + strings.Repeat("cd", 20)
	must(t, s.UpdateUser(ctx, u))
	got, err := s.GetAuthSession(ctx, wallet.ID)
	must(t, err)
	if got.RevokedAt.IsZero() {
		t.Fatalf("a new wallet left the wallet session %+v", got)
	}
	got, err = s.GetAuthSession(ctx, bykey.ID)
	must(t, err)
	equal(t, "key session after a new wallet", got, normAuthSession(bykey))
}
