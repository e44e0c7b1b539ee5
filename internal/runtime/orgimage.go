package runtime

import (
	"context"

	"github.com/paddockhq/paddock/internal/errdefs"
)

// OrgImagePrefix begins the reference of every image built for an org
// (paddock-org/<org id>/<template>:<build id>). Such an image is allowed
// only by its org's own allow-list (store.TemplateBuildQueries'
// org images), whatever the installation's allow-list says: no other
// org's runtime, template or build may name it.
const OrgImagePrefix = "paddock-org/"

// checkOrgImage refuses an org image that is not on orgID's allow-list.
func (s *Service) checkOrgImage(ctx context.Context, orgID, image string) error {
	if orgID != "" {
		ok, err := s.store.OrgImageAllowed(ctx, orgID, image)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return errdefs.InvalidArgument(CodeImageNotAllowed, "image %q is not on this org's allow-list (an image built for an org is that org's alone)", image)
}

// CheckImage refuses an image org orgID may not name on provider
// providerName: one outside the installation's allow-list and the org's
// own, or a snapshot (image_not_allowed).
func (s *Service) CheckImage(ctx context.Context, orgID, providerName, image string) error {
	return s.checkImage(ctx, orgID, providerName, image)
}
