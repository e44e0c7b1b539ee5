package storetest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

func normInvitation(i store.Invitation) store.Invitation {
	i.CreatedAt, i.ExpiresAt, i.DecidedAt = ts(i.CreatedAt), ts(i.ExpiresAt), ts(i.DecidedAt)
	return i
}

// invitation builds (without storing) a pending invitation of o to email
// by inviter, expiring a day after it is made.
func (f *fixture) invitation(o store.Org, inviter store.User, email string) store.Invitation {
	at := f.next()
	return store.Invitation{
		ID: uuid.NewString(), OrgID: o.ID, Email: email, Role: "member", InviterID: inviter.ID,
		State: store.InvitationPending, CreatedAt: at, ExpiresAt: at.Add(24 * time.Hour),
	}
}

func invitationIDs(is []store.Invitation) []string {
	var ids []string
	for _, i := range is {
		ids = append(ids, i.ID)
	}
	return ids
}

// invitationWorld is what the invitation suite's parts share: org o
// (admin invites) and other, and the invitations made by "create" (ann's,
// a wallet's, and ann's to other).
type invitationWorld struct {
	f                            *fixture
	s                            store.Store
	o, other                     store.Org
	admin                        store.User
	ann, bobWallet, annElsewhere store.Invitation
}

// testInvitations runs the invitation suite; its parts run in order on one
// store.
func testInvitations(t *testing.T, s store.Store) {
	f := newFixture(t, s)
	w := &invitationWorld{f: f, s: s, o: f.org(), other: f.org(), admin: f.user(nil)}
	f.orgMember(w.o, w.admin, "admin")
	w.ann = f.invitation(w.o, w.admin, "Ann@Example.com")
	w.bobWallet = f.invitation(w.o, w.admin, "")
	w.bobWallet.Wallet = "0x00000000000000000000000000000000000000AB"
	w.annElsewhere = f.invitation(w.other, w.admin, "ann@example.com")

	t.Run("create", w.testCreate)
	t.Run("list", w.testList)
	t.Run("decide", w.testDecide)
	t.Run("one of concurrent decisions", w.testConcurrentDecisions)
	t.Run("an expired pending invitation is replaced", w.testExpiredReplaced)
	t.Run("one of concurrent replacements", w.testConcurrentCreates)
	t.Run("revoke by inviter", w.testRevokeBy)
}

