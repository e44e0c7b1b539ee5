package access

import (
	"context"

	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// Wallet sign-in (auth.SignIn): a challenge, a signed answer that opens a
// session, and signing out.

var errNoSignIn = errdefs.NotImplemented("sign_in_not_configured", "this server does not offer wallet sign-in")

// Challenge starts a wallet sign-in for address.
func (s *Service) Challenge(ctx context.Context, address string) (store.AuthChallenge, error) {
	if s.signin == nil {
		return store.AuthChallenge{}, errNoSignIn
	}
	return s.signin.Challenge(ctx, address)
}

// OpenSession answers a challenge with its signature and opens a session;
// it returns the session token, shown once.
func (s *Service) OpenSession(ctx context.Context, nonce, signature string) (string, store.AuthSession, store.User, error) {
	if s.signin == nil {
		return "", store.AuthSession{}, store.User{}, errNoSignIn
	}
	if nonce == "" || len(nonce) > 64 {
		return "", store.AuthSession{}, store.User{}, errdefs.InvalidArgument("invalid_nonce", "nonce is the one a challenge gave")
	}
	return s.signin.Session(ctx, nonce, signature)
}

// SignOut ends p's session.
func (s *Service) SignOut(ctx context.Context, p Principal) error {
	if p.SessionID == "" || s.signin == nil {
		return errdefs.InvalidArgument("not_a_session", "sign out with the session token itself; revoke an API key with DELETE …/keys/{key_id}")
	}
	return s.signin.Revoke(ctx, p.SessionID)
}
