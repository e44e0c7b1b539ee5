package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/store"
	"github.com/paddockhq/paddock/internal/store/dialect"
	"github.com/paddockhq/paddock/internal/store/postgres/pgdb"
)

// Invitations (migration 0010). Emails and wallets are stored lowercase.

const resInvitation = dialect.Invitation

func toInvitation(i pgdb.Invitation) store.Invitation {
	return store.Invitation{
		ID: i.ID, OrgID: i.OrgID, Email: fromOptString(i.Email), Wallet: fromOptString(i.Wallet),
		Role: i.Role, InviterID: i.InviterID, State: i.State,
		CreatedAt: i.CreatedAt.UTC(), ExpiresAt: i.ExpiresAt.UTC(), DecidedAt: fromOptTime(i.DecidedAt),
	}
}

// CreateInvitation inserts inv as pending, first recording as expired a
// pending invitation of its org to its address that has expired. Of
// concurrent invitations to one address the pending-address index lets
// one in.
func (q *queries) CreateInvitation(ctx context.Context, inv store.Invitation) error {
	inv.CreatedAt, inv.ExpiresAt = orNow(inv.CreatedAt), stamp(inv.ExpiresAt)
	inv, err := dialect.CheckInvitation(inv)
	if err != nil {
		return err
	}
	email, wallet := optString(inv.Email), optString(inv.Wallet)
	return q.atomic(ctx, func(q *queries) error {
		err := q.q.ExpireInvitationsTo(ctx, pgdb.ExpireInvitationsToParams{OrgID: inv.OrgID, Email: email, Wallet: wallet, At: inv.CreatedAt})
		if err != nil {
			return classify("expire invitations", resInvitation, err)
		}
		err = q.q.CreateInvitation(ctx, pgdb.CreateInvitationParams{
			ID: inv.ID, OrgID: inv.OrgID, Email: email, Wallet: wallet, Role: inv.Role, InviterID: inv.InviterID,
			CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt,
		})
		switch violated(err) {
		case "invitations_pending_email", "invitations_pending_wallet":
			return dialect.AlreadyInvited(err)
		}
		return classify("create invitation", resInvitation, err)
	})
}

// GetInvitation returns the invitation with id.
func (q *queries) GetInvitation(ctx context.Context, id string) (store.Invitation, error) {
	i, err := q.q.GetInvitation(ctx, id)
	return toInvitation(i), classify("get invitation", resInvitation, err)
}

// ListInvitations lists the invitations f selects, newest first.
func (q *queries) ListInvitations(ctx context.Context, f store.InvitationFilter, page store.Page) ([]store.Invitation, string, error) {
	return listPage(ctx, "list invitations", resInvitation, page,
		func(ctx context.Context, k keyset) ([]pgdb.Invitation, error) {
			return q.q.ListInvitations(ctx, pgdb.ListInvitationsParams{
				OrgID: optString(f.OrgID), Email: optString(strings.ToLower(f.Email)), Wallet: optString(strings.ToLower(f.Wallet)),
				PendingAt: optTime(f.PendingAt), BeforeAt: k.At, BeforeID: k.ID, Lim: k.Fetch,
			})
		},
		toInvitation, func(i store.Invitation) (time.Time, string) { return i.CreatedAt, i.ID })
}

// CountPendingInvitations counts orgID's invitations pending at at.
func (q *queries) CountPendingInvitations(ctx context.Context, orgID string, at time.Time) (int, error) {
	n, err := q.q.CountPendingInvitations(ctx, pgdb.CountPendingInvitationsParams{OrgID: orgID, At: stamp(at)})
	return int(n), classify("count invitations", resInvitation, err)
}

// DecideInvitation moves the pending invitation id to state at at (zero:
// now). One conditional UPDATE: of concurrent decisions the first takes
// the row lock, and the rest, once it commits, find it no longer pending.
func (q *queries) DecideInvitation(ctx context.Context, id, state string, at time.Time) error {
	if err := dialect.CheckInvitationState(state); err != nil {
		return err
	}
	n, err := q.q.DecideInvitation(ctx, pgdb.DecideInvitationParams{State: state, DecidedAt: orNow(at), ID: id})
	if err != nil {
		return classify("decide invitation", resInvitation, err)
	}
	if n > 0 {
		return nil
	}
	exists, err := q.q.InvitationExists(ctx, id)
	if err != nil {
		return classify("decide invitation", resInvitation, err)
	}
	if exists {
		return dialect.InvitationDecided()
	}
	return dialect.NotFound(resInvitation, nil)
}

// RevokeInvitationsBy revokes inviterID's pending invitations to orgID.
func (q *queries) RevokeInvitationsBy(ctx context.Context, orgID, inviterID string, at time.Time) (int, error) {
	n, err := q.q.RevokeInvitationsBy(ctx, pgdb.RevokeInvitationsByParams{DecidedAt: orNow(at), OrgID: orgID, InviterID: inviterID})
	return int(n), classify("revoke invitations", resInvitation, err)
}
