package tenancy

import (
	"context"

	"github.com/google/uuid"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// JoinOrg makes a user a member of an org, with the member role, unless
// they are one already. mayJoin runs only when they are not; its error
// refuses the join and is returned as it is.
func (s *Service) JoinOrg(ctx context.Context, orgID, userID string, mayJoin func() error) error {
	_, err := s.store.GetOrgMember(ctx, orgID, userID)
	if err == nil || !errdefs.IsNotFound(err) {
		return err
	}
	if err := mayJoin(); err != nil {
		return err
	}
	om := store.OrgMember{ID: uuid.NewString(), OrgID: orgID, UserID: userID, Role: string(auth.RoleMember), CreatedAt: s.now()}
	if err := s.store.AddOrgMember(ctx, om); err != nil && !errdefs.IsConflict(err) {
		return err
	}
	return nil
}
