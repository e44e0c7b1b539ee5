package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/sqlite/litedb"
)

// Invitations (migration 0010). Emails and wallets are stored lowercase.

const resInvitation = dialect.Invitation

func toInvitation(i litedb.Invitation) store.Invitation {
	return store.Invitation{
		ID: i.ID, OrgID: i.OrgID, Email: fromOptString(i.Email), Wallet: fromOptString(i.Wallet),
		Role: i.Role, InviterID: i.InviterID, State: i.State,
		CreatedAt: fromMicro(i.CreatedAt), ExpiresAt: fromMicro(i.ExpiresAt), DecidedAt: fromOptTime(i.DecidedAt),
	}
}

// CreateInvitation inserts inv as pending, first recording as expired a
// pending invitation of its org to its address that has expired.
func (q *queries) CreateInvitation(ctx context.Context, inv store.Invitation) error {
	inv.CreatedAt = orNow(inv.CreatedAt)
	inv, err := dialect.CheckInvitation(inv)
	if err != nil {
		return err
	}
	email, wallet := optString(inv.Email), optString(inv.Wallet)
	return q.atomic(ctx, func(q *queries) error {
		err := q.wq.ExpireInvitationsTo(ctx, litedb.ExpireInvitationsToParams{
			OrgID: inv.OrgID, Email: email, Wallet: wallet, At: micros(inv.CreatedAt),
		})
		if err != nil {
			return classify("expire invitations", resInvitation, err)
		}
		err = classify("create invitation", resInvitation, q.wq.CreateInvitation(ctx, litedb.CreateInvitationParams{
			ID: inv.ID, OrgID: inv.OrgID, Email: email, Wallet: wallet, Role: inv.Role, InviterID: inv.InviterID,
			CreatedAt: micros(inv.CreatedAt), ExpiresAt: micros(inv.ExpiresAt),
		}))
		if errdefs.IsConflict(err) && !q.invitationExists(ctx, inv.ID) {
			return dialect.AlreadyInvited(err)
		}
		return err
	})
}

// invitationExists reports whether an invitation with id exists.
func (q *queries) invitationExists(ctx context.Context, id string) bool {
	ok, err := q.wq.InvitationExists(ctx, id)
	return err == nil && ok
}

// GetInvitation returns the invitation with id.
func (q *queries) GetInvitation(ctx context.Context, id string) (store.Invitation, error) {
	i, err := q.rq.GetInvitation(ctx, id)
	return toInvitation(i), classify("get invitation", resInvitation, err)
}

// ListInvitations lists the invitations f selects, newest first.
func (q *queries) ListInvitations(ctx context.Context, f store.InvitationFilter, page store.Page) ([]store.Invitation, string, error) {
	return listPage(ctx, "list invitations", resInvitation, page,
		func(ctx context.Context, k keyset) ([]litedb.Invitation, error) {
			return q.listInvitations(ctx, f, k)
		},
		total(toInvitation), func(i store.Invitation) (time.Time, string) { return i.CreatedAt, i.ID })
}

// listInvitations runs the query of f's scope (an org's invitations, an
// address's, or all), each of which reads its own index.
func (q *queries) listInvitations(ctx context.Context, f store.InvitationFilter, k keyset) ([]litedb.Invitation, error) {
	email, wallet := optString(strings.ToLower(f.Email)), optString(strings.ToLower(f.Wallet))
	pending := optTime(f.PendingAt)
	switch {
	case f.OrgID != "":
		return q.rq.ListOrgInvitations(ctx, litedb.ListOrgInvitationsParams{
			OrgID: f.OrgID, Email: email, Wallet: wallet, PendingAt: pending, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
		})
	case email != nil || wallet != nil:
		return q.rq.ListInvitationsTo(ctx, litedb.ListInvitationsToParams{
			Email: email, Wallet: wallet, PendingAt: pending, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
		})
	}
	return q.rq.ListInvitations(ctx, litedb.ListInvitationsParams{PendingAt: pending, BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch})
}

// CountPendingInvitations counts orgID's invitations pending at at.
func (q *queries) CountPendingInvitations(ctx context.Context, orgID string, at time.Time) (int, error) {
	n, err := q.rq.CountPendingInvitations(ctx, litedb.CountPendingInvitationsParams{OrgID: orgID, At: micros(at)})
	return int(n), classify("count invitations", resInvitation, err)
}

// DecideInvitation moves the pending invitation id to state at at (zero:
// now).
func (q *queries) DecideInvitation(ctx context.Context, id, state string, at time.Time) error {
	if err := dialect.CheckInvitationState(state); err != nil {
		return err
	}
	n, err := q.wq.DecideInvitation(ctx, litedb.DecideInvitationParams{State: state, DecidedAt: micros(orNow(at)), ID: id})
	if err != nil {
		return classify("decide invitation", resInvitation, err)
	}
	if n > 0 {
		return nil
	}
	if q.invitationExists(ctx, id) {
		return dialect.InvitationDecided()
	}
	return notFound(resInvitation, nil)
}

// RevokeInvitationsBy revokes inviterID's pending invitations to orgID.
func (q *queries) RevokeInvitationsBy(ctx context.Context, orgID, inviterID string, at time.Time) (int, error) {
	n, err := q.wq.RevokeInvitationsBy(ctx, litedb.RevokeInvitationsByParams{
		DecidedAt: micros(orNow(at)), OrgID: orgID, InviterID: inviterID,
	})
	return int(n), classify("revoke invitations", resInvitation, err)
}
