package store

import (
	"context"
	"time"
)

// ---------------------------------------------------------------------------
// Invitations
//
// Vocabulary:
//
//   - Invitation: an org admin's offer of a membership, with a role, to
//     whoever holds an email or a wallet address (exactly one). The address
//     need not belong to a user yet: the invitation waits, pending, until
//     the installation admin makes that user, and until it expires.
//   - State: pending until decided; then accepted or declined by the
//     invitee, revoked by an admin of the org (or because its inviter left
//     or lost the admin role), or expired (recorded when another
//     invitation to the same address replaces it). A pending invitation
//     past its ExpiresAt is expired whether or not that is recorded yet.
//   - Inviter: the user who invited. The role the invitee gets is capped
//     by the inviter's role when the invitation is accepted.
// ---------------------------------------------------------------------------

// Invitation states.
const (
	InvitationPending  = "pending"
	InvitationAccepted = "accepted"
	InvitationDeclined = "declined"
	InvitationRevoked  = "revoked"
	InvitationExpired  = "expired"
)

// Invitation is an offer of an org membership.
type Invitation struct {
	ID     string
	OrgID  string
	Email  string // lowercase; exactly one of Email and Wallet is set
	Wallet string // lowercase 0x-prefixed hex
	Role   string
	// InviterID is the user who invited.
	InviterID string
	State     string
	CreatedAt time.Time
	ExpiresAt time.Time
	DecidedAt time.Time // zero while pending
}

// StateAt is the invitation's state at now: a pending one past its expiry
// is expired.
func (i Invitation) StateAt(now time.Time) string {
	if i.State == InvitationPending && !now.Before(i.ExpiresAt) {
		return InvitationExpired
	}
	return i.State
}

// InvitationFilter selects invitations in a listing; empty fields match
// all.
type InvitationFilter struct {
	OrgID string
	// Email and Wallet select the invitations to either address (a
	// user's).
	Email  string
	Wallet string
	// PendingAt, when set, selects the invitations pending and not expired
	// at that time.
	PendingAt time.Time
}

// InvitationQueries keep invitations.
type InvitationQueries interface {
	// CreateInvitation inserts inv as pending. A pending invitation of the
	// same org to the same address that has not expired at inv.CreatedAt
	// is ErrConflict (code already_invited); one that has is recorded as
	// expired first.
	CreateInvitation(ctx context.Context, inv Invitation) error
	GetInvitation(ctx context.Context, id string) (Invitation, error)
	// ListInvitations lists invitations, newest first.
	ListInvitations(ctx context.Context, f InvitationFilter, page Page) ([]Invitation, string, error)
	// CountPendingInvitations counts orgID's invitations pending and not
	// expired at at.
	CountPendingInvitations(ctx context.Context, orgID string, at time.Time) (int, error)
	// DecideInvitation moves a pending invitation to state (accepted,
	// declined, revoked or expired) at at. One that is not pending is
	// ErrConflict (code invitation_decided): of concurrent callers exactly
	// one succeeds.
	DecideInvitation(ctx context.Context, id, state string, at time.Time) error
	// RevokeInvitationsBy revokes at at the pending invitations inviterID
	// made in orgID, and says how many.
	RevokeInvitationsBy(ctx context.Context, orgID, inviterID string, at time.Time) (int, error)
}
