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

// Races on identity records that one writer at a time never shows: on a
// database with many writers, unique keys and conditional writes must
// still let exactly one of concurrent callers through, and tell the others
// why in the same codes as a lone caller gets.

// raceWidth is how many callers each identity race runs at once.
const raceWidth = 8

// oneWins checks that exactly one of errs is nil and every other is kind
// with code.
func oneWins(t *testing.T, errs []error, kind error, code string) {
	t.Helper()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
			continue
		}
		wantCode(t, err, kind, code)
	}
	if won != 1 {
		t.Fatalf("%d of %d concurrent callers won, want 1: %v", won, len(errs), errs)
	}
}

// testConcurrentUserCreates creates users with one email address (in
// different cases) at once: one is stored, the rest find it taken.
func testConcurrentUserCreates(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	users := make([]store.User, raceWidth)
	for i := range users {
		email := "racer@example.com"
		if i%2 == 1 {
			email = strings.ToUpper(email)
		}
		users[i] = store.User{ID: uuid.NewString(), Email: email, CreatedAt: f.next()}
	}
	errs := race(raceWidth, func(i int) error { return s.CreateUser(ctx, users[i]) })
	oneWins(t, errs, errdefs.ErrConflict, "email_taken")
	got, err := s.GetUserByEmail(ctx, "racer@example.com")
	must(t, err)
	winner := users[0]
	for i, err := range errs {
		if err == nil {
			winner = users[i]
		}
	}
	equal(t, "the stored user", got.ID, winner.ID)
}

// testConcurrentMembership adds one user to an org from many callers at
// once, then removes it from many: one of each wins.
func testConcurrentMembership(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	o, u := f.org(), f.user(nil)
	ms := make([]store.OrgMember, raceWidth)
	for i := range ms {
		ms[i] = store.OrgMember{ID: uuid.NewString(), OrgID: o.ID, UserID: u.ID, Role: "member", CreatedAt: f.next()}
	}
	errs := race(raceWidth, func(i int) error { return s.AddOrgMember(ctx, ms[i]) })
	oneWins(t, errs, errdefs.ErrConflict, "member_exists")
	at := f.next()
	errs = race(raceWidth, func(int) error { return s.RemoveOrgMember(ctx, o.ID, u.ID, at) })
	oneWins(t, errs, errdefs.ErrNotFound, "org_member_not_found")
	_, err := s.GetOrgMember(ctx, o.ID, u.ID)
	wantKind(t, err, errdefs.ErrNotFound)
}

// testConcurrentCreates invites one address, whose pending invitation has
// expired, from many callers at once: the expired one is recorded as
// expired once, one new invitation is pending, and the rest are told the
// address is already invited.
func (w *invitationWorld) testConcurrentCreates(t *testing.T) {
	f, s, ctx := w.f, w.s, w.f.ctx
	old := f.invitation(w.o, w.admin, "crowd@example.com")
	must(t, s.CreateInvitation(ctx, old))
	invs := make([]store.Invitation, raceWidth)
	for i := range invs {
		invs[i] = f.invitation(w.o, w.admin, "crowd@example.com")
		invs[i].CreatedAt, invs[i].ExpiresAt = old.ExpiresAt, old.ExpiresAt.Add(time.Hour)
	}
	errs := race(raceWidth, func(i int) error { return s.CreateInvitation(ctx, invs[i]) })
	oneWins(t, errs, errdefs.ErrConflict, "already_invited")
	got, err := s.GetInvitation(ctx, old.ID)
	must(t, err)
	if got.State != store.InvitationExpired || !got.DecidedAt.Equal(ts(old.ExpiresAt)) {
		t.Fatalf("the old one: %+v", got)
	}
	pending, _, err := s.ListInvitations(ctx, store.InvitationFilter{OrgID: w.o.ID, Email: "crowd@example.com", PendingAt: old.ExpiresAt}, store.Page{})
	must(t, err)
	equal(t, "pending invitations to the address", len(pending), 1)
}

// testConcurrentSweeps creates challenges from many callers at once,
// each of which sweeps the same expired ones: every create succeeds and
// the expired challenges are gone.
func testConcurrentSweeps(t *testing.T, f *fixture) {
	s, ctx := f.s, f.ctx
	t0 := base.Add(48 * time.Hour)
	var expired []store.AuthChallenge
	for i := range 2 * raceWidth {
		expired = append(expired, f.authChallenge(t0, t0.Add(time.Duration(i+1)*time.Second)))
	}
	later := t0.Add(time.Hour)
	fresh := make([]store.AuthChallenge, raceWidth)
	for i := range fresh {
		fresh[i] = store.AuthChallenge{Nonce: uuid.NewString(), Wallet: "0xab", Message: "m", CreatedAt: later, ExpiresAt: later.Add(time.Hour)}
	}
	errs := race(raceWidth, func(i int) error { return s.CreateAuthChallenge(ctx, fresh[i]) })
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, c := range expired {
		_, err := s.GetAuthChallenge(ctx, c.Nonce)
		wantKind(t, err, errdefs.ErrNotFound)
	}
	for _, c := range fresh {
		_, err := s.GetAuthChallenge(ctx, c.Nonce)
		must(t, err)
	}
}
