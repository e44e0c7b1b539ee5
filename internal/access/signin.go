package access

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errdefs"
	"github.com/paddockhq/paddock/internal/store"
)

// SignIn is what the service offers with wallet sign-in (auth.SignIn): a
// challenge, a signed answer that opens a session, signing out, and
// preview tokens sealed with the sign-in's key. Only UseSignIn makes one,
// so a server without sign-in has none of these to reach.
type SignIn struct {
	s  *Service
	si *auth.SignIn
}

// UseSignIn makes si the service's wallet sign-in (the session tokens
// Authenticate verifies, the key preview tokens are sealed and opened
// with) and returns what it offers. Call it before the service is
// shared.
func (s *Service) UseSignIn(si *auth.SignIn) *SignIn {
	s.signin = si
	return &SignIn{s: s, si: si}
}

// Challenge starts a wallet sign-in for address.
func (w *SignIn) Challenge(ctx context.Context, address string) (store.AuthChallenge, error) {
	return w.si.Challenge(ctx, address)
}

// OpenSession answers a challenge with its signature and opens a session;
// it returns the session token, shown once.
func (w *SignIn) OpenSession(ctx context.Context, nonce, signature string) (string, store.AuthSession, store.User, error) {
	if nonce == "" || len(nonce) > 64 {
		return "", store.AuthSession{}, store.User{}, errdefs.InvalidArgument("invalid_nonce", "nonce is the one a challenge gave")
	}
	return w.si.Session(ctx, nonce, signature)
}

// SignOut ends p's session.
func (w *SignIn) SignOut(ctx context.Context, p Principal) error {
	if p.SessionID == "" {
		return errdefs.InvalidArgument("not_a_session", "sign out with the session token itself; revoke an API key with DELETE …/keys/{key_id}")
	}
	return w.si.Revoke(ctx, p.SessionID)
}

// PreviewTTL reads how long a preview token asked for lives: ttl is a
// duration of at most auth.MaxPreviewTTL, "" for DefaultPreviewTTL.
func (w *SignIn) PreviewTTL(ttl string) (time.Duration, error) {
	if ttl == "" {
		return DefaultPreviewTTL, nil
	}
	d, err := time.ParseDuration(ttl)
	if err != nil || d <= 0 || d > auth.MaxPreviewTTL {
		return 0, errdefs.InvalidArgument("invalid_ttl", "ttl %q must be a positive duration of at most %s", ttl, auth.MaxPreviewTTL)
	}
	return d, nil
}

// IssuePreviewToken seals a token that lets a browser reach port of rt
// for ttl (PreviewTTL) as p: it lives no longer than p's credential and
// access (Service.PreviewToken).
func (w *SignIn) IssuePreviewToken(p Principal, rt store.Runtime, port int, ttl time.Duration) (string, time.Time) {
	exp := w.s.now().Add(ttl)
	return auth.SealPreview(w.si.Key, auth.PreviewClaims{RuntimeID: rt.ID, Port: port, Expires: exp, Credential: p.Credential()}), exp
}
