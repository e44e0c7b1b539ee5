package access

import (
	"context"
	"errors"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// EnvdTokens reports whether the service issues and takes envd access
// tokens for the E2B-compatible surface (it has a sign-in key to seal
// them with).
func (s *Service) EnvdTokens() bool { return s.signin != nil }

// IssueEnvdToken seals the access token an e2b SDK sends to envd for rt
// as p (auth.EnvdClaims): it lives no longer than p's credential and
// p's access to rt (Service.EnvdToken). ok is false when the service has
// no sign-in key.
func (s *Service) IssueEnvdToken(p Principal, rt store.Runtime) (token string, ok bool) {
	if s.signin == nil {
		return "", false
	}
	return auth.SealEnvd(s.signin.Key, auth.EnvdClaims{RuntimeID: rt.ID, Credential: p.Presented()}), true
}

// EnvdToken returns the principal an envd access token for rt acts for:
// its maker, whose credential must still be good and who must still
// reach rt (Member). A refusal is unauthenticated, with an auth.Refusal
// "bad_envd_token" first in its chain; a failure to decide (a busy
// store) is returned as it is.
func (s *Service) EnvdToken(ctx context.Context, token string, rt store.Runtime) (Principal, error) {
	refused := &auth.Refusal{Reason: "bad_envd_token"}
	if s.signin == nil {
		return Principal{}, errdefs.Unauthenticated("invalid_access_token", "%v", auth.ErrBadEnvdToken).WithCause(refused)
	}
	claims, err := auth.OpenEnvd(s.signin.Key, token, rt.ID)
	if err != nil {
		return Principal{}, errdefs.Unauthenticated("invalid_access_token", "%v", err).WithCause(refused)
	}
	maker, err := s.Reverify(ctx, claims.Credential)
	if err == nil {
		_, err = s.Authorize(ctx, maker, Member, RuntimeTarget(rt))
	}
	if err != nil && RefusalOf(err) == "" {
		return Principal{}, err
	}
	if err != nil {
		return Principal{}, errdefs.Unauthenticated("invalid_access_token", "the access token's maker no longer has access").WithCause(errors.Join(refused, err))
	}
	return maker, nil
}

// EnvdTokenMaker returns the maker of an envd access token for
// runtimeID, whose credential must still be good, without asking whether
// it reaches the runtime: for a runtime that is no longer there, where
// the E2B-compatible surface tells the token's holder, and no one else,
// that the sandbox is gone. Refusals are EnvdToken's.
func (s *Service) EnvdTokenMaker(ctx context.Context, token, runtimeID string) (Principal, error) {
	refused := &auth.Refusal{Reason: "bad_envd_token"}
	if s.signin == nil {
		return Principal{}, errdefs.Unauthenticated("invalid_access_token", "%v", auth.ErrBadEnvdToken).WithCause(refused)
	}
	claims, err := auth.OpenEnvd(s.signin.Key, token, runtimeID)
	if err != nil {
		return Principal{}, errdefs.Unauthenticated("invalid_access_token", "%v", err).WithCause(refused)
	}
	maker, err := s.Reverify(ctx, claims.Credential)
	if err != nil && RefusalOf(err) == "" {
		return Principal{}, err
	}
	if err != nil {
		return Principal{}, errdefs.Unauthenticated("invalid_access_token", "the access token's maker no longer has access").WithCause(errors.Join(refused, err))
	}
	return maker, nil
}