// testCreate stores ann's, the wallet's and ann's elsewhere, and refuses
// what is not an invitation.
func (w *invitationWorld) testCreate(t *testing.T) {
	f, s, o, admin := w.f, w.s, w.o, w.admin
	bad := func(edit func(*store.Invitation)) store.Invitation {
		i := f.invitation(o, admin, "x@example.com")
		edit(&i)
		return i
	}
	creates := []struct {
		name     string
		inv      store.Invitation
		wantErr  error
		wantCode string
	}{
		{"email", w.ann, nil, ""},
		{"wallet", w.bobWallet, nil, ""},
		{"same address, another org", w.annElsewhere, nil, ""},
		{"same address, pending", f.invitation(o, admin, "ANN@example.com"), errdefs.ErrConflict, "already_invited"},
		{"same id", w.ann, errdefs.ErrConflict, "invitation_exists"},
		{"no address", bad(func(i *store.Invitation) { i.Email = "" }), errdefs.ErrInvalidArgument, "invalid_invitation"},
		{"two addresses", bad(func(i *store.Invitation) { i.Wallet = "0x01" }), errdefs.ErrInvalidArgument, "invalid_invitation"},
		{"no inviter", bad(func(i *store.Invitation) { i.InviterID = "" }), errdefs.ErrInvalidArgument, "invalid_invitation"},
		{"unknown inviter", bad(func(i *store.Invitation) { i.InviterID = uuid.NewString() }), errdefs.ErrFailedPrecondition, "invitation_reference_missing"},
		{"unknown role", bad(func(i *store.Invitation) { i.Role = "root" }), errdefs.ErrInvalidArgument, "invalid_invitation"},
		{"expired when made", bad(func(i *store.Invitation) { i.ExpiresAt = i.CreatedAt }), errdefs.ErrInvalidArgument, "invalid_invitation"},
	}
	for _, tc := range creates {
		t.Run(tc.name, func(t *testing.T) {
			err := s.CreateInvitation(f.ctx, tc.inv)
			if tc.wantErr != nil {
				wantCode(t, err, tc.wantErr, tc.wantCode)
				return
			}
			must(t, err)
			got, err := s.GetInvitation(f.ctx, tc.inv.ID)
			must(t, err)
			want := normInvitation(tc.inv)
			want.Email, want.Wallet = strings.ToLower(want.Email), strings.ToLower(want.Wallet)
			if got != want {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}
	t.Run("get unknown", func(t *testing.T) {
		_, err := s.GetInvitation(f.ctx, uuid.NewString())
		wantKind(t, err, errdefs.ErrNotFound)
	})
}

// testList selects by org, by address and by being pending at a time, in
// one page and in pages of each size.
func (w *invitationWorld) testList(t *testing.T) {
	ann, bobWallet, annElsewhere := w.ann, w.bobWallet, w.annElsewhere
	for _, tc := range []struct {
		name   string
		filter store.InvitationFilter
		want   []string
	}{
		{"org, newest first", store.InvitationFilter{OrgID: w.o.ID}, []string{bobWallet.ID, ann.ID}},
		{"an address, any org", store.InvitationFilter{Email: "ANN@example.com"}, []string{annElsewhere.ID, ann.ID}},
		{"either address", store.InvitationFilter{Email: "ann@example.com", Wallet: bobWallet.Wallet}, []string{annElsewhere.ID, bobWallet.ID, ann.ID}},
		{"pending before expiry", store.InvitationFilter{OrgID: w.o.ID, PendingAt: ann.ExpiresAt.Add(-time.Second)}, []string{bobWallet.ID, ann.ID}},
		{"pending at ann's expiry", store.InvitationFilter{OrgID: w.o.ID, PendingAt: ann.ExpiresAt}, []string{bobWallet.ID}},
		{"all, newest first", store.InvitationFilter{}, []string{annElsewhere.ID, bobWallet.ID, ann.ID}},
		{"all pending at ann's expiry", store.InvitationFilter{PendingAt: ann.ExpiresAt}, []string{annElsewhere.ID, bobWallet.ID}},
		{"an address in an org", store.InvitationFilter{OrgID: w.o.ID, Email: "ann@example.com"}, []string{ann.ID}},
		{"an address pending at ann's expiry", store.InvitationFilter{Email: "ann@example.com", PendingAt: ann.ExpiresAt}, []string{annElsewhere.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is, _, err := w.s.ListInvitations(w.f.ctx, tc.filter, store.Page{})
			must(t, err)
			if got := invitationIDs(is); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for limit := 1; limit <= len(tc.want); limit++ {
				paged := collectPages(t, func(p store.Page) ([]store.Invitation, string, error) {
					return w.s.ListInvitations(w.f.ctx, tc.filter, p)
				}, limit)
				if got := invitationIDs(paged); !slices.Equal(got, tc.want) {
					t.Fatalf("pages of %d: got %v, want %v", limit, got, tc.want)
				}
			}
		})
	}
	t.Run("count pending", func(t *testing.T) {
		for _, tc := range []struct {
			org  store.Org
			at   time.Time
			want int
		}{
			{w.o, ann.ExpiresAt.Add(-time.Second), 2},
			{w.o, ann.ExpiresAt, 1},
			{w.other, ann.ExpiresAt.Add(-time.Second), 1},
			{w.f.org(), ann.CreatedAt, 0},
		} {
			n, err := w.s.CountPendingInvitations(w.f.ctx, tc.org.ID, tc.at)
			must(t, err)
			if n != tc.want {
				t.Errorf("pending in %s at %s: %d, want %d", tc.org.Name, tc.at, n, tc.want)
			}
		}
	})
	t.Run("state at", func(t *testing.T) {
		if got := ann.StateAt(ann.ExpiresAt.Add(-time.Microsecond)); got != store.InvitationPending {
			t.Errorf("before expiry: %s", got)
		}
		if got := ann.StateAt(ann.ExpiresAt); got != store.InvitationExpired {
			t.Errorf("at expiry: %s", got)
		}
	})
}

// testDecide moves a pending invitation once, and no other.
func (w *invitationWorld) testDecide(t *testing.T) {
	f, s, ctx := w.f, w.s, w.f.ctx
	at := f.next()
	must(t, s.DecideInvitation(ctx, w.annElsewhere.ID, store.InvitationDeclined, at))
	got, err := s.GetInvitation(ctx, w.annElsewhere.ID)
	must(t, err)
	if got.State != store.InvitationDeclined || !got.DecidedAt.Equal(ts(at)) {
		t.Fatalf("decided: %+v", got)
	}
	wantCode(t, s.DecideInvitation(ctx, w.annElsewhere.ID, store.InvitationAccepted, at), errdefs.ErrConflict, "invitation_decided")
	wantKind(t, s.DecideInvitation(ctx, uuid.NewString(), store.InvitationAccepted, at), errdefs.ErrNotFound)
	wantCode(t, s.DecideInvitation(ctx, w.ann.ID, store.InvitationPending, at), errdefs.ErrInvalidArgument, "invalid_invitation")
	// Declined, it no longer stands in the way of a new one.
	again := f.invitation(w.other, w.admin, "ann@example.com")
	must(t, s.CreateInvitation(ctx, again))
}

// testConcurrentDecisions: of concurrent decisions exactly one wins.
func (w *invitationWorld) testConcurrentDecisions(t *testing.T) {
	s, ctx := w.s, w.f.ctx
	inv := w.f.invitation(w.o, w.admin, "race@example.com")
	must(t, s.CreateInvitation(ctx, inv))
	states := []string{store.InvitationAccepted, store.InvitationDeclined, store.InvitationRevoked, store.InvitationAccepted}
	errs := make([]error, len(states))
	var wg sync.WaitGroup
	for n, state := range states {
		wg.Go(func() { errs[n] = s.DecideInvitation(context.WithoutCancel(ctx), inv.ID, state, time.Time{}) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errdefs.IsConflict(err):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions won, want 1: %v", won, errs)
	}
}

// testExpiredReplaced: a new invitation to an address replaces its
// expired pending one, recorded as expired.
func (w *invitationWorld) testExpiredReplaced(t *testing.T) {
	s, ctx := w.s, w.f.ctx
	old := w.f.invitation(w.o, w.admin, "late@example.com")
	must(t, s.CreateInvitation(ctx, old))
	renewed := w.f.invitation(w.o, w.admin, "late@example.com")
	renewed.CreatedAt = old.ExpiresAt
	renewed.ExpiresAt = old.ExpiresAt.Add(time.Hour)
	must(t, s.CreateInvitation(ctx, renewed))
	got, err := s.GetInvitation(ctx, old.ID)
	must(t, err)
	if got.State != store.InvitationExpired || !got.DecidedAt.Equal(ts(old.ExpiresAt)) {
		t.Fatalf("the old one: %+v", got)
	}
}

// testRevokeBy revokes an inviter's pending invitations in one org, and
// deleting the inviter deletes them.
func (w *invitationWorld) testRevokeBy(t *testing.T) {
	f, s, ctx := w.f, w.s, w.f.ctx
	o2 := f.org()
	carl, dora := f.user(nil), f.user(nil)
	mine := []store.Invitation{f.invitation(o2, carl, "p@example.com"), f.invitation(o2, carl, "q@example.com")}
	hers := f.invitation(o2, dora, "r@example.com")
	carlsElsewhere := f.invitation(w.other, carl, "s@example.com")
	for _, i := range append(mine, hers, carlsElsewhere) {
		must(t, s.CreateInvitation(ctx, i))
	}
	must(t, s.DecideInvitation(ctx, mine[1].ID, store.InvitationAccepted, time.Time{}))
	n, err := s.RevokeInvitationsBy(ctx, o2.ID, carl.ID, f.next())
	must(t, err)
	if n != 1 {
		t.Fatalf("revoked %d, want 1 (the pending one)", n)
	}
	for id, want := range map[string]string{
		mine[0].ID: store.InvitationRevoked, mine[1].ID: store.InvitationAccepted,
		hers.ID: store.InvitationPending, carlsElsewhere.ID: store.InvitationPending,
	} {
		got, err := s.GetInvitation(ctx, id)
		must(t, err)
		if got.State != want {
			t.Errorf("%s: %s, want %s", id, got.State, want)
		}
	}

	t.Run("deleting the inviter deletes them", func(t *testing.T) {
		eve := f.user(nil)
		inv := f.invitation(w.o, eve, "t@example.com")
		must(t, s.CreateInvitation(ctx, inv))
		must(t, s.DeleteUser(ctx, eve.ID))
		_, err := s.GetInvitation(ctx, inv.ID)
		wantKind(t, err, errdefs.ErrNotFound)
	})
}
