package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Invitations (migration 0010). Emails and wallets are stored lowercase.

const resInvitation resource = "invitation"

const invitationColumns = "id, org_id, email, wallet, role, inviter_id, state, created_at, expires_at, decided_at"

func scanInvitation(sc rowScanner) (store.Invitation, error) {
	var i store.Invitation
	var email, wallet sql.NullString
	var created, expires int64
	var decided sql.NullInt64
	if err := sc.Scan(&i.ID, &i.OrgID, &email, &wallet, &i.Role, &i.InviterID, &i.State, &created, &expires, &decided); err != nil {
		return store.Invitation{}, err
	}
	i.Email, i.Wallet = email.String, wallet.String
	i.CreatedAt, i.ExpiresAt = time.UnixMicro(created).UTC(), time.UnixMicro(expires).UTC()
	i.DecidedAt = fromMicros(decided)
	return i, nil
}

// CreateInvitation inserts inv as pending, first recording as expired a
// pending invitation of its org to its address that has expired.
func (q *queries) CreateInvitation(ctx context.Context, inv store.Invitation) error {
	err := required(resInvitation, "id", inv.ID, "org id", inv.OrgID, "role", inv.Role, "inviter id", inv.InviterID)
	if err != nil {
		return err
	}
	inv.Email, inv.Wallet = strings.ToLower(inv.Email), strings.ToLower(inv.Wallet)
	if (inv.Email == "") == (inv.Wallet == "") {
		return errdefs.InvalidArgument("invalid_invitation", "an invitation is to an email address or a wallet address, exactly one")
	}
	created := orNow(inv.CreatedAt)
	if !inv.ExpiresAt.After(created) {
		return errdefs.InvalidArgument("invalid_invitation", "an invitation expires after it is made")
	}
	return q.atomic(ctx, func(q *queries) error {
		_, err := q.w.ExecContext(ctx, `UPDATE invitations SET state = 'expired', decided_at = expires_at
			WHERE org_id = ? AND (email = ? OR wallet = ?) AND state = 'pending' AND expires_at <= ?`,
			inv.OrgID, inv.Email, inv.Wallet, micros(created))
		if err != nil {
			return classify("expire invitations", resInvitation, err)
		}
		_, err = q.w.ExecContext(ctx, "INSERT INTO invitations ("+invitationColumns+") VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, NULL)",
			inv.ID, inv.OrgID, nullString(inv.Email), nullString(inv.Wallet), inv.Role, inv.InviterID, micros(created), micros(inv.ExpiresAt))
		err = classify("create invitation", resInvitation, err)
		if errdefs.IsConflict(err) && !q.invitationExists(ctx, inv.ID) {
			return errdefs.Conflict("already_invited", "this address already has a pending invitation to the org").WithCause(err)
		}
		return err
	})
}

// invitationExists reports whether an invitation with id exists.
func (q *queries) invitationExists(ctx context.Context, id string) bool {
	var ok bool
	err := q.w.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM invitations WHERE id = ?)", id).Scan(&ok)
	return err == nil && ok
}

// GetInvitation returns the invitation with id.
func (q *queries) GetInvitation(ctx context.Context, id string) (store.Invitation, error) {
	i, err := scanInvitation(q.r.QueryRowContext(ctx, "SELECT "+invitationColumns+" FROM invitations WHERE id = ?", id))
	return i, classify("get invitation", resInvitation, err)
}

// ListInvitations lists the invitations f selects, newest first.
func (q *queries) ListInvitations(ctx context.Context, f store.InvitationFilter, page store.Page) ([]store.Invitation, string, error) {
	var where []string
	var args []any
	if f.OrgID != "" {
		where, args = append(where, "org_id = ?"), append(args, f.OrgID)
	}
	var addr []string
	for _, c := range []struct{ column, value string }{{"email", f.Email}, {"wallet", f.Wallet}} {
		if c.value != "" {
			addr, args = append(addr, c.column+" = ?"), append(args, strings.ToLower(c.value))
		}
	}
	if len(addr) > 0 {
		where = append(where, "("+strings.Join(addr, " OR ")+")")
	}
	if !f.PendingAt.IsZero() {
		where, args = append(where, "state = 'pending' AND expires_at > ?"), append(args, micros(f.PendingAt))
	}
	return listing[store.Invitation]{
		op:     "list invitations",
		res:    resInvitation,
		from:   "SELECT " + invitationColumns + " FROM invitations",
		where:  where,
		args:   args,
		newest: true,
		scan:   scanInvitation,
		key:    func(i store.Invitation) (time.Time, string) { return i.CreatedAt, i.ID },
	}.run(ctx, q.r, page)
}

// CountPendingInvitations counts orgID's invitations pending at at.
func (q *queries) CountPendingInvitations(ctx context.Context, orgID string, at time.Time) (int, error) {
	var n int
	err := q.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM invitations WHERE org_id = ? AND state = 'pending' AND expires_at > ?",
		orgID, micros(at)).Scan(&n)
	return n, classify("count invitations", resInvitation, err)
}

// DecideInvitation moves the pending invitation id to state at at.
func (q *queries) DecideInvitation(ctx context.Context, id, state string, at time.Time) error {
	switch state {
	case store.InvitationAccepted, store.InvitationDeclined, store.InvitationRevoked, store.InvitationExpired:
	default:
		return errdefs.InvalidArgument("invalid_invitation", "%q is not a state an invitation moves to", state)
	}
	r, err := q.w.ExecContext(ctx, "UPDATE invitations SET state = ?, decided_at = ? WHERE id = ? AND state = 'pending'",
		state, micros(orNow(at)), id)
	if err != nil {
		return classify("decide invitation", resInvitation, err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		if err == nil && q.invitationExists(ctx, id) {
			return errdefs.Conflict("invitation_decided", "the invitation is no longer pending")
		}
		return classify("decide invitation", resInvitation, orNoRows(err))
	}
	return nil
}

// RevokeInvitationsBy revokes inviterID's pending invitations to orgID.
func (q *queries) RevokeInvitationsBy(ctx context.Context, orgID, inviterID string, at time.Time) (int, error) {
	r, err := q.w.ExecContext(ctx, "UPDATE invitations SET state = 'revoked', decided_at = ? WHERE org_id = ? AND inviter_id = ? AND state = 'pending'",
		micros(orNow(at)), orgID, inviterID)
	if err != nil {
		return 0, classify("revoke invitations", resInvitation, err)
	}
	n, err := r.RowsAffected()
	return int(n), wrap("revoke invitations", err)
}
