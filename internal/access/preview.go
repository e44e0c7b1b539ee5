package access

import (
	"context"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// DefaultPreviewTTL is how long a preview token lives unless asked
// otherwise; auth.MaxPreviewTTL bounds it.
const DefaultPreviewTTL = time.Hour

// PreviewTokens reports whether the service issues and takes preview
// tokens (it has a sign-in key to seal them with).
func (s *Service) PreviewTokens() bool { return s.signin != nil }

// PreviewToken returns the principal a preview token for port of rt acts
// for: its maker, whose credential must still be good and who must still
// reach rt (Member). rt is zero for a runtime that does not exist, for
// which no token opens. A refusal is unauthenticated, with an
// auth.Refusal "bad_preview_token" first in its chain; a failure to
// decide (a busy store) is returned as it is.
func (s *Service) PreviewToken(ctx context.Context, token string, rt store.Runtime, port int) (Principal, string, error) {
	refused := &auth.Refusal{Reason: "bad_preview_token"}
	if s.signin == nil {
		return Principal{}, "", errdefs.Unauthenticated("invalid_preview_token", "%v", auth.ErrBadPreviewToken).WithCause(refused)
	}
	claims, err := auth.OpenPreview(s.signin.Key, token, rt.ID, port, s.clock())
	if err != nil {
		return Principal{}, "", errdefs.Unauthenticated("invalid_preview_token", "%v", err).WithCause(refused)
	}
	maker, err := s.Reverify(ctx, claims.Credential)
	if err == nil {
		_, err = s.Authorize(ctx, maker, Member, RuntimeTarget(rt))
	}
	if err != nil && RefusalOf(err) == "" {
		// A store that does not answer decides nothing.
		return Principal{}, "", err
	}
	if err != nil {
		return Principal{}, "", errdefs.Unauthenticated("invalid_preview_token", "the preview token's maker no longer has access").WithCause(errors.Join(refused, err))
	}
	return maker, claims.Credential, nil
}
